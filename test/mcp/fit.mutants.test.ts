import { describe, expect, it } from 'vitest';
import { ANSWER_FIT, AUDIT_FIT, fitResult, MAX_RESULT_BYTES } from '../../src/mcp/fit.js';

// How an MCP result over its size cap is fitted, in process (test/mcp/size.test.ts spawns the binary, where no mutant
// of src/mcp/fit.ts can be seen; scripts/mutation-areas.json, area "mcp-caps"): which list goes first, which items
// stay, the note, and that what is kept is the most that fits.
type Json = Record<string, any>;
const bytes = (r: unknown) => 2 * Buffer.byteLength(JSON.stringify(r), 'utf8');
const ASK_REST = 'ask_followup with a narrower question (one file or one part of the answer) to get them';
const AUDIT_REST = 'run `spelunk audit --output-format json` for the whole result, or audit a narrower question (one directory or one rule)';
const citation = (i: number, status = 'ok') => ({ path: `src/f${i}.ts`, line: i, status, quote: 'q'.repeat(400) });
const finding = (i: number, severity: string) => ({ rule_id: 'r', severity, title: `f${i}`, message: 'm'.repeat(300), path: 'a.ts', start_line: i, end_line: i });
const askResult = (citations: unknown[]): Json => ({ answer_markdown: 'a', citations, session_id: 's', truncated: false, stop_reason: 'end_turn', usage: {} });

describe('fitResult', () => {
  it('a result that fits is returned as it is', () => {
    const small = askResult([citation(1)]);
    expect(fitResult(small, ANSWER_FIT)).toBe(small);
  });

  it('citations are cut to the most that fit, the unverified ones kept first, in their listed order; the note joins notes', () => {
    const citations = Array.from({ length: 200 }, (_, i) => citation(i, i % 50 === 49 ? 'unverified' : 'ok'));
    const fitted = fitResult(askResult(citations), ANSWER_FIT) as Json;
    const kept = fitted.citations as { line: number; status: string }[];
    expect(bytes(fitted)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(kept.filter((c) => c.status === 'unverified').map((c) => c.line)).toEqual([49, 99, 149, 199]);
    expect(kept.map((c) => c.line)).toEqual([...kept.map((c) => c.line)].sort((a, b) => a - b));
    // The verified ones kept are the first of them.
    const ok = citations.filter((c) => c.status === 'ok');
    const keptOk = kept.filter((c) => c.status === 'ok');
    expect(keptOk.map((c) => c.line)).toEqual(ok.slice(0, keptOk.length).map((c) => c.line));
    const firstDropped = ok[keptOk.length]!;
    // One more would not fit: the cut keeps the most it can.
    expect(bytes({ ...fitted, citations: [...kept, firstDropped] })).toBeGreaterThan(MAX_RESULT_BYTES);
    expect(fitted).toMatchObject({ truncated: true, session_id: 's', answer_markdown: 'a' });
    expect(fitted.notes).toEqual([`[truncated: to stay under ~25k tokens this result leaves out ${200 - kept.length} of 200 citations; ${ASK_REST}]`]);
  });

  it('a long text inside a list item is cut to 2,000 characters first; when that is enough, nothing is left out', () => {
    const result = { ...askResult([{ ...citation(1), quote: 'x'.repeat(60_000) }, citation(2)]), notes: ['earlier'] };
    const fitted = fitResult(result, ANSWER_FIT) as Json;
    expect(fitted.citations).toEqual([{ ...citation(1), quote: `${'x'.repeat(2_000)}…[cut]` }, citation(2)]);
    expect(fitted.notes).toEqual(['earlier', `[truncated: to stay under ~25k tokens this result cuts its longest texts (marked …[cut]); ${ASK_REST}]`]);
  });

  it('audit: the run\'s records go before any finding, and the least severe findings before the rest', () => {
    const severities = ['low', 'critical', 'medium', 'high'];
    const findings = Array.from({ length: 200 }, (_, i) => finding(i, severities[i % 4]!));
    const result = {
      result: 'r', tool_calls: Array.from({ length: 30 }, (_, i) => ({ name: 'bash', input: `rg ${i}` })), cache_misses: [], citations: [],
      warnings: ['w'], audit: { verdict: 'fail', summary: 's', findings },
    };
    const fitted = fitResult(result, AUDIT_FIT) as Json;
    const kept = fitted.audit.findings as { severity: string; start_line: number }[];
    expect(bytes(fitted)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(fitted.tool_calls).toEqual([]);
    expect(fitted.audit).toMatchObject({ verdict: 'fail', summary: 's' });
    // Every critical finding (50) and high (50) is kept before any medium, and no low one while a medium is left out.
    const count = (s: string) => kept.filter((f) => f.severity === s).length;
    expect([count('critical'), count('high')]).toEqual([50, 50]);
    expect(count('low')).toBe(0);
    expect(kept.map((f) => f.start_line)).toEqual([...kept.map((f) => f.start_line)].sort((a, b) => a - b));
    // The warnings are records of the run too: cut before the findings, the note is the one left.
    expect(fitted.warnings).toEqual([`[truncated: to stay under ~25k tokens this result leaves out 30 of 30 tool_calls, 1 of 1 warnings, ${200 - kept.length} of 200 findings; ${AUDIT_REST}]`]);
  });

  it('a list the result does not have is passed over', () => {
    const result = { result: 'r'.repeat(60_000), tool_calls: 'not a list', warnings: [] };
    const fitted = fitResult(result, AUDIT_FIT);
    expect(fitted.tool_calls).toBe('not a list');
    expect(fitted.result).toMatch(/^r+…\[cut\]$/);
    expect(bytes(fitted)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
  });
});
