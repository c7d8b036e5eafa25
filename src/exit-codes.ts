import type { StopKind } from './agent/events.js';

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
export interface StopMeaning {
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
