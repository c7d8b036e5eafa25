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
 * repository here slows git down the way a hostile one can without any special file: an unsorted packed-refs of two
 * million refs that git parses whole to find the branch HEAD names.
 */

let ws: string;
let root: string;
let head: string;
/** Milliseconds plain git takes for HEAD here; the rows prove the bound only when that is past the 0.5 s limit. */
let plainMs = 0;

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
  for (let n = 0; n < 20; n++) await handle.write(`${chunk.replaceAll('refs/tags/t', `refs/tags/${n}t`)}\n`);
  await handle.write(`${head} refs/heads/main\n`);
  await handle.close();
  await fs.rm(path.join(root, '.git', 'refs', 'heads', 'main'));
  const started = Date.now();
  spawnSync('/usr/bin/git', ['rev-parse', '--verify', '--quiet', 'HEAD'], { cwd: root, env: { PATH: '/usr/bin:/bin', HOME: ws } });
  plainMs = Date.now() - started;
}, 120_000);
afterAll(async () => fs.rm(ws, { recursive: true, force: true }));

describe('git time in a run that calls no tool', () => {
  it('the start and end HEAD queries give up at 0.5 s each, and say so once', async (ctx) => {
    if (plainMs < 600) ctx.skip(`plain git took ${plainMs} ms here, too fast to show the bound`);
    const started = Date.now();
    const before = await snapshotRepoState(root);
    expect(before.head).toBeNull();
    expect(before.warning).toBe('git gave up reading HEAD after 0.5 s');
    const proof = await verifyReadOnly(before);
    // HEAD was unknown at the start, so the end's read changes nothing; the find walk still proves the rest. The end's
    // read gives up too (HEAD unknown: what the saved session records as none, and a resume does not compare), unless
    // git, now with the packed-refs in the page cache, answers within its 0.5 s: then it is the real HEAD.
    expect(proof).toMatchObject({ verified: true, detail: null });
    expect([undefined, head]).toContain(proof.head);
    expect(Date.now() - started).toBeLessThan(1_000 + 1_000);
  });

  it('commit citations share 0.6 s, and each one not checked says why', async (ctx) => {
    if (plainMs < 600) ctx.skip(`plain git took ${plainMs} ms here, too fast to show the bound`);
    const started = Date.now();
    // A ref name, not a hex id: resolving it parses packed-refs.
    const cites = await verifyCitations(root, `See ${head.slice(0, 7)}:a.txt:1 and ${head.slice(0, 8)}:a.txt:2.`);
    expect(Date.now() - started).toBeLessThan(600 + 1_000);
    expect(cites.length).toBe(2);
    for (const cite of cites) expect(cite.status === 'ok' || cite.detail?.startsWith('not checked: git gave up after 0.6 s'), JSON.stringify(cite)).toBe(true);
  });
});
