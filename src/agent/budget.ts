import type { BudgetOver } from './events.js';
import type { ModelClient, ModelRequest } from './model.js';
import { outputTokensFor, requestCostUsd } from './pricing.js';

/** Used for the budget pre-check when count_tokens is unavailable: code tokenises at ~3-4 chars, so 2 over-counts. */
const CONSERVATIVE_CHARS_PER_TOKEN = 2;

/**
 * How long a cache entry is counted on after the response that wrote or read it: the API's default lifetime (5
 * minutes, refreshed by every read) less a margin for the next request's own time on the wire.
 */
export const CACHE_LIFETIME_MS = 4.5 * 60 * 1000;

/** The least output a request is sent with: below it an answer with evidence rarely fits. */
const MIN_OUTPUT_TOKENS = 1_024;

/** Output a request is expected to use before the run has shown any (a tool call or a short answer). */
const RESERVE_FLOOR_TOKENS = 512;

/** What a limit leaves the model: one request. */
export type FinalLimit = 'max_turns' | 'max_budget';

/** Money: the cap and what the run has spent (from the usage the API billed). */
export interface Budget {
  maxUsd: number;
  spentUsd(): number;
}

/** What the prompt cache holds of a conversation: its first `tokens` prompt tokens, read or written at `at` (ms). */
export interface CacheState {
  tokens: number;
  at: number;
}

/** What the run so far says about the next request. */
export interface RunSoFar {
  /** The cache after the latest response; null when nothing is known to be cached (a new or resumed conversation). */
  cache: CacheState | null;
  /** Prompt tokens of the latest request (0: none yet). */
  lastPromptTokens: number;
  /** The most output tokens one response of this conversation used. */
  largestOutputTokens: number;
  now: number;
}

interface Limits {
  model: string;
  maxTokens: number;
}

interface BudgetCheck {
  /** Why the request must not be sent (numbers; the front end words them); null when it can be. */
  over: BudgetOver | null;
  /** It can be sent, but the request after it could not: it is the last the budget allows. */
  lastOne: boolean;
  /** The max_tokens to send it with: the configured one, or less when that is all the budget left can pay for. */
  maxTokens: number;
}

/**
 * Prices `request` as the API will bill it: the prefix the cache holds (within its lifetime) as a read, the rest as
 * a write, and output as the run so far suggests (twice the largest response, at least RESERVE_FLOOR_TOKENS). The
 * request is sent with no more max_tokens than the money left pays for, so the run never spends past the budget
 * (unless the API misses a cache entry it still held). It is the last when the request after it (the prompt grown by
 * this output and another tool round like the last) could not pay for MIN_OUTPUT_TOKENS.
 */
export async function checkBudget(
  budget: Budget,
  limits: Limits & { client: ModelClient },
  request: ModelRequest,
  run: RunSoFar,
  signal: AbortSignal,
): Promise<BudgetCheck> {
  const counted = await limits.client.countTokens(request, signal);
  const prompt = counted ?? Math.ceil(JSON.stringify(request).length / CONSERVATIVE_CHARS_PER_TOKEN);
  const cached = run.cache !== null && run.now - run.cache.at < CACHE_LIFETIME_MS ? run.cache.tokens : 0;
  const cost = (promptTokens: number, cachedTokens: number, outputTokens: number): number | null =>
    requestCostUsd(limits.model, { promptTokens, cachedTokens, outputTokens });
  const promptUsd = cost(prompt, cached, 0);
  if (promptUsd === null) return { over: { kind: 'no_price', model: limits.model }, lastOne: false, maxTokens: limits.maxTokens };
  const spent = budget.spentUsd();
  const affordable = outputTokensFor(limits.model, prompt, budget.maxUsd - spent - promptUsd);
  const minimal = Math.min(MIN_OUTPUT_TOKENS, limits.maxTokens);
  if (affordable < minimal) {
    return { over: overBudget(budget, limits.model, spent, prompt, promptUsd, minimal), lastOne: false, maxTokens: limits.maxTokens };
  }
  const reserve = Math.min(limits.maxTokens, Math.max(RESERVE_FLOOR_TOKENS, 2 * run.largestOutputTokens));
  const round = run.lastPromptTokens > 0 ? Math.max(reserve, prompt - run.lastPromptTokens) : 2 * reserve;
  const thisUsd = cost(prompt, cached, reserve) ?? 0;
  const nextUsd = cost(prompt + round, prompt, minimal) ?? 0;
  return { over: null, lastOne: spent + thisUsd + nextUsd > budget.maxUsd, maxTokens: Math.min(limits.maxTokens, affordable) };
}

/** The note appended to the last user message of the last request a limit allows; `why` is the front end's words. */
export function lastRequestNote(why: string, finishInstruction: string): string {
  return `[spelunk: this is your last request: ${why}. ${finishInstruction}]`;
}

/** What the budget cannot pay for: the prompt at this size and the least output, and (first request) what would do. */
function overBudget(budget: Budget, model: string, spent: number, prompt: number, promptUsd: number, minimal: number): BudgetOver {
  const outputUsd = (requestCostUsd(model, { promptTokens: prompt, cachedTokens: prompt, outputTokens: minimal }) ?? 0)
    - (requestCostUsd(model, { promptTokens: prompt, cachedTokens: prompt, outputTokens: 0 }) ?? 0);
  const facts = { promptTokens: prompt, promptUsd, outputTokens: minimal, outputUsd };
  if (spent > 0) return { kind: 'next', spentUsd: spent, ...facts };
  return { kind: 'first', ...facts, raiseToUsd: raisedBudget(promptUsd + outputUsd, budget.maxUsd) };
}

/** A budget to suggest: `needed` rounded up to the cent, and always above the one given. */
export function raisedBudget(needed: number, given: number): number {
  const cents = Math.ceil(needed * 100 - 1e-9);
  const above = Math.floor(given * 100 + 1e-9) + 1;
  return Math.max(cents, above) / 100;
}
