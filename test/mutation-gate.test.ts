import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = path.resolve(import.meta.dirname, '../scripts/mutation-gate.mjs');
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A Stryker JSON report (the fields the gate reads): each file's mutants by status. */
function report(files: Record<string, Record<string, number>>): string {
  const entries = Object.entries(files).map(([file, counts]) => [
    file,
    { mutants: Object.entries(counts).flatMap(([status, n]) => Array.from({ length: n }, (_, i) => ({ id: `${status}${i}`, status }))) },
  ]);
  return JSON.stringify({ schemaVersion: '1', files: Object.fromEntries(entries) });
}

/** Runs the gate over the given reports and threshold table; its exit status and what it printed. */
function gate(reports: Record<string, string>, thresholds: Record<string, number> | string): { status: number; out: string; err: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spelunk-gate-'));
  dirs.push(dir);
  for (const [name, body] of Object.entries(reports)) writeFileSync(path.join(dir, name), body);
  const table = path.join(dir, 'thresholds.json');
  const rows = typeof thresholds === 'string' ? null : Object.entries(thresholds).map(([f, t]) => [f, { threshold: t }]);
  writeFileSync(table, rows === null ? (thresholds as string) : JSON.stringify({ files: Object.fromEntries(rows) }));
  const env = { ...process.env, MUTATION_REPORTS: dir, MUTATION_THRESHOLDS: table };
  try {
    const out = execFileSync(process.execPath, [SCRIPT], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { status: 0, out, err: '' };
  } catch (err) {
    const e = err as { status: number; stdout: string; stderr: string };
    return { status: e.status, out: e.stdout, err: e.stderr };
  }
}

describe('scripts/mutation-gate.mjs: each file at or above its threshold', () => {
  it.each([
    // [what, reports, thresholds, exit status, stderr lines]
    ['at its threshold passes (timeouts count as killed)', { 'mutation-a.json': report({ 'src/a.ts': { Killed: 7, Timeout: 1, Survived: 2 } }) }, { 'src/a.ts': 80 }, 0, []],
    ['below it fails with file, score and threshold', { 'mutation-a.json': report({ 'src/a.ts': { Killed: 7, Survived: 3 } }) }, { 'src/a.ts': 75 }, 1,
      ['mutation gate: src/a.ts scored 70.00% (mutation-a.json), below its threshold 75% in thresholds.json']],
    ['uncovered mutants count against the score', { 'mutation-a.json': report({ 'src/a.ts': { Killed: 8, NoCoverage: 2 } }) }, { 'src/a.ts': 81 }, 1,
      ['mutation gate: src/a.ts scored 80.00% (mutation-a.json), below its threshold 81% in thresholds.json']],
    ['ignored and compile errors do not count', { 'mutation-a.json': report({ 'src/a.ts': { Killed: 9, Survived: 1, Ignored: 5, CompileError: 5 } }) }, { 'src/a.ts': 90 }, 0, []],
    ['a file in no report fails', { 'mutation-a.json': report({ 'src/a.ts': { Killed: 1 } }) }, { 'src/a.ts': 50, 'src/b.ts': 50 }, 1,
      [expect.stringMatching(/^mutation gate: src\/b\.ts is in no report under .*; run its area \(npm run mutate\)$/)]],
    ['no reports at all fails for every file', {}, { 'src/a.ts': 50 }, 1, [expect.stringMatching(/^mutation gate: src\/a\.ts is in no report/)]],
    ['files in other reports are judged too', { 'mutation-a.json': report({ 'src/a.ts': { Killed: 1 } }), 'mutation-b.json': report({ 'src/b.ts': { Survived: 1 } }) },
      { 'src/a.ts': 50, 'src/b.ts': 50 }, 1, ['mutation gate: src/b.ts scored 0.00% (mutation-b.json), below its threshold 50% in thresholds.json']],
    ['files of no row are not judged', { 'mutation-a.json': report({ 'src/a.ts': { Killed: 1 }, 'src/c.ts': { Survived: 1 } }) }, { 'src/a.ts': 50 }, 0, []],
  ] as const)('%s', (_what, reports, thresholds, status, lines) => {
    const got = gate(reports, thresholds);
    expect(got.status).toBe(status);
    expect(got.err.split('\n').filter(Boolean)).toEqual(lines);
    if (status === 0) expect(got.out).toMatch(/^mutation gate: \d+ files at or above their thresholds\n$/);
  });

  it('an unreadable threshold table is one line, not a stack trace', () => {
    const got = gate({}, '{ not json');
    expect(got.status).toBe(1);
    expect(got.err.trim().split('\n')).toEqual([expect.stringMatching(/^mutation gate: cannot read .*thresholds\.json \(.*\); it lists each file's threshold$/)]);
  });

  it('the checked-in table names only files some area mutates, each with a threshold below its measured score', () => {
    const root = path.resolve(import.meta.dirname, '..');
    const table = JSON.parse(readFileSync(path.join(root, 'scripts/mutation-thresholds.json'), 'utf8')) as { files: Record<string, { threshold: number; measured: number; commit: string }> };
    const areas = JSON.parse(readFileSync(path.join(root, 'scripts/mutation-areas.json'), 'utf8')) as Record<string, { mutate: string[] }>;
    const globs = Object.values(areas).flatMap((a) => a.mutate).map((g) => new RegExp(`^${g.replace(/\./g, '\\.').replace(/\*\*\/\*/g, '.*').replace(/\*/g, '[^/]*')}$`));
    for (const [file, row] of Object.entries(table.files)) {
      expect(globs.some((g) => g.test(file)), file).toBe(true);
      expect(row.threshold, file).toBeLessThan(row.measured);
      expect(row.commit, file).toMatch(/^[0-9a-f]{7,40}$/);
    }
  });
});
