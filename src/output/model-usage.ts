import type { Usage } from '../agent/events.js';

/**
 * Claude Code's per-model totals (`modelUsage`), for the fields spelunk knows: it keeps no table of context windows,
 * so `contextWindow` and `maxOutputTokens` are absent. `costUSD` is a number, as Claude Code's typed readers expect: 0
 * for a model without a known price, with `costKnown` false, so no cost is invented and no reader meets a null.
 */
export interface ModelUsageRecord {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  cacheCreationEphemeral5mInputTokens?: number;
  cacheCreationEphemeral1hInputTokens?: number;
  /** spelunk offers the model no web search: always 0. */
  webSearchRequests: number;
  costUSD: number;
  /** false when a request of this model had no known price (costUSD is then 0, not a cost). */
  costKnown: boolean;
}

/** One model's totals in Claude Code's shape; `costUsd` as it should be shown (already rounded). */
export function modelUsageOf(u: Usage, costUsd: number | null): ModelUsageRecord {
  return {
    inputTokens: u.input_tokens,
    outputTokens: u.output_tokens,
    cacheReadInputTokens: u.cache_read_input_tokens,
    cacheCreationInputTokens: u.cache_creation_input_tokens,
    ...(u.cache_creation
      ? {
          cacheCreationEphemeral5mInputTokens: u.cache_creation.ephemeral_5m_input_tokens,
          cacheCreationEphemeral1hInputTokens: u.cache_creation.ephemeral_1h_input_tokens,
        }
      : {}),
    webSearchRequests: 0,
    costUSD: costUsd ?? 0,
    costKnown: costUsd !== null,
  };
}

/** Sums each request's usage and cost per model; a cost stays null once any request of that model had no price. */
export class ModelUsageTotals {
  readonly #byModel = new Map<string, { usage: Usage; cost: number | null }>();

  add(model: string, usage: Usage, cost: number | null): void {
    const zero: Usage = { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 };
    const m = this.#byModel.get(model) ?? { usage: zero, cost: 0 };
    m.usage.input_tokens += usage.input_tokens;
    m.usage.cache_creation_input_tokens += usage.cache_creation_input_tokens;
    m.usage.cache_read_input_tokens += usage.cache_read_input_tokens;
    m.usage.output_tokens += usage.output_tokens;
    // The TTL split only where the API reported one, so an absent split is not read as "no 5m/1h writes".
    if (usage.cache_creation) {
      const split = m.usage.cache_creation ?? { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 };
      split.ephemeral_5m_input_tokens += usage.cache_creation.ephemeral_5m_input_tokens;
      split.ephemeral_1h_input_tokens += usage.cache_creation.ephemeral_1h_input_tokens;
      m.usage.cache_creation = split;
    }
    m.cost = m.cost === null || cost === null ? null : m.cost + cost;
    this.#byModel.set(model, m);
  }

  /** The `modelUsage` object; `round` turns a cost into what is shown. */
  records(round: (usd: number) => number): Record<string, ModelUsageRecord> {
    const shown = (cost: number | null): number | null => (cost === null ? null : round(cost));
    return Object.fromEntries([...this.#byModel].map(([model, m]) => [model, modelUsageOf(m.usage, shown(m.cost))]));
  }
}
