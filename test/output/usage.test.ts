import { describe, expect, it } from 'vitest';
import type { Usage } from '../../src/agent/events.js';
import { hasAnsi, stripAnsi } from '../support/ansi.js';
import {
  cacheHitPercent,
  formatCostUsd,
  formatInt,
  formatUsageLine,
  UsageLedger,
  usageTable,
} from '../../src/output/usage.js';

const usage = (input: number, write: number, read: number, output: number): Usage => ({
  input_tokens: input,
  cache_creation_input_tokens: write,
  cache_read_input_tokens: read,
  output_tokens: output,
});

describe('formatUsageLine', () => {
  it.each([
    // sonnet-5-5: 412·2 + 1203·2.5 + 11870·0.2 + 96·10 = 7165.5 µ$ → $0.0072; hit 11870/13485 = 88.02% → 88%
    ['claude-sonnet-5-5', usage(412, 1203, 11_870, 96), '  ↳ in 412 · cache write 1,203 · cache read 11,870 (88%) · out 96 · ~$0.0072'],
    ['claude-opus-4-8', usage(1_234_567, 0, 0, 10_000), '  ↳ in 1,234,567 · cache write 0 · cache read 0 (0%) · out 10,000 · ~$6.42'],
    ['claude-sonnet-5-5', usage(0, 0, 0, 0), '  ↳ in 0 · cache write 0 · cache read 0 · out 0 · ~$0.0000'],
    ['claude-sonnet-5-5', usage(0, 0, 5_000, 0), '  ↳ in 0 · cache write 0 · cache read 5,000 (100%) · out 0 · ~$0.0010'],
    ['claude-fable-5-2', usage(10, 20, 30, 40), '  ↳ in 10 · cache write 20 · cache read 30 (50%) · out 40 · cost unknown'],
  ])('%s %o', (model, u, expected) => {
    expect(formatUsageLine(model, u, { color: false })).toBe(expected);
  });

  it('dims the line only when colour is on', () => {
    const u = usage(412, 1203, 11_870, 96);
    const colored = formatUsageLine('claude-sonnet-5-5', u, { color: true });
    expect(hasAnsi(colored)).toBe(true);
    expect(stripAnsi(colored)).toBe(formatUsageLine('claude-sonnet-5-5', u, { color: false }));
  });
});

describe('number formatting', () => {
  it.each([
    [0, '0'],
    [999, '999'],
    [1000, '1,000'],
    [1_234_567, '1,234,567'],
  ])('formatInt(%d) → %s', (n, s) => expect(formatInt(n)).toBe(s));

  it.each([
    [null, 'cost unknown'],
    [0, '~$0.0000'],
    [0.00001, '<$0.0001'],
    [0.00005, '~$0.0001'],
    [0.0043, '~$0.0043'],
    [0.99994, '~$0.9999'],
    [0.99996, '~$1.00'],
    [1.5, '~$1.50'],
    [1234.567, '~$1,234.57'],
  ])('formatCostUsd(%s) → %s', (cost, s) => expect(formatCostUsd(cost)).toBe(s));

  it.each([
    [usage(0, 0, 0, 5), null],
    [usage(1, 0, 999, 0), 99], // floored: 100% only when everything was read from cache
    [usage(999, 0, 1, 0), 0],
    [usage(10, 10, 80, 0), 80],
  ])('cacheHitPercent(%o) → %s', (u, pct) => expect(cacheHitPercent(u)).toBe(pct));
});

/** Three requests: sonnet-5-5 twice, then haiku-4-5 (costs 0.0071655 + 0.00595 + 0.00252225). */
function sampleLedger(): UsageLedger {
  const ledger = new UsageLedger();
  ledger.add({ turn: 1, model: 'claude-sonnet-5-5', usage: usage(412, 1203, 11_870, 96), durationMs: 900 });
  ledger.add({ turn: 2, model: 'claude-sonnet-5-5', usage: usage(300, 500, 13_000, 150), durationMs: 800 });
  ledger.add({ turn: 1, model: 'claude-haiku-4-5', usage: usage(308, 697, 5_230, 164), durationMs: 700 });
  return ledger;
}

describe('UsageLedger', () => {
  it('sums every row and prices each request on its own', () => {
    const ledger = sampleLedger();
    expect(ledger.rows()).toHaveLength(3);
    expect(ledger.summarySince(0).usage).toEqual(usage(1020, 2400, 30_100, 410));
    expect(ledger.totalCostUsd()).toBeCloseTo(0.01563775, 12);
  });

  it('prints the question total over the rows from an index on', () => {
    const ledger = sampleLedger();
    expect(ledger.questionTotalLine(0)).toBe(
      '  Σ 3 requests · in 1,020 · cache write 2,400 · cache read 30,100 (89%) · out 410 · ~$0.0156',
    );
    expect(ledger.questionTotalLine(2)).toBe(
      '  Σ 1 request · in 308 · cache write 697 · cache read 5,230 (83%) · out 164 · ~$0.0025',
    );
  });

  it('applies the haiku-5-5 tier per request, not to the session sum', () => {
    const ledger = new UsageLedger();
    ledger.add({ turn: 1, model: 'claude-haiku-5-5', usage: usage(60_000, 0, 0, 0), durationMs: 1 });
    ledger.add({ turn: 2, model: 'claude-haiku-5-5', usage: usage(60_000, 0, 0, 0), durationMs: 1 });
    expect(ledger.totalCostUsd()).toBeCloseTo(0.012, 12);
  });

  it('has a null total and says "cost unknown" once any row has an unknown model', () => {
    const ledger = sampleLedger();
    ledger.add({ turn: 1, model: 'claude-mythos-5', usage: usage(1, 2, 3, 4), durationMs: 1 });
    expect(ledger.totalCostUsd()).toBeNull();
    expect(ledger.questionTotalLine(0)).toMatch(/ · cost unknown$/);
    expect(ledger.questionTotalLine(1)).toMatch(/ · cost unknown$/);
    expect(ledger.questionTotalLine(0)).toContain('Σ 4 requests · in 1,021 ·');
  });

  it('starts empty and keeps its rows safe from callers', () => {
    const ledger = new UsageLedger();
    expect(ledger.totalCostUsd()).toBe(0);
    expect(ledger.summarySince(0).usage).toEqual(usage(0, 0, 0, 0));
    const u = usage(1, 1, 1, 1);
    ledger.add({ turn: 1, model: 'claude-sonnet-5-5', usage: u, durationMs: 1 });
    u.input_tokens = 1000;
    (ledger.rows() as unknown as unknown[]).length = 0;
    expect(ledger.rows()).toHaveLength(1);
    expect(ledger.summarySince(0).usage.input_tokens).toBe(1);
  });

  it('sums the TTL split when rows report it', () => {
    const ledger = new UsageLedger();
    const split = (a: number, b: number): Usage => ({
      ...usage(0, a + b, 0, 0),
      cache_creation: { ephemeral_5m_input_tokens: a, ephemeral_1h_input_tokens: b },
    });
    ledger.add({ turn: 1, model: 'claude-sonnet-5-5', usage: split(100, 0), durationMs: 1 });
    ledger.add({ turn: 2, model: 'claude-sonnet-5-5', usage: usage(0, 0, 0, 0), durationMs: 1 });
    ledger.add({ turn: 3, model: 'claude-sonnet-5-5', usage: split(5, 50), durationMs: 1 });
    expect(ledger.summarySince(0).usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: 105, ephemeral_1h_input_tokens: 50 });
  });
});

describe('usageTable', () => {
  it('marks an interrupted row and explains it under the table', () => {
    const ledger = new UsageLedger();
    ledger.add({ turn: 1, model: 'claude-sonnet-5-5', usage: usage(10, 0, 0, 1), durationMs: 5, interrupted: true });
    ledger.add({ turn: 1, model: 'claude-sonnet-5-5', usage: usage(10, 0, 0, 5), durationMs: 5 });
    const table = usageTable(ledger, { color: false });
    expect(table).toMatch(/│ 1 │ claude-sonnet-5-5 \(interrupted\) │/);
    expect(table).toMatch(/│ 2 │ claude-sonnet-5-5 {2,}│/);
    expect(table).toContain('interrupted: cancelled mid-answer');
    expect(usageTable(new UsageLedger(), { color: false })).not.toContain('interrupted');
  });

  it('has a row per request, a TOTAL row and the estimate footnote, without ANSI when colour is off', () => {
    const table = usageTable(sampleLedger(), { color: false });
    expect(hasAnsi(table)).toBe(false);
    const lines = table.trimEnd().split('\n');
    for (const head of ['#', 'model', 'input', 'cache write', 'cache read', 'output', 'hit %', 'missed', 'cost']) expect(lines[1]).toContain(head);
    const rowWith = (s: string): string => lines.find((l) => l.includes(s)) ?? '';
    expect(rowWith('claude-haiku-4-5')).toMatch(/│\s+3 │ claude-haiku-4-5\s+│\s+308 │\s+697 │\s+5,230 │\s+164 │\s+83% │\s+– │\s+~\$0\.0025 │/);
    expect(lines.filter((l) => l.includes('claude-sonnet-5-5'))).toHaveLength(2);
    expect(rowWith('TOTAL')).toMatch(/TOTAL\s+│\s+1,020 │\s+2,400 │\s+30,100 │\s+410 │\s+89% │\s+0 │\s+~\$0\.0156 │/);
    expect(lines.at(-1)).toBe('cost is an estimate from list prices as of 2026-11');
    expect(table.endsWith('\n')).toBe(true);
  });

  it('styles the heads when colour is on', () => {
    const table = usageTable(sampleLedger(), { color: true });
    expect(hasAnsi(table)).toBe(true);
    expect(stripAnsi(table)).toBe(usageTable(sampleLedger(), { color: false }));
  });

  it('shows unknown costs as unknown and an empty session as a zero TOTAL', () => {
    const ledger = new UsageLedger();
    expect(usageTable(ledger, { color: false })).toMatch(/TOTAL\s+│\s+0 │\s+0 │\s+0 │\s+0 │\s+– │\s+0 │\s+~\$0\.0000 │/);
    ledger.add({ turn: 1, model: 'my-gateway-model', usage: usage(1, 0, 0, 1), durationMs: 1 });
    const table = usageTable(ledger, { color: false });
    expect(table).toMatch(/my-gateway-model\s+│.*│\s+unknown │/);
    expect(table).toMatch(/TOTAL.*│\s+unknown │/);
  });

  it('a missed column: the tokens a cache miss re-wrote, per request and in total, with a note', () => {
    const ledger = new UsageLedger();
    ledger.add({ turn: 1, model: 'claude-sonnet-5-5', usage: usage(10, 2_000, 0, 5), durationMs: 5 });
    ledger.add({ turn: 1, model: 'claude-sonnet-5-5', usage: usage(10, 1_500, 500, 5), durationMs: 5 });
    ledger.markMissed(1_500);
    const table = usageTable(ledger, { color: false });
    expect(table).toMatch(/│ 1 │ claude-sonnet-5-5 .*│\s+– │ /);
    expect(table).toMatch(/│ 2 │ claude-sonnet-5-5 .*│\s+1,500 │ /);
    expect(table).toMatch(/TOTAL.*│\s+1,500 │ /);
    expect(table).toContain('missed: cached tokens a request had to write again (the stderr line said why)');
  });
});
