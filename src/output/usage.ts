import Table from 'cli-table3';
import type { AgentEvent, Usage } from '../agent/events.js';
import { createPalette } from './color.js';
import { estimateCostUsd, PRICES_AS_OF, promptTokensOf } from '../agent/pricing.js';
import { groupDigits } from '../digits.js';

/** One model request as the session ledger records it. */
interface LedgerRow {
  turn: number;
  model: string;
  usage: Usage;
  durationMs: number;
  /** Cancelled (Ctrl+C) after the API had reported usage: billed, so counted, and marked in the table. */
  interrupted?: boolean;
  /** Tokens this request had to re-write because the prompt cache missed (see CacheWatch). */
  missedTokens?: number;
}

const INTERRUPTED = 'interrupted';

/** Sums of a run of requests; `costUsd` is null when any of them used a model without a price. */
interface UsageSummary {
  requests: number;
  usage: Usage;
  costUsd: number | null;
}

/**
 * Every billed request of one session, in order: the one count of usage and money. The run service feeds it the
 * loop's events (runQuestion puts it first among a run's sinks); the budget, the result's cost, the REPL's /usage and
 * the MCP server's total read it, and renderers only read it. A ledger made with a `parent` (an MCP call's, under
 * the server's) adds each row there too.
 */
export class UsageLedger {
  readonly #rows: LedgerRow[] = [];
  readonly #parent: UsageLedger | null;

  constructor(parent: UsageLedger | null = null) {
    this.#parent = parent;
  }

  /** Counts a `usage` event (an interrupted request was billed too) and marks a `cache_miss` on its request. */
  handle(event: AgentEvent): void {
    if (event.type === 'cache_miss') return this.markMissed(event.miss.tokens);
    if (event.type !== 'usage') return;
    const { turn, model, usage, durationMs } = event;
    this.add({ turn, model, usage, durationMs, ...(event.interrupted ? { interrupted: true } : {}) });
  }

  add(row: LedgerRow): void {
    this.#rows.push({ ...row, usage: copyUsage(row.usage) });
    this.#parent?.add(row);
  }

  /** Marks the latest request as a cache miss of `tokens` (the loop reports it right after the request's usage). */
  markMissed(tokens: number): void {
    const last = this.#rows.at(-1);
    if (last) last.missedTokens = tokens;
  }

  rows(): readonly LedgerRow[] {
    return [...this.#rows];
  }

  /** Estimated session cost; null if any request used a model not in the price table. */
  totalCostUsd(): number | null {
    return summarize(this.#rows).costUsd;
  }

  /** The rows from `fromIndex` on, each with its cost (null: no price for its model). */
  pricedSince(fromIndex: number): { row: LedgerRow; costUsd: number | null }[] {
    return this.#rows.slice(fromIndex).map((row) => ({ row, costUsd: estimateCostUsd(row.model, row.usage) }));
  }

  /** Sums of the rows from `fromIndex` on (a question's requests). */
  summarySince(fromIndex: number): UsageSummary {
    return summarize(this.#rows.slice(fromIndex));
  }

  /** The one-line total printed after each answer, over the rows from `fromIndex` on. */
  questionTotalLine(fromIndex: number): string {
    const s = this.summarySince(fromIndex);
    const noun = s.requests === 1 ? 'request' : 'requests';
    return `  Σ ${formatInt(s.requests)} ${noun} · ${usageParts(s.usage)} · ${formatCostUsd(s.costUsd)}`;
  }
}

/** `  ↳ in 412 · cache write 1,203 · cache read 11,870 (88%) · out 96 · ~$0.0043` for one request. */
export function formatUsageLine(
  model: string,
  usage: Usage,
  opts: { color: boolean; interrupted?: boolean; effort?: string | undefined },
): string {
  const effort = opts.effort ? ` · effort ${opts.effort}` : '';
  const line = `  ↳ ${usageParts(usage)} · ${formatCostUsd(estimateCostUsd(model, usage))}${effort}${opts.interrupted ? ` · ${INTERRUPTED}` : ''}`;
  return createPalette(opts.color).dim(line);
}

/**
 * The session table (a row per request and a TOTAL row) with the estimate footnote, ending in a newline.
 * Heads and borders are never styled by cli-table3 itself: its colour library decides on its own whether a
 * terminal is attached, so heads are bolded here and only when `color` is on.
 */
export function usageTable(ledger: UsageLedger, opts: { color: boolean }): string {
  const p = createPalette(opts.color);
  const head = ['#', 'model', 'input', 'cache write', 'cache read', 'output', 'hit %', 'missed', 'cost'].map((h) => p.bold(h));
  const table = new Table({
    head,
    colAligns: ['right', 'left', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
    style: { head: [], border: [], compact: true },
  });
  ledger.rows().forEach((row, i) => {
    const missed = row.missedTokens === undefined ? '–' : formatInt(row.missedTokens);
    table.push([
      String(i + 1),
      row.interrupted ? `${row.model} (${INTERRUPTED})` : row.model,
      ...usageCells(row.usage),
      missed,
      tableCost(estimateCostUsd(row.model, row.usage)),
    ]);
  });
  const total = ledger.summarySince(0);
  const missedTotal = ledger.rows().reduce((sum, r) => sum + (r.missedTokens ?? 0), 0);
  table.push([
    { content: p.bold('TOTAL'), colSpan: 2, hAlign: 'left' },
    ...usageCells(total.usage),
    formatInt(missedTotal),
    p.bold(tableCost(total.costUsd)),
  ]);
  const notes = [`cost is an estimate from list prices as of ${PRICES_AS_OF}`];
  if (missedTotal > 0) notes.push('missed: cached tokens a request had to write again (the stderr line said why)');
  if (ledger.rows().some((r) => r.interrupted)) notes.push(`${INTERRUPTED}: cancelled mid-answer; output as reported before the cancel`);
  return `${table.toString()}\n${p.dim(notes.join('; '))}\n`;
}

/** Cache hit share in whole percent (floored, so 100% means every prompt token was read from cache); null for an empty prompt. */
export function cacheHitPercent(usage: Usage): number | null {
  const prompt = promptTokensOf(usage);
  if (prompt === 0) return null;
  return Math.floor((usage.cache_read_input_tokens * 100) / prompt);
}

/** `~$0.0043` below a dollar, `~$12.35` from a dollar on, `cost unknown` for null. */
export function formatCostUsd(cost: number | null): string {
  if (cost === null) return 'cost unknown';
  if (cost > 0 && cost < 0.00005) return '<$0.0001';
  // From 0.99995 on, four decimals would round to "1.0000": switch to cents there.
  return `~$${fixed(cost, cost >= 0.99995 ? 2 : 4)}`;
}

/** Integer with `,` thousands separators whatever the process locale. */
export function formatInt(n: number): string {
  return fixed(n, 0);
}

/**
 * `digits` decimals with `,` grouping, written by hand: output must not depend on the machine's locale, and an
 * Intl.NumberFormat costs ICU set-up at start-up.
 */
function fixed(n: number, digits: number): string {
  const [whole = '0', fraction] = Math.abs(n).toFixed(digits).split('.');
  const grouped = groupDigits(whole);
  const sign = n < 0 && Number(`${whole}.${fraction ?? 0}`) !== 0 ? '-' : '';
  return fraction === undefined ? `${sign}${grouped}` : `${sign}${grouped}.${fraction}`;
}

function usageParts(u: Usage): string {
  const hit = cacheHitPercent(u);
  const read = `cache read ${formatInt(u.cache_read_input_tokens)}${hit === null ? '' : ` (${hit}%)`}`;
  return `in ${formatInt(u.input_tokens)} · cache write ${formatInt(u.cache_creation_input_tokens)} · ${read} · out ${formatInt(u.output_tokens)}`;
}

function usageCells(u: Usage): string[] {
  const hit = cacheHitPercent(u);
  return [
    formatInt(u.input_tokens),
    formatInt(u.cache_creation_input_tokens),
    formatInt(u.cache_read_input_tokens),
    formatInt(u.output_tokens),
    hit === null ? '–' : `${hit}%`,
  ];
}

function tableCost(cost: number | null): string {
  return cost === null ? 'unknown' : formatCostUsd(cost);
}

function summarize(rows: readonly LedgerRow[]): UsageSummary {
  const usage: Usage = { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 };
  let costUsd: number | null = 0;
  for (const row of rows) {
    usage.input_tokens += row.usage.input_tokens;
    usage.cache_creation_input_tokens += row.usage.cache_creation_input_tokens;
    usage.cache_read_input_tokens += row.usage.cache_read_input_tokens;
    usage.output_tokens += row.usage.output_tokens;
    if (row.usage.cache_creation) {
      const split = usage.cache_creation ?? { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 };
      split.ephemeral_5m_input_tokens += row.usage.cache_creation.ephemeral_5m_input_tokens;
      split.ephemeral_1h_input_tokens += row.usage.cache_creation.ephemeral_1h_input_tokens;
      usage.cache_creation = split;
    }
    // Priced per request, not on the sums: a long-prompt tier applies to one request at a time.
    const cost = estimateCostUsd(row.model, row.usage);
    costUsd = cost === null || costUsd === null ? null : costUsd + cost;
  }
  return { requests: rows.length, usage, costUsd };
}

function copyUsage(u: Usage): Usage {
  return u.cache_creation ? { ...u, cache_creation: { ...u.cache_creation } } : { ...u };
}
