import type { BudgetOver } from './events.js';
import type { ModelClient, ModelRequest } from './model.js';

/** Used for the budget pre-check when count_tokens is unavailable: code tokenises at ~3-4 chars, so 2 over-counts. */
const CONSERVATIVE_CHARS_PER_TOKEN = 2;

/** What the model is asked to do in its last request when nothing says otherwise. */
const ANSWER_NOW = 'Do not call any more tools: answer the question now with what you have found, cite the evidence you have read, and say plainly what you could not check.';

export interface Budget {
  maxUsd: number;
  /** Estimated cost already spent in this run. */
  spentUsd(): number;
  /** Worst-case cost of a request with this prompt and max output; null = unknown price (the CLI refuses that earlier). */
  worstCaseUsd(promptTokens: number, maxOutputTokens: number): number | null;
}

/** The limit that leaves the model one request. */
export type FinalLimit = 'max_turns' | 'max_budget';

interface Limits {
  model: string;
  maxTokens: number;
  maxTurns: number;
  budget?: Budget;
  finishInstruction?: string;
}

export interface BudgetCheck {
  /** Why the request must not be sent (numbers; the front end words them); null when it fits. */
  over: BudgetOver | null;
  /** The request fits, but one more of the same worst case would not: it is the last the budget allows. */
  lastOne: boolean;
}

/**
 * Prices `request` at its worst case (counted prompt, full --max-tokens output). The next request's prompt holds this
 * one's and more, so when two of these no longer fit, this one is the last.
 */
export async function checkBudget(
  budget: Budget,
  limits: Limits & { client: ModelClient },
  request: ModelRequest,
  signal: AbortSignal,
): Promise<BudgetCheck> {
  const counted = await limits.client.countTokens(request, signal);
  const prompt = counted ?? Math.ceil(JSON.stringify(request).length / CONSERVATIVE_CHARS_PER_TOKEN);
  const worst = budget.worstCaseUsd(prompt, limits.maxTokens);
  const spent = budget.spentUsd();
  if (worst === null) return { over: { kind: 'no_price', model: limits.model }, lastOne: false };
  if (spent + worst <= budget.maxUsd) return { over: null, lastOne: spent + 2 * worst > budget.maxUsd };
  if (spent === 0) return { over: firstRequestOverBudget(budget, prompt, limits.maxTokens, worst), lastOne: false };
  return { over: { kind: 'next', spentUsd: spent, nextUsd: worst, promptTokens: prompt, maxTokens: limits.maxTokens }, lastOne: false };
}

/** The note appended to the last user message of the last request a limit allows. */
export function lastRequestNote(limit: FinalLimit, limits: Limits): string {
  const why =
    limit === 'max_turns'
      ? `--max-turns ${limits.maxTurns} allows no request after this one`
      : `--max-budget-usd ${limits.budget?.maxUsd ?? ''} leaves room for no request after this one`;
  return `[spelunk: this is your last request: ${why}. ${limits.finishInstruction ?? ANSWER_NOW}]`;
}

/** The budget cannot cover even the first request: its worst case and the max output tokens that would fit. */
function firstRequestOverBudget(budget: Budget, prompt: number, maxTokens: number, worst: number): BudgetOver {
  const promptOnly = budget.worstCaseUsd(prompt, 0) ?? worst;
  const perToken = (budget.worstCaseUsd(prompt, 1) ?? worst) - promptOnly;
  const fits = perToken > 0 ? Math.floor((budget.maxUsd - promptOnly) / perToken) : 0;
  const base = { kind: 'first' as const, worstUsd: worst, promptTokens: prompt, maxTokens, raiseToUsd: promptOnly + 1000 * perToken };
  // Below ~1,000 output tokens an answer with evidence rarely fits: suggest a budget instead.
  if (fits < 1000) return { ...base, lowerMaxTokens: null };
  return { ...base, lowerMaxTokens: fits >= 10_000 ? Math.floor(fits / 1000) * 1000 : Math.floor(fits / 100) * 100 };
}
