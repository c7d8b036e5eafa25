import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHILD_ENV } from '../../src/sandbox/exec.js';
import { checkCommand, quoteCommand } from '../../src/sandbox/policy.js';
import { resolvePrograms, WHITELIST, type Programs } from '../../src/sandbox/programs.js';
import { findStrace, openedAmong, traceRun } from '../support/strace-oracle.js';
import { installedHere } from '../support/installed.js';
import { PROGRAM_POLICIES } from '../../src/sandbox/policy/tables.js';
import { boolFlagRows, DIFF_ROWS, valueFlagRows, type DiffRow } from './argv-differential-cases.js';

/**
 * The differential test of the command tables: for each argv shape, the real program run under strace shows which
 * words it opens as files (and whether it writes or starts a program), and the policy, given the same words with the
 * scratch directory as the root, must agree: an accepted command's confined paths are exactly the words the program
 * opens, and it writes nothing and starts nothing; a refused row names what the program would have done. Generated
 * rows (valueFlagRows) give every value-taking flag of every table a value named like a file, and check that the
 * program opens no word the policy left unconfined; boolFlagRows do the same for every flag read alone before a
 * pattern, script or filter operand.
 */

const STRACE = findStrace();
const SKIP = 'file' in STRACE ? null : STRACE.reason;

/** The real program's content for every planted file: one JSON value, one line with a blank (jq, cut and join read it). */
const CONTENT = '{"k": "a b"}\n';

let programs: Programs;
let base: string;
beforeAll(async () => {
  programs = await resolvePrograms();
  base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-argv-')));
});
afterAll(async () => fs.rm(base, { recursive: true, force: true }));

/** The words and each tail of a flag word (`-fp.txt` → `fp.txt`, `p.txt`, …, `=p.txt` → `p.txt`): what a program could open. */
function candidates(words: readonly string[]): string[] {
  const out = new Set<string>();
  for (const word of words) {
    out.add(word);
    if (!/^[-+@]/.test(word)) continue;
    for (let k = 1; k < word.length; k += 1) out.add(word.slice(k));
  }
  return [...out];
}

function inside(dir: string, candidate: string): string | null {
  if (candidate === '' || candidate.includes('\0') || path.isAbsolute(candidate)) return null;
  const abs = path.resolve(dir, candidate);
  return abs.startsWith(`${dir}/`) ? abs : null;
}

/** A scratch directory with a file (or, for row.dirs, a directory) named like every candidate. */
async function plant(scratch: string, row: DiffRow): Promise<void> {
  const names = candidates(row.words).filter((c) => inside(scratch, c) !== null);
  for (const name of [...names, ...(row.dirs ?? [])]) {
    const parts = name.split('/');
    for (let k = 1; k < parts.length; k += 1) {
      const prefix = inside(scratch, parts.slice(0, k).join('/'));
      if (prefix !== null) await fs.mkdir(prefix, { recursive: true });
    }
  }
  for (const dir of row.dirs ?? []) {
    await fs.mkdir(path.join(scratch, dir), { recursive: true });
    await fs.writeFile(path.join(scratch, dir, 'inner.txt'), CONTENT);
  }
  for (const name of names) {
    const abs = inside(scratch, name) as string;
    const exists = await fs.lstat(abs).then(() => true, () => false);
    if (!exists) await fs.writeFile(abs, CONTENT);
  }
  for (const [name, content] of Object.entries(row.files ?? {})) await fs.writeFile(path.join(scratch, name), content);
}

function rowName(row: DiffRow): string {
  const command = quoteCommand([row.program, ...row.words]);
  const missing = row.program !== 'rg' && !installedHere(row.program) ? ` [skipped: ${row.program} is not installed]` : '';
  return `${command}${row.refused === undefined ? '' : ' (refused)'}${row.subset ? ' (generated)' : ''}${missing}`;
}

describe.skipIf(SKIP !== null)(`argv differential: the policy reads each command line as the program does${SKIP === null ? '' : ` [skipped: ${SKIP}]`}`, () => {
  let n = 0;
  it.for([...DIFF_ROWS, ...valueFlagRows(PROGRAM_POLICIES), ...boolFlagRows(PROGRAM_POLICIES)].map((row) => [rowName(row), row] as const))('%s', async ([, row], ctx) => {
    const file = programs.get(row.program);
    if (file === undefined) return ctx.skip(`${row.program} is not installed`);
    n += 1;
    const scratch = path.join(base, String(n));
    const tmp = path.join(base, `${n}-tmp`);
    await fs.mkdir(scratch);
    await fs.mkdir(tmp);
    await plant(scratch, row);
    const verdict = await checkCommand(quoteCommand([row.program, ...row.words]), { root: scratch, programs });
    const trace = await traceRun((STRACE as { file: string }).file, file, row.words, scratch, { ...CHILD_ENV, TMPDIR: tmp });
    const opened = openedAmong(trace, candidates(row.words), scratch);
    const below = (p: string, word: string): boolean => p === word || p.startsWith(`${word}/`) || p.startsWith(`${path.resolve(scratch, word)}`);
    if (row.subset === true) {
      if (!verdict.ok) return;
      expect(trace.writes, 'an accepted command writes nothing').toEqual([]);
      expect(trace.execs, 'an accepted command starts no other program').toEqual([]);
      const confined = new Set(verdict.paths.map((abs) => path.relative(scratch, abs) || '.'));
      const unconfined = opened.map((c) => path.relative(scratch, path.resolve(scratch, c)) || '.').filter((p) => !confined.has(p));
      return expect(unconfined, 'words the program opened that the policy did not confine').toEqual([]);
    }
    if (!verdict.ok) {
      expect(row.refused, `refused: ${verdict.reason}`).toBeDefined();
      expect(verdict.reason).toContain(row.refused?.fragment);
      const evidence = row.refused?.evidence ?? {};
      if (evidence.writes === '') expect(trace.writes, 'the program writes somewhere').not.toEqual([]);
      else if (evidence.writes !== undefined) expect(trace.writes.some((p) => below(p, evidence.writes as string)), `writes ${evidence.writes}: ${trace.writes.join(', ')}`).toBe(true);
      if (evidence.execs === true) expect(trace.execs, 'the program starts another one').not.toEqual([]);
      if (evidence.opens !== undefined) expect(opened).toContain(evidence.opens);
      return;
    }
    expect(row.refused, `accepted as ${JSON.stringify(verdict.args)}`).toBeUndefined();
    expect(trace.writes, 'an accepted command writes nothing').toEqual([]);
    expect(trace.execs, 'an accepted command starts no other program').toEqual([]);
    const rel = (abs: string): string => path.relative(scratch, abs) || '.';
    const confined = [...new Set(verdict.paths.map(rel))].sort();
    const real = [...new Set(opened.map((c) => rel(path.resolve(scratch, c))))].sort();
    expect({ confined, exit: trace.exitCode === 0 ? 0 : trace.stderr.trim().split('\n')[0] })
      .toEqual({ confined: real, exit: expect.anything() });
    // What spelunk spawns is the checked argv (paths rewritten, flags forced): it must open the same files.
    if (verdict.file === file && JSON.stringify(verdict.args) === JSON.stringify(row.words)) return;
    const spawned = await traceRun((STRACE as { file: string }).file, verdict.file, verdict.args, scratch, { ...CHILD_ENV, TMPDIR: tmp });
    expect(spawned.writes, 'the spawned argv writes nothing').toEqual([]);
    expect(spawned.execs, 'the spawned argv starts no other program').toEqual([]);
    const ran = openedAmong(spawned, candidates(verdict.args), scratch).map((c) => rel(path.resolve(scratch, c)));
    expect([...new Set(ran)].sort(), `spawned ${JSON.stringify(verdict.args)}`).toEqual(confined);
  });
});

it('the differential table covers every whitelisted program with its argv shapes, and every value flag', () => {
  const covered = new Set(DIFF_ROWS.map((row) => row.program));
  expect(WHITELIST.filter((name) => !covered.has(name))).toEqual([]);
  expect(DIFF_ROWS.length).toBeGreaterThanOrEqual(400);
  expect(valueFlagRows(PROGRAM_POLICIES).length).toBeGreaterThanOrEqual(200);
  expect(boolFlagRows(PROGRAM_POLICIES).length).toBeGreaterThanOrEqual(150);
});
