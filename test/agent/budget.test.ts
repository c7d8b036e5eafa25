import { describe, expect, it } from 'vitest';
import { CACHE_LIFETIME_MS, checkBudget, raisedBudget, type RunSoFar } from '../../src/agent/budget.js';
import type { ModelClient, ModelRequest } from '../../src/agent/model.js';

// claude-sonnet-5-5: input $2/M, 5m write $2.5/M, read $0.2/M, output $10/M.
const MODEL = 'claude-sonnet-5-5';
const REQUEST = { model: MODEL, max_tokens: 16_000, system: [], tools: [], messages: [] } as unknown as ModelRequest;

function counting(tokens: number | null): ModelClient {
  return { countTokens: async () => tokens } as unknown as ModelClient;
}

async function check(opts: { maxUsd: number; spent?: number; prompt: number; run?: Partial<RunSoFar>; maxTokens?: number }) {
  const run: RunSoFar = { cache: null, lastPromptTokens: 0, largestOutputTokens: 0, now: 1_000_000, ...opts.run };
  const budget = { maxUsd: opts.maxUsd, spentUsd: () => opts.spent ?? 0 };
  const limits = { model: MODEL, maxTokens: opts.maxTokens ?? 16_000, client: counting(opts.prompt) };
  return checkBudget(budget, limits, REQUEST, run, new AbortController().signal);
}

describe('checkBudget: the next request priced from what the cache will do', () => {
  it.each([
    // [what, budget, spent, prompt, run so far, expected]
    // 90k cached within its lifetime: 90k read ($0.018) + 5k written ($0.0125); the output reserve is 1,024 tokens.
    ['a cached prefix is a read', 0.5, 0.4, 95_000, { cache: { tokens: 90_000, at: 1_000_000 - 60_000 }, lastPromptTokens: 90_000 }, { over: null, lastOne: false }],
    // The same prefix past its lifetime: all 95k written ($0.2375) — more than the $0.1 left.
    ['an expired entry is written again', 0.5, 0.4, 95_000, { cache: { tokens: 90_000, at: 1_000_000 - CACHE_LIFETIME_MS } }, { over: { kind: 'next' } }],
    // Nothing cached: the first request of a $0.05 budget at 95k tokens cannot be paid for.
    ['a first request at a large context', 0.05, 0, 95_000, {}, { over: { kind: 'first', raiseToUsd: 0.25 } }],
    // The model's answers so far were long (8k): the reserve is twice that, so this is the last request.
    ['the reserve follows the largest output', 0.5, 0.3, 95_000, { cache: { tokens: 90_000, at: 999_000 }, lastPromptTokens: 90_000, largestOutputTokens: 8_000 }, { over: null, lastOne: true }],
    ['short answers so far: not the last', 0.5, 0.3, 95_000, { cache: { tokens: 90_000, at: 999_000 }, lastPromptTokens: 90_000, largestOutputTokens: 300 }, { over: null, lastOne: false }],
  ] as const)('%s', async (_what, maxUsd, spent, prompt, run, expected) => {
    expect(await check({ maxUsd, spent, prompt, run })).toMatchObject(expected);
  });

  it('the request goes out with no more max_tokens than the money left pays for', async () => {
    // $0.1 left; 95k prompt, 90k of it read ($0.018) + 5k written ($0.0125): $0.0695 buys 6,950 output tokens.
    const cache = { tokens: 90_000, at: 999_000 };
    const tight = await check({ maxUsd: 0.5, spent: 0.4, prompt: 95_000, run: { cache, lastPromptTokens: 90_000 } });
    // (floating point may take the last token off)
    expect(tight.maxTokens).toBeGreaterThanOrEqual(6_949);
    expect(tight.maxTokens).toBeLessThanOrEqual(6_950);
    // With room to spare, --max-tokens stands.
    expect(await check({ maxUsd: 5, spent: 0.4, prompt: 95_000, run: { cache, lastPromptTokens: 90_000 } })).toMatchObject({ maxTokens: 16_000 });
  });

  it('an unknown price is its own reason; count_tokens missing falls back to an over-count of the request', async () => {
    const budget = { maxUsd: 1, spentUsd: () => 0 };
    const run: RunSoFar = { cache: null, lastPromptTokens: 0, largestOutputTokens: 0, now: 0 };
    const unknown = await checkBudget(budget, { model: 'claude-x', maxTokens: 100, client: counting(1) }, REQUEST, run, new AbortController().signal);
    expect(unknown.over).toEqual({ kind: 'no_price', model: 'claude-x' });
    const fallback = await checkBudget(budget, { model: MODEL, maxTokens: 100, client: counting(null) }, REQUEST, run, new AbortController().signal);
    expect(fallback.over).toBeNull();
  });
});

describe('raisedBudget: the suggestion is rounded up to the cent and above the budget given', () => {
  it.each([
    [0.0177, 0.001, 0.02],
    [0.0177, 0.02, 0.03],
    [0.02, 0.02, 0.03],
    [0.2375, 0.05, 0.24],
    [1.001, 0.5, 1.01],
  ])('needs %s, given %s → %s', (needed, given, expected) => {
    expect(raisedBudget(needed, given)).toBe(expected);
  });
});
