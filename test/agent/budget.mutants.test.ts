import { describe, expect, it } from 'vitest';
import { checkBudget, raisedBudget, type RunSoFar } from '../../src/agent/budget.js';
import type { ModelClient, ModelRequest } from '../../src/agent/model.js';
import { requestCostUsd } from '../../src/agent/pricing.js';

// The boundaries of checkBudget that the mutation run of src/agent/budget.ts found untested (scripts/mutation-areas.json,
// area "budget"). claude-sonnet-5-5: input $2/M, 5m write $2.5/M, read $0.2/M, output $10/M.
const MODEL = 'claude-sonnet-5-5';
const REQUEST = { model: MODEL, max_tokens: 16_000, system: [], tools: [], messages: [] } as unknown as ModelRequest;
const NOW = 1_000_000;

async function check(opts: { maxUsd: number; spent?: number; prompt: number | null; run?: Partial<RunSoFar>; maxTokens?: number; model?: string }) {
  const run: RunSoFar = { cache: null, lastPromptTokens: 0, largestOutputTokens: 0, now: NOW, ...opts.run };
  const client = { countTokens: async () => opts.prompt } as unknown as ModelClient;
  const limits = { model: opts.model ?? MODEL, maxTokens: opts.maxTokens ?? 16_000, client };
  return checkBudget({ maxUsd: opts.maxUsd, spentUsd: () => opts.spent ?? 0 }, limits, REQUEST, run, new AbortController().signal);
}

describe('checkBudget at its boundaries', () => {
  it('an unknown price is never "the last request"', async () => {
    expect(await check({ maxUsd: 1, prompt: 10, model: 'claude-x', maxTokens: 100 })).toEqual({
      over: { kind: 'no_price', model: 'claude-x' }, lastOne: false, maxTokens: 100,
    });
  });

  it('a refusal carries its numbers: the prompt, its price, the least output and its price', async () => {
    // 95k tokens written: $0.2375; 1,024 output tokens: $0.01024; the suggestion rounds $0.24774 up to the cent.
    const refused = await check({ maxUsd: 0.05, prompt: 95_000 });
    expect(refused.lastOne).toBe(false);
    expect(refused.maxTokens).toBe(16_000);
    expect(refused.over).toMatchObject({ kind: 'first', promptTokens: 95_000, outputTokens: 1_024, raiseToUsd: 0.25 });
    const over = refused.over as unknown as { promptUsd: number; outputUsd: number };
    expect(over.promptUsd).toBeCloseTo(0.2375, 10);
    expect(over.outputUsd).toBeCloseTo(0.01024, 10);
  });

  it('without count_tokens the prompt is counted as its JSON characters over two (an over-count)', async () => {
    const refused = await check({ maxUsd: 0.000_01, prompt: null });
    expect(refused.over).toMatchObject({ kind: 'first', promptTokens: Math.ceil(JSON.stringify(REQUEST).length / 2) });
  });

  it('money for exactly the least output is enough', async () => {
    // 1,000 tokens written ($0.0025) leave $0.010245: 1,024 output tokens, exactly the least a request is sent with.
    const sent = await check({ maxUsd: 0.012_745, prompt: 1_000 });
    expect(sent.over).toBeNull();
    expect(sent.maxTokens).toBe(1_024);
  });

  it('a first request reserves two rounds of output for the next prompt, not its own size again', async () => {
    // 10k written ($0.025) + 512 out ($0.00512); the next: 10k read ($0.002) + 1,024 written ($0.00256) + 1,024 out
    // ($0.01024): $0.04492 in all, under $0.05. Growing the next prompt by this one's 10k would cost $0.06736.
    expect(await check({ maxUsd: 0.05, prompt: 10_000 })).toMatchObject({ over: null, lastOne: false });
  });

  it('a conversation that grew by a large tool round expects the next to grow as much', async () => {
    // 60k read + 20k written ($0.062) + 512 out: $0.06712; the next grows 20k again: 80k read ($0.016) + 20k written
    // ($0.05) + 1,024 out: $0.07624. $0.14336 is over $0.12; a next prompt grown by 1,024 (or 512) would fit.
    const run = { cache: { tokens: 60_000, at: NOW - 1_000 }, lastPromptTokens: 60_000 };
    expect(await check({ maxUsd: 0.12, prompt: 80_000, run })).toMatchObject({ over: null, lastOne: true });
  });

  it('a budget that pays for this request and the next exactly is not at its last request', async () => {
    const prompt = 10_000;
    const thisUsd = requestCostUsd(MODEL, { promptTokens: prompt, cachedTokens: 0, outputTokens: 512 })!;
    const nextUsd = requestCostUsd(MODEL, { promptTokens: prompt + 1_024, cachedTokens: prompt, outputTokens: 1_024 })!;
    expect(await check({ maxUsd: 0 + thisUsd + nextUsd, prompt })).toMatchObject({ over: null, lastOne: false });
  });
});

describe('raisedBudget on a whole number of cents', () => {
  it.each([
    [0.05, 0.01, 0.05],
    [0.25, 0.1, 0.25],
  ])('needs %s, given %s → %s', (needed, given, expected) => {
    expect(raisedBudget(needed, given)).toBe(expected);
  });
});
