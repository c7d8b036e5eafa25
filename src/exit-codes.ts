import type { BudgetOver, StopFacts, StopKind, StopLimit } from './agent/events.js';
import { groupDigits } from './digits.js';

/** The exit-code contract scripts rely on (README "Exit codes"); nothing else may invent a code. */
export const EXIT = {
  ok: 0,
  /** Runtime, API or tool-infrastructure failure; also a failed read-only check. */
  failure: 1,
  /** Bad flag, bad --dir, missing API key, unknown price with --max-budget-usd. */
  usage: 2,
  /** A limit (turns, budget, timeout) was reached before an answer: fail closed. */
  limit: 3,
  /** Audit verdict fail with findings at or above --fail-on. */
  auditFailed: 4,
  /** Audit verdict inconclusive (or the model never reported). */
  auditInconclusive: 5,
  /** SIGINT / SIGTERM. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Each code in a few words, for the help text: built from EXIT so the two cannot drift apart. */
const EXIT_WORDS: Readonly<Record<keyof typeof EXIT, string>> = {
  ok: 'answered',
  failure: 'runtime/API failure',
  usage: 'usage error',
  limit: 'limit reached',
  auditFailed: 'audit failed',
  auditInconclusive: 'audit inconclusive',
  interrupted: 'interrupted',
};

/** `0 answered · 1 runtime/API failure · …`, every code of the contract in order. */
export const EXIT_SUMMARY = (Object.keys(EXIT) as (keyof typeof EXIT)[]).map((name) => `${EXIT[name]} ${EXIT_WORDS[name]}`).join(' · ');

/**
 * How a run ended, named as Claude Code's result subtypes are, so a script written for `claude -p` reads our stops.
 * The list is closed: a run timeout is `error_during_execution` with `stop_reason: "timeout"` (and exit 3), not a
 * subtype a parser would not know. `interrupted` is spelunk's own (Claude Code writes no result for Ctrl+C).
 */
export type ResultSubtype = 'success' | 'error_max_turns' | 'error_max_budget_usd' | 'error_during_execution' | 'interrupted';

/** What one way of ending means for every front end: the exit code, the result subtype, and the words for it. */
interface StopMeaning {
  exit: ExitCode;
  /** The json result's subtype, in the vocabulary other agent CLIs use (a closed list parsers know). */
  subtype: ResultSubtype;
  /** The result object's error message when the loop gave none. */
  message: string;
  /** The line the text view prints when the loop gave none (what to do next). */
  view: string;
}

/**
 * The one table from how a question ended to what it means. Limits fail closed (3): the user's caps and the model's
 * own size limits all end a run before a full answer; a run timeout is `error_during_execution` with
 * `stop_reason: "timeout"`, not a subtype a parser would not know.
 */
export const STOPS: Readonly<Record<StopKind, StopMeaning>> = {
  end_turn: { exit: EXIT.ok, subtype: 'success', message: 'answered', view: '' },
  max_tokens: {
    exit: EXIT.limit,
    subtype: 'error_during_execution',
    message: 'the answer was cut off at --max-tokens',
    view: 'warning: the answer was cut at --max-tokens; raise it to get the rest',
  },
  refusal: { exit: EXIT.failure, subtype: 'error_during_execution', message: 'the model refused to answer', view: 'the model declined to answer this question' },
  context_exceeded: {
    exit: EXIT.limit,
    subtype: 'error_during_execution',
    message: "the conversation outgrew the model's context window",
    view: 'the conversation no longer fits the context window; use /clear or ask a narrower question',
  },
  max_turns: {
    exit: EXIT.limit,
    subtype: 'error_max_turns',
    message: 'stopped at --max-turns before an answer',
    view: 'stopped at --max-turns before an answer; raise it or ask a narrower question',
  },
  max_budget: {
    exit: EXIT.limit,
    subtype: 'error_max_budget_usd',
    message: 'stopped before a request that could exceed --max-budget-usd',
    view: 'stopped at the budget limit before an answer',
  },
  timeout: { exit: EXIT.limit, subtype: 'error_during_execution', message: 'stopped at --timeout before an answer', view: 'stopped: the run timed out before an answer' },
  aborted: { exit: EXIT.interrupted, subtype: 'interrupted', message: 'interrupted', view: 'interrupted' },
  api_error: { exit: EXIT.failure, subtype: 'error_during_execution', message: 'the Messages API request failed', view: 'error: the API request failed' },
};

/**
 * Who words a stop: the CLI (one-shot and the REPL, which share the command line's flags) names its flags; MCP names
 * its tool parameters and the server's own limits, since the agent calling it has no flags and no REPL.
 */
export type FrontEnd = 'cli' | 'mcp';

/** Each limit as a front end lets its user change it. */
const LIMIT_NAMES: Readonly<Record<FrontEnd, Readonly<Record<StopLimit, (value: number | undefined) => string>>>> = {
  cli: {
    maxTurns: (v) => `--max-turns ${v ?? ''}`,
    maxTokens: (v) => `--max-tokens ${v ?? ''}`,
    timeoutMs: (v) => (v ? `--timeout ${v / 1000} (seconds for the whole run)` : '--timeout'),
    maxBudgetUsd: (v) => `--max-budget-usd ${v ?? ''}`,
  },
  mcp: {
    maxTurns: (v) => `max_turns ${v ?? ''}`,
    maxTokens: (v) => `the server's limit of ${v ?? ''} output tokens`,
    timeoutMs: (v) => (v ? `the server's time limit (${v / 1000} seconds)` : "the server's time limit"),
    maxBudgetUsd: (v) => `the call's budget ($${v ?? ''})`,
  },
};

/**
 * The one line that explains how a question ended, in `front`'s terms (undefined for a clean answer): the loop's
 * `done` carries only data (stop, limit, value), so the CLI can name `--max-turns` and MCP `max_turns` for the same stop.
 */
export function stopMessage(facts: StopFacts, front: FrontEnd): string | undefined {
  const name = (limit: StopLimit): string => LIMIT_NAMES[front][limit](facts.value);
  const cli = front === 'cli';
  switch (facts.stop) {
    case 'end_turn':
      return undefined;
    case 'aborted':
      return 'cancelled';
    case 'api_error':
      return facts.error ?? STOPS.api_error.message;
    case 'refusal':
      return 'the model declined to answer this question; rephrase it (the question was dropped from the conversation)';
    case 'context_exceeded':
      if (facts.error !== undefined) return facts.error;
      return cli
        ? "the conversation filled the model's context window; start a new one (/clear in the REPL) or ask a narrower question"
        : "the conversation filled the model's context window; start a new one with ask, or ask a narrower question";
    case 'max_tokens':
      return cli
        ? `the answer was cut at ${name('maxTokens')} output tokens; raise --max-tokens or ask for less`
        : `the answer was cut at ${name('maxTokens')}; ask for less`;
    case 'timeout':
      if (!cli) return `stopped: the call reached ${name('timeoutMs')} before an answer; ask a narrower question`;
      return `stopped: the run reached ${name('timeoutMs')} before an answer; raise it${facts.value ? timeoutExample(facts.value) : ''}`;
    case 'max_turns':
      if (facts.answered) return answeredAtLimit(name('maxTurns'), cli ? 'raise --max-turns' : 'raise max_turns');
      const raise = cli ? '--max-turns' : 'max_turns';
      return `stopped after ${plural(facts.requests ?? facts.turns, 'model request')} (${name('maxTurns')}) before a final answer; raise ${raise} or ask a narrower question`;
    case 'max_budget':
      if (facts.answered) return answeredAtLimit(name('maxBudgetUsd'), 'raise the budget');
      return facts.budget ? budgetWords(facts.budget, name('maxBudgetUsd'), front) : STOPS.max_budget.message;
  }
}

function answeredAtLimit(limit: string, raise: string): string {
  return `answered with what it had in the last request ${limit} allowed, so the answer may be incomplete; ${raise} for a fuller one`;
}

/** Why the budget stopped a question before a request; `budget` is the front end's name for it. */
function budgetWords(over: BudgetOver, budget: string, front: FrontEnd): string {
  const cli = front === 'cli';
  if (over.kind === 'no_price') {
    return `no price is known for ${over.model}, so ${cli ? '--max-budget-usd' : "the call's budget"} cannot be enforced`;
  }
  const request = `${groupDigits(over.promptTokens)} prompt tokens ~${usd(over.promptUsd)} + ${groupDigits(over.outputTokens)} output tokens ~${usd(over.outputUsd)}`;
  if (over.kind === 'next') {
    return `stopped before the next request: ~${usd(over.spentUsd)} of ${budget} is spent, and the next needs ~${usd(over.promptUsd + over.outputUsd)} (${request})`;
  }
  const head = `${budget} cannot pay for a first request at this context size (${request})`;
  if (!cli) return `${head}; the server's per-call budget must be at least $${over.raiseToUsd.toFixed(2)}`;
  return `${head}; raise it to at least ${over.raiseToUsd.toFixed(2)}`;
}

/** Dollars with four decimals below a cent, two above. */
function usd(value: number): string {
  return `$${value < 0.01 ? value.toFixed(4) : value.toFixed(2)}`;
}

/** Why a request is the last a limit allows, in `front`'s terms (the loop puts it in the model's last request). */
export function lastRequestWhy(limit: 'max_turns' | 'max_budget', value: number | undefined, front: FrontEnd): string {
  return limit === 'max_turns'
    ? `${LIMIT_NAMES[front].maxTurns(value)} allows no request after this one`
    : `${LIMIT_NAMES[front].maxBudgetUsd(value)} leaves room for no request after this one`;
}

/** A --timeout twice the one that ran out, in the flag's seconds. */
function timeoutExample(ms: number): string {
  return `, e.g. --timeout ${(ms * 2) / 1000}`;
}

/** `1 model request`, `2 model requests`. */
function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
