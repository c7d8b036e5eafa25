import type { Usage } from './events.js';
import { anthropicModelId } from './providers.js';

/** Month the table below was checked against Anthropic's list prices; shown in the usage table footnote. */
export const PRICES_AS_OF = '2026-11';

/** USD per million tokens for each way a token can be billed. */
interface Rates {
  input: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  cacheRead: number;
  output: number;
}

/** Prices of one model: `rates` apply unless the request's prompt exceeds `above.promptTokens`. */
interface ModelPrice {
  /** Canonical (undated) model id of the row. */
  model: string;
  rates: Rates;
  /** A long-prompt tier: every token of a request whose prompt is larger than `promptTokens` is billed at `rates`. */
  above?: { promptTokens: number; rates: Rates };
}

const TOKENS_PER_UNIT = 1_000_000;

// Frozen: priceFor hands these objects out, and the table must not be changeable by a caller.
const rates = (input: number, cacheWrite5m: number, cacheWrite1h: number, cacheRead: number, output: number): Rates =>
  Object.freeze({ input, cacheWrite5m, cacheWrite1h, cacheRead, output });

const OPUS_5 = rates(5, 6.25, 10, 0.5, 25);
const SONNET_4 = rates(3, 3.75, 6, 0.3, 15);

/**
 * The one price table: Anthropic's list prices as of PRICES_AS_OF.
 * sonnet-5-5 cache reads use the 0.20 list price, not the 0.10 reported from 2026-10-07: the same estimate
 * guards budget caps, and an over-count of 0.10/M on reads is harmless there while an under-count lets a cap overspend.
 */
const PRICE_TABLE: ReadonlyMap<string, Omit<ModelPrice, 'model'>> = new Map([
  ['claude-opus-5-5', { rates: rates(4, 5, 8, 0.2, 20) }],
  ['claude-sonnet-5-5', { rates: rates(2, 2.5, 4, 0.2, 10) }],
  [
    'claude-haiku-5-5',
    {
      rates: rates(0.1, 0.125, 0.2, 0.01, 0.5),
      above: { promptTokens: 100_000, rates: rates(0.5, 0.625, 1, 0.05, 2.5) },
    },
  ],
  ['claude-sonnet-5', { rates: rates(2, 2.5, 4, 0.2, 10) }],
  ['claude-opus-5', { rates: OPUS_5 }],
  ['claude-opus-4-8', { rates: OPUS_5 }],
  ['claude-opus-4-7', { rates: OPUS_5 }],
  ['claude-opus-4-6', { rates: OPUS_5 }],
  ['claude-opus-4-5', { rates: OPUS_5 }],
  ['claude-sonnet-4-6', { rates: SONNET_4 }],
  ['claude-sonnet-4-5', { rates: SONNET_4 }],
  ['claude-haiku-4-5', { rates: rates(1, 1.25, 2, 0.1, 5) }],
]);

/** Every model id with a price, newest families first (also the "did you mean" list for an unknown model). */
export const KNOWN_MODELS: readonly string[] = [...PRICE_TABLE.keys()];

/** Snapshot ids such as `claude-haiku-4-5-20251001` are billed like their undated alias. */
const DATED_SUFFIX = /-\d{8}$/;

/**
 * The price row for a model id (dated snapshot ids map to their base row, a cloud's id to its Anthropic id: Bedrock
 * and Vertex AI list Claude at Anthropic's prices); null when the model is not in the table.
 */
export function priceFor(model: string): ModelPrice | null {
  const base = anthropicModelId(model).replace(DATED_SUFFIX, '');
  const row = PRICE_TABLE.get(base);
  return row ? { model: base, ...row } : null;
}

/** The rates that apply to a request with this many prompt tokens (input + cache write + cache read). */
export function ratesFor(price: ModelPrice, promptTokens: number): Rates {
  return price.above && promptTokens > price.above.promptTokens ? price.above.rates : price.rates;
}

/** Total prompt tokens of one request: the API's `input_tokens` is only the uncached remainder. */
export function promptTokensOf(usage: Usage): number {
  return usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;
}

/**
 * Estimated cost of one request in USD, or null for a model not in the table.
 * Cache writes are split by TTL when the API reports `cache_creation`; otherwise all are priced as 5m writes
 * (the default TTL). Any write the split does not account for is also priced at the 5m rate.
 */
export function estimateCostUsd(model: string, usage: Usage): number | null {
  const price = priceFor(model);
  if (!price) return null;
  const r = ratesFor(price, promptTokensOf(usage));
  const split = usage.cache_creation;
  const write1h = split?.ephemeral_1h_input_tokens ?? 0;
  const write5m = split
    ? split.ephemeral_5m_input_tokens + Math.max(0, usage.cache_creation_input_tokens - split.ephemeral_5m_input_tokens - write1h)
    : usage.cache_creation_input_tokens;
  const micro =
    usage.input_tokens * r.input +
    write5m * r.cacheWrite5m +
    write1h * r.cacheWrite1h +
    usage.cache_read_input_tokens * r.cacheRead +
    usage.output_tokens * r.output;
  return micro / TOKENS_PER_UNIT;
}

/** A request before it is sent, as the budget prices it. */
interface PlannedRequest {
  /** Every prompt token: tools, system and messages. */
  promptTokens: number;
  /** Of those, the leading tokens the prompt cache holds for this conversation (a read); the rest is written. */
  cachedTokens: number;
  /** Output tokens to allow for. */
  outputTokens: number;
}

/**
 * What a request will cost as the API bills it, or null for an unknown model. The cached prefix is billed as a cache
 * read; every other prompt token at the dearer of uncached input and a 5-minute cache write (spelunk's breakpoints
 * write the whole new part, or bill it as input when it is under the cacheable minimum); the output at the output
 * rate. The tier is the prompt's size, as the API picks it.
 */
export function requestCostUsd(model: string, planned: PlannedRequest): number | null {
  const price = priceFor(model);
  if (!price) return null;
  const r = ratesFor(price, planned.promptTokens);
  const read = Math.min(Math.max(0, planned.cachedTokens), planned.promptTokens);
  const written = planned.promptTokens - read;
  const micro = read * r.cacheRead + written * Math.max(r.input, r.cacheWrite5m) + planned.outputTokens * r.output;
  return micro / TOKENS_PER_UNIT;
}

/** Output tokens that `usd` buys at this prompt size's tier (0 when the model has no price or `usd` ≤ 0). */
export function outputTokensFor(model: string, promptTokens: number, usd: number): number {
  const price = priceFor(model);
  if (!price || usd <= 0) return 0;
  return Math.floor((usd * TOKENS_PER_UNIT) / ratesFor(price, promptTokens).output);
}
