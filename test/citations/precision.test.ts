import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { extractCitations } from '../../src/citations/extract.js';
import { verifyCitations } from '../../src/citations/verify.js';
import { useRepo } from '../support/temp-repo.js';
import { CITATION_FILES } from './citation-repo.js';
import { CITATION_ROWS, QUOTE_ROWS, type Expected } from './citation-table.js';

const DIR = new URL('../../fixtures/answers/', import.meta.url);
const TRUTH: Record<string, string[]> = JSON.parse(readFileSync(new URL('expected.json', DIR), 'utf8'));
const ROWS = [...CITATION_ROWS, ...QUOTE_ROWS];
const repo = useRepo(CITATION_FILES);

/**
 * `path`, `path:12` or `path:12-20`: how a citation is compared with the hand-written truth. `exists` applies the
 * verifier's one filesystem rule for extraction (a bare slash-less name counts only when it is a file); without it
 * (the fixtures' repositories are not here) every such name counts, which can only lower precision.
 */
function keys(answer: string, exists?: (p: string) => boolean): string[] {
  const found = extractCitations(answer).filter((c) => !c.weak || !exists || exists(c.path)).map((c) =>
    c.startLine === null ? c.path : c.endLine !== c.startLine ? `${c.path}:${c.startLine}-${c.endLine}` : `${c.path}:${c.startLine}`,
  );
  return [...new Set(found)];
}

function score(cases: Array<{ found: string[]; truth: string[] }>): { precision: number; recall: number; tp: number; fp: string[]; fn: string[] } {
  let tp = 0;
  const fp: string[] = [];
  const fn: string[] = [];
  for (const { found, truth } of cases) {
    for (const k of found) if (truth.includes(k)) tp += 1; else fp.push(k);
    for (const k of truth) if (!found.includes(k)) fn.push(k);
  }
  return { precision: tp / (tp + fp.length), recall: tp / (tp + fn.length), tp, fp, fn };
}

describe('extraction precision and recall (issue 9 measurements)', () => {
  it('on 20 answers in the styles of Claude, Codex, Copilot, Cursor, Gemini, Aider and Devin (fixtures/answers)', () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith('.md'));
    expect(files.sort()).toEqual(Object.keys(TRUTH).sort());
    expect(files).toHaveLength(20);
    const s = score(files.map((f) => ({ found: keys(readFileSync(new URL(f, DIR), 'utf8')), truth: TRUTH[f]! })));
    console.info(`fixtures: precision ${s.precision.toFixed(3)}, recall ${s.recall.toFixed(3)} (${s.tp} right, false: ${JSON.stringify(s.fp)}, missed: ${JSON.stringify(s.fn)})`);
    expect(s.precision).toBeGreaterThanOrEqual(0.95);
    expect(s.recall).toBeGreaterThanOrEqual(0.95);
  });

  it('on the citation table (its rows are the specification, so anything under 1 is a failing row)', () => {
    const format = ([p, start, end]: [string, number | null, number | null, string]) =>
      start === null ? p : end !== start ? `${p}:${start}-${end}` : `${p}:${start}`;
    const s = score(
      ROWS.filter((r) => !r.text.includes('{root}')).map((r) => ({
        found: keys(r.text, (p) => Object.hasOwn(CITATION_FILES, p)),
        truth: r.expected.map(format),
      })),
    );
    console.info(`table: precision ${s.precision.toFixed(3)}, recall ${s.recall.toFixed(3)} over ${ROWS.length} rows`);
    expect(s.fp).toEqual([]);
    expect(s.fn).toEqual([]);
  });

  it('of the verdicts on the table: every citation flagged bad is bad (no false alarm), and every bad one is flagged', async () => {
    const entry = ([p, start, end, status]: Expected): string => `${p}:${start ?? ''}-${end ?? ''} ${status}`;
    const cases = await Promise.all(
      ROWS.filter((r) => !r.text.includes('{root}')).map(async (r) => {
        const found = (await verifyCitations(repo.root, r.text)).map((c) => entry([c.path, c.start_line, c.end_line, c.status]));
        const truth = r.expected.map(entry);
        return { found: found.filter((e) => !e.endsWith(' ok')), truth: truth.filter((e) => !e.endsWith(' ok')) };
      }),
    );
    const s = score(cases);
    console.info(`verdicts: flagged-bad precision ${s.precision.toFixed(3)}, recall ${s.recall.toFixed(3)} (${s.tp} right, false alarms: ${JSON.stringify(s.fp)}, missed: ${JSON.stringify(s.fn)})`);
    expect(s.fp).toEqual([]);
    expect(s.fn).toEqual([]);
  });
});
