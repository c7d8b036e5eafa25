import { execFileSync, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDiff } from '../../src/audit/diff.js';
import { verifyCitations } from '../../src/citations/verify.js';
import { GIT_BINARY, runGit } from '../../src/sandbox/git.js';
import { checkGitMetadata, MAX_METADATA_ENTRIES } from '../../src/sandbox/git-metadata.js';
import { locateGitDir } from '../../src/sandbox/git-repo.js';
import { snapshotRepoState } from '../../src/sandbox/readonly.js';
import { createGitTool, gitAvailability } from '../../src/tools/git.js';

/**
 * The second red team's `.git` metadata findings as a table: every file git reads (and a few it does not, whose
 * presence is just as foreign), planted as a symlink out of the root, a FIFO and a device. git never makes any of
 * these in its directory; each must make every git caller refuse with the reason, quickly, without the outside file.
 */

const SECRET = 'OUTSIDE-SECRET-metadata-9d1e';
/** Paths below .git; each row replaces or creates that entry. */
const GIT_FILES = [
  'info/grafts', 'shallow', 'objects/info/commit-graphs/commit-graph-chain', 'objects/info/commit-graph', 'packed-refs',
  'objects/info/alternates', 'objects/info/packs', 'refs/heads/evil', 'refs/tags/deep/evil', 'logs/HEAD',
  'logs/refs/heads/main', 'config.worktree', 'config', 'HEAD', 'hooks/pre-commit', 'hooks', 'info/attributes',
  'info/exclude', 'index', 'objects/pack/pack-0.idx', 'objects/ab/cdef0123456789abcdef0123456789abcdef01', 'modules/sub/config',
  'objects/info', 'refs/heads',
];
/** Work-tree files git opens for history commands. */
const TREE_FILES = ['.gitattributes', '.mailmap', '.gitmodules'];

type Kind = 'symlink to an outside file' | 'symlink to a missing outside file' | 'FIFO' | 'device';
const KIND_WORD: Record<Kind, string> = {
  'symlink to an outside file': 'a symlink',
  'symlink to a missing outside file': 'a symlink',
  FIFO: 'a FIFO',
  device: 'a device',
};

let ws: string;
let template: string;
let head: string;
let canMknod = false;
let rows = 0;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('/usr/bin/git', ['-c', 'user.name=t', '-c', 'user.email=t@e', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    env: { PATH: '/usr/bin:/bin', HOME: ws, GIT_CONFIG_NOSYSTEM: '1' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A copy of the template repository with `rel` (below the root) replaced by an entry of `kind`. */
async function plant(rel: string, kind: Kind): Promise<string> {
  const root = path.join(ws, `row-${rows++}`);
  await fs.cp(template, root, { recursive: true, verbatimSymlinks: true });
  const at = path.join(root, rel);
  await fs.rm(at, { recursive: true, force: true });
  await fs.mkdir(path.dirname(at), { recursive: true });
  if (kind === 'symlink to an outside file') await fs.symlink(path.join(ws, 'secret.txt'), at);
  else if (kind === 'symlink to a missing outside file') await fs.symlink(path.join(ws, 'missing.txt'), at);
  else if (kind === 'FIFO') execFileSync('/usr/bin/mkfifo', [at]);
  else execFileSync('/usr/bin/mknod', [at, 'c', '1', '3']);
  return root;
}

beforeAll(async () => {
  ws = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-git-metadata-')));
  await fs.writeFile(path.join(ws, 'secret.txt'), `${SECRET}\n${'0'.repeat(40)} ${SECRET}\n`);
  template = path.join(ws, 'template');
  await fs.mkdir(path.join(template, 'src'), { recursive: true });
  await fs.writeFile(path.join(template, 'src', 'a.ts'), 'export const a = 1;\n');
  git(template, 'init', '-q');
  git(template, 'add', '-A');
  git(template, 'commit', '-q', '-m', 'init');
  head = git(template, 'rev-parse', 'HEAD').trim();
  try {
    execFileSync('/usr/bin/mknod', [path.join(ws, 'probe-device'), 'c', '1', '3'], { stdio: 'ignore' });
    canMknod = true;
  } catch {
    // Not root (or no CAP_MKNOD): the device rows skip.
  }
});
afterAll(async () => fs.rm(ws, { recursive: true, force: true }));

const KINDS: Kind[] = ['symlink to an outside file', 'symlink to a missing outside file', 'FIFO', 'device'];
const ROWS = [...GIT_FILES.map((rel) => `.git/${rel}`), ...TREE_FILES].flatMap((rel) => KINDS.map((kind) => [rel, kind] as [string, Kind]));

describe('a special file anywhere git reads: every git caller refuses, with the reason', () => {
  it.each(ROWS)('%s as a %s', async (rel, kind) => {
    if (kind === 'device' && !canMknod) {
      // mknod needs CAP_MKNOD; the FIFO and symlink rows cover the walk the same way.
      console.warn(`skipped: ${rel} as a device (mknod is not permitted here)`);
      return;
    }
    const root = await plant(rel, kind);
    const started = Date.now();
    const reason = `${rel} is ${KIND_WORD[kind]}`;
    const located = await locateGitDir(root);
    expect(located).toMatchObject({ ok: false, unsafe: true, reason: expect.stringContaining(reason) });
    expect(await gitAvailability(root)).toMatchObject({ available: false, reason: expect.stringContaining(reason) });
    const tool = await createGitTool(GIT_BINARY as string).run({ command: 'log --oneline -n 5' }, { root, signal: new AbortController().signal, timeoutMs: 20_000 });
    expect(tool.content).toContain(reason);
    expect(await runGit(root, ['rev-parse', 'HEAD'])).toMatchObject({ ok: false, unsafe: true, error: expect.stringContaining(reason) });
    const [cite] = await verifyCitations(root, `See ${head.slice(0, 7)}:src/a.ts:1.`);
    expect(cite).toMatchObject({ status: 'missing_file', detail: expect.stringContaining(reason) });
    await expect(loadDiff({ kind: 'git', base: 'HEAD', head: 'HEAD' }, root)).rejects.toThrow(reason);
    const snapshot = await snapshotRepoState(root);
    expect(snapshot.head).toBeNull();
    // Said once, by the session (see the one-shot rows in git-includes.test.ts), not again by the snapshot.
    expect(snapshot.warning).toBeNull();
    // Nothing waited on a FIFO (git's own timeout is 30 s), and nothing of the outside file came back.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(JSON.stringify([located, tool, cite, snapshot.warning])).not.toContain(SECRET);
  });

  it('the same reason whether the outside target exists or not (no existence oracle)', async () => {
    for (const rel of ['.git/packed-refs', '.git/objects/info/alternates', '.git/commondir', '.mailmap']) {
      const [present, missing] = [await plant(rel, 'symlink to an outside file'), await plant(rel, 'symlink to a missing outside file')];
      const reasons = await Promise.all([present, missing].map(async (root) => {
        const located = await locateGitDir(root);
        return located.ok ? 'ok' : located.reason.replace(root, 'ROOT');
      }));
      expect(reasons[0]).toBe(reasons[1]);
    }
  });

  it('a .git symlink or gitdir: file whose target is outside says the same whether the target exists', async () => {
    const results: string[] = [];
    for (const target of [path.join(template, '.git'), path.join(ws, 'no-such-dir')]) {
      const root = path.join(ws, `row-${rows++}`);
      await fs.mkdir(root);
      await fs.symlink(target, path.join(root, '.git'));
      const located = await locateGitDir(root);
      results.push(located.ok ? 'ok' : located.reason);
    }
    expect(results[0]).toContain('points outside');
    expect(results[1]).toBe(results[0]);
  });

  it('the fixture is live: plain git prints the outside file through a symlinked info/grafts, shallow and packed-refs', async () => {
    for (const rel of ['.git/info/grafts', '.git/shallow', '.git/packed-refs']) {
      const root = await plant(rel, 'symlink to an outside file');
      // Parse errors go to stderr, and git may still succeed.
      const said = [['log', '--oneline', '-n', '1'], ['for-each-ref']].map((args) => {
        const run = spawnSync('/usr/bin/git', args, { cwd: root, env: { PATH: '/usr/bin:/bin', HOME: ws }, encoding: 'utf8' });
        return run.stdout + run.stderr;
      });
      expect(said.join(''), rel).toContain(SECRET);
    }
  });

  it('an ordinary repository passes; of sockets, only git\'s own fsmonitor--daemon.ipc at the top is allowed', async () => {
    expect(await locateGitDir(template)).toMatchObject({ ok: true });
    const root = path.join(ws, `row-${rows++}`);
    await fs.cp(template, root, { recursive: true });
    const listen = (file: string) => new Promise<Server>((resolve) => {
      const server = createServer();
      server.listen(file, () => resolve(server));
    });
    const own = await listen(path.join(root, '.git', 'fsmonitor--daemon.ipc'));
    try {
      expect(await locateGitDir(root)).toMatchObject({ ok: true });
      const other = await listen(path.join(root, '.git', 'refs', 'fsmonitor--daemon.ipc'));
      try {
        expect(await locateGitDir(root)).toMatchObject({ ok: false, reason: expect.stringContaining('.git/refs/fsmonitor--daemon.ipc is a socket') });
      } finally {
        other.close();
      }
    } finally {
      own.close();
    }
  });

  it(`a git directory of more than ${MAX_METADATA_ENTRIES} entries is refused rather than half checked`, async () => {
    const budget = { left: 3 };
    const reason = await checkGitMetadata(template, path.join(template, '.git'), budget);
    expect(reason).toContain('too many to check');
  });
});
