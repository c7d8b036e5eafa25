import { describe, expect, it } from 'vitest';
import type { Usage } from '../../src/agent/events.js';
import { estimateCostUsd, outputTokensFor, priceFor, PRICES_AS_OF, requestCostUsd } from '../../src/agent/pricing.js';

const usage = (input: number, write: number, read: number, output: number, split?: [number, number]): Usage => ({
  input_tokens: input,
  cache_creation_input_tokens: write,
  cache_read_input_tokens: read,
  output_tokens: output,
  ...(split ? { cache_creation: { ephemeral_5m_input_tokens: split[0], ephemeral_1h_input_tokens: split[1] } } : {}),
});

// 10k input, 20k cache write (12k 5m + 8k 1h), 50k cache read, 2k output: an 80k prompt, under haiku-5-5's 100k tier.
const SPLIT = usage(10_000, 20_000, 50_000, 2_000, [12_000, 8_000]);
// The same request without a TTL split: every write is priced as a 5m write.
const UNSPLIT = usage(10_000, 20_000, 50_000, 2_000);

describe('estimateCostUsd', () => {
  // Expected dollars worked out by hand from the notes' table: in·10k + 5m·12k + 1h·8k + read·50k + out·2k.
  it.each([
    ['claude-opus-5-5', 0.214, 0.19],
    ['claude-sonnet-5-5', 0.112, 0.1],
    ['claude-haiku-5-5', 0.0056, 0.005],
    ['claude-sonnet-5', 0.112, 0.1],
    ['claude-opus-5', 0.28, 0.25],
    ['claude-opus-4-8', 0.28, 0.25],
    ['claude-opus-4-7', 0.28, 0.25],
    ['claude-opus-4-6', 0.28, 0.25],
    ['claude-opus-4-5', 0.28, 0.25],
    ['claude-sonnet-4-6', 0.168, 0.15],
    ['claude-sonnet-4-5', 0.168, 0.15],
    ['claude-haiku-4-5', 0.056, 0.05],
    ['claude-haiku-4-5-20251001', 0.056, 0.05],
    ['claude-opus-4-5-20251101', 0.28, 0.25],
    ['claude-sonnet-4-5-20250929', 0.168, 0.15],
  ])('%s: split writes → $%s, unsplit → $%s', (model, withSplit, withoutSplit) => {
    expect(estimateCostUsd(model, SPLIT)).toBeCloseTo(withSplit, 10);
    expect(estimateCostUsd(model, UNSPLIT)).toBeCloseTo(withoutSplit, 10);
  });

  it('prices writes the split does not account for at the 5m rate', () => {
    const partial = usage(10_000, 20_000, 50_000, 2_000, [0, 8_000]);
    expect(estimateCostUsd('claude-opus-5-5', partial)).toBeCloseTo(0.214, 10);
  });

  it.each([
    // [label, usage, expected]: the tier is chosen by the whole prompt (input + write + read) of the request.
    ['exactly 100k prompt → low tier', usage(100_000, 0, 0, 1_000_000), 0.51],
    ['100,001 prompt → high tier', usage(100_001, 0, 0, 1_000_000), 2.5500005],
    ['cache reads push the prompt over 100k', usage(1, 0, 100_000, 0), 0.0050005],
    ['cache writes count toward the prompt', usage(0, 100_001, 0, 0, [100_001, 0]), 0.062500625],
    ['low tier, 1h writes', usage(0, 50_000, 0, 0, [0, 50_000]), 0.01],
  ])('haiku-5-5 tiers: %s', (_label, u, expected) => {
    expect(estimateCostUsd('claude-haiku-5-5', u)).toBeCloseTo(expected, 12);
  });

  it('is zero for an empty request on a known model', () => {
    expect(estimateCostUsd('claude-sonnet-5-5', usage(0, 0, 0, 0))).toBe(0);
  });

  it.each(['claude-fable-5-2', 'claude-mythos-5', 'gpt-4o', '', 'claude-sonnet-5-5-preview', 'CLAUDE-SONNET-5-5', 'claude-haiku-4-5-2025'])(
    'unknown model %j → null, never a number',
    (model) => {
      expect(priceFor(model)).toBeNull();
      expect(estimateCostUsd(model, SPLIT)).toBeNull();
      expect(requestCostUsd(model, { promptTokens: 1000, cachedTokens: 0, outputTokens: 1000 })).toBeNull();
    },
  );
});

describe('priceFor', () => {
  it('maps dated snapshot ids to their base row', () => {
    expect(priceFor('claude-haiku-4-5-20251001')?.model).toBe('claude-haiku-4-5');
    expect(priceFor('claude-opus-4-5-20251101')?.model).toBe('claude-opus-4-5');
    expect(priceFor('claude-sonnet-4-5-20250929')?.model).toBe('claude-sonnet-4-5');
  });

  it('uses the sonnet-5-5 list cache-read price so budget caps never under-count', () => {
    expect(priceFor('claude-sonnet-5-5')?.rates.cacheRead).toBe(0.2);
  });

  it('only haiku-5-5 has a long-prompt tier, at 100k', () => {
    expect(priceFor('claude-haiku-5-5')?.above?.promptTokens).toBe(100_000);
    expect(priceFor('claude-sonnet-5-5')?.above).toBeUndefined();
  });

  it('dates the table', () => {
    expect(PRICES_AS_OF).toBe('2026-11');
  });
});

describe('requestCostUsd: a request priced before it is sent, as the API will bill it', () => {
  it.each([
    // [model, prompt, cached, output, $]: cached tokens at the read rate, the rest at the 5m write rate, output.
    ['claude-sonnet-5-5', 50_000, 0, 16_000, 0.285],
    ['claude-sonnet-5-5', 50_000, 45_000, 1_000, 0.0315],
    ['claude-opus-4-8', 10_000, 10_000, 1_000, 0.03],
    // More cached than the prompt (a shorter prompt after a rollback): only the prompt is read.
    ['claude-opus-4-8', 10_000, 20_000, 0, 0.005],
    // haiku-5-5's tier follows the prompt's size: over 100k every token is at the dearer rates.
    ['claude-haiku-5-5', 100_000, 0, 1_000, 0.013],
    ['claude-haiku-5-5', 200_000, 100_000, 1_000, 0.07],
    ['claude-haiku-4-5-20251001', 0, 0, 0, 0],
  ])('%s prompt %d, %d of it cached, output %d → $%s', (model, prompt, cached, out, expected) => {
    expect(requestCostUsd(model, { promptTokens: prompt, cachedTokens: cached, outputTokens: out })).toBeCloseTo(expected, 12);
  });

  it('is the billed cost when the cache does what the estimate says (read the cached part, write the rest at 5m)', () => {
    for (const model of ['claude-opus-5-5', 'claude-sonnet-5-5', 'claude-haiku-5-5', 'claude-opus-4-5', 'claude-haiku-4-5']) {
      const billed = estimateCostUsd(model, usage(0, 30_000, 90_000, 2_000, [30_000, 0]));
      expect(requestCostUsd(model, { promptTokens: 120_000, cachedTokens: 90_000, outputTokens: 2_000 })).toBeCloseTo(billed ?? Number.NaN, 12);
    }
  });

  it.each(['claude-opus-5-5', 'claude-sonnet-5-5', 'claude-haiku-5-5', 'claude-opus-4-5', 'claude-haiku-4-5'])(
    '%s: nothing cached bounds every way the API can bill the same prompt with 5m writes',
    (model) => {
      const ways = [usage(120_000, 0, 0, 4_000), usage(0, 120_000, 0, 4_000), usage(0, 0, 120_000, 4_000), usage(40_000, 40_000, 40_000, 4_000)];
      const bound = requestCostUsd(model, { promptTokens: 120_000, cachedTokens: 0, outputTokens: 4_000 }) ?? Number.NaN;
      for (const u of ways) expect(estimateCostUsd(model, u)).toBeLessThanOrEqual(bound + 1e-12);
    },
  );

  it('unknown models have no price; outputTokensFor buys nothing for them or for no money', () => {
    expect(requestCostUsd('claude-x', { promptTokens: 1, cachedTokens: 0, outputTokens: 1 })).toBeNull();
    expect(outputTokensFor('claude-x', 1000, 1)).toBe(0);
    expect(outputTokensFor('claude-sonnet-5-5', 1000, -0.01)).toBe(0);
    // $0.01 at $10/M output.
    expect(outputTokensFor('claude-sonnet-5-5', 1000, 0.01)).toBe(1000);
  });
});
