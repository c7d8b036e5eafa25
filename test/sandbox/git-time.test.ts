import { execFileSync, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyCitations } from '../../src/citations/verify.js';
import { snapshotRepoState, verifyReadOnly } from '../../src/sandbox/readonly.js';

/**
 * A run that calls no tool spends at most 2 s in git: HEAD at the start (0.5 s at most), HEAD at the end (0.5 s; the
 * saved session records it), a resumed session's HEAD (0.2 s) and the answer's commit citations (0.6 s together). The
 * repository here slows git down the way a hostile one can without any special file: an unsorted packed-refs of half
 * a million refs that git reads and sorts whole to find the branch HEAD names.
 *
 * Deterministic by a bound in work, not by the clock: each row injects a budget (BUDGET_MS) far below what that
 * work can take on any machine (reading 30 MB and sorting 500,000 names), so git always gives up, on a fast machine
 * as under load; nothing is timed and nothing skips. The defaults (0.5 s, 0.6 s) are the same code path with a
 * larger number.
 */

/** Git time each row allows: less than a git start on this kind of machine, let alone the work below. */
const BUDGET_MS = 5;

let ws: string;
let root: string;
let head: string;

beforeAll(async () => {
  ws = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-git-time-')));
  root = path.join(ws, 'repo');
  await fs.mkdir(root);
  await fs.writeFile(path.join(root, 'a.txt'), 'one\ntwo\n');
  const git = (...args: string[]) =>
    execFileSync('/usr/bin/git', ['-c', 'user.name=t', '-c', 'user.email=t@e', '-c', 'init.defaultBranch=main', ...args], { cwd: root, env: { PATH: '/usr/bin:/bin', HOME: ws }, encoding: 'utf8' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'init');
  head = git('rev-parse', 'HEAD').trim();
  // No "sorted" trait: git cannot binary-search the file and parses every line.
  const handle = await fs.open(path.join(root, '.git', 'packed-refs'), 'w');
  await handle.write('# pack-refs with: peeled\n');
  const chunk = Array.from({ length: 100_000 }, (_, i) => `${head} refs/tags/t${String(i).padStart(9, '0')}`).join('\n');
  for (let n = 0; n < 5; n++) await handle.write(`${chunk.replaceAll('refs/tags/t', `refs/tags/${n}t`)}\n`);
  await handle.write(`${head} refs/heads/main\n`);
  await handle.close();
  await fs.rm(path.join(root, '.git', 'refs', 'heads', 'main'));
  // The oracle for the setup: plain git, unbounded, still finds the branch (so a give-up below is the budget's doing).
  const plain = spawnSync('/usr/bin/git', ['rev-parse', '--verify', '--quiet', 'HEAD'], { cwd: root, env: { PATH: '/usr/bin:/bin', HOME: ws }, encoding: 'utf8' });
  expect(plain.stdout.trim()).toBe(head);
}, 120_000);
afterAll(async () => fs.rm(ws, { recursive: true, force: true }));

describe('git time in a run that calls no tool', () => {
  it('the start and end HEAD queries give up at their budget, and say so once', async () => {
    const before = await snapshotRepoState(root, { headTimeoutMs: BUDGET_MS });
    expect(before.head).toBeNull();
    expect(before.warning).toBe(`git gave up reading HEAD after ${BUDGET_MS / 1000} s`);
    const proof = await verifyReadOnly(before, { headTimeoutMs: BUDGET_MS });
    // HEAD was unknown at the start and at the end (what the saved session records as none, and a resume does not
    // compare); the find walk still proves the rest.
    expect(proof).toMatchObject({ verified: true, detail: null });
    expect(proof.head).toBeUndefined();
  });

  it('with time enough, the same queries answer (the row above can fail)', async () => {
    const before = await snapshotRepoState(root, { headTimeoutMs: 120_000 });
    expect(before).toMatchObject({ head, warning: null });
  });

  it('commit citations share one budget, and each one not checked says why', async () => {
    // A ref name, not a hex id: resolving it parses packed-refs.
    const answer = `See ${head.slice(0, 7)}:a.txt:1 and ${head.slice(0, 8)}:a.txt:2.`;
    const cites = await verifyCitations(root, answer, BUDGET_MS);
    expect(cites.map((c) => c.detail)).toEqual([0, 1].map(() => `not checked: git gave up after ${BUDGET_MS / 1000} s on this answer's commit citations`));
    const unhurried = await verifyCitations(root, answer, 120_000);
    expect(unhurried.map((c) => c.status)).toEqual(['ok', 'ok']);
  });
});
