import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gitCommit, snapshotRepoState, verifyReadOnly, wholeSeconds } from '../../src/sandbox/readonly.js';

let root: string;

/** Test-side git with an isolated config, so the developer's global settings cannot change what we measure. */
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: root, GIT_CONFIG_NOSYSTEM: '1' },
  });
}

function write(rel: string, content: string): void {
  mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  writeFileSync(path.join(root, rel), content);
}

/** Lets the clock pass the proof's margin, so the set-up's own writes predate the snapshot. */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 60));

/** The snapshot, taken once the set-up's writes are in the past. */
async function snapshot(dir = root): Promise<Awaited<ReturnType<typeof snapshotRepoState>>> {
  await settle();
  return snapshotRepoState(dir);
}

/** The proof's verdict without the HEAD it read at the end (the rows that check that HEAD say so). */
async function verdict(...args: Parameters<typeof verifyReadOnly>): Promise<{ verified: boolean; detail: string | null }> {
  const { head: _head, changes: _changes, complete: _complete, ...rest } = await verifyReadOnly(...args);
  return rest;
}

const indexHash = (): string => createHash('sha256').update(readFileSync(path.join(root, '.git', 'index'))).digest('hex');

beforeEach(() => {
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'spelunk-readonly-')));
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('read-only proof in a git work tree', () => {
  beforeEach(() => {
    write('src/a.ts', 'export const a = 1;\n');
    write('src/b.ts', 'export const b = 2;\n');
    write('.gitignore', 'dist/\n');
    write('dist/out.js', 'built\n');
    git(root, 'init', '-q');
    git(root, 'add', '.');
    git(root, 'commit', '-q', '-m', 'init');
  });

  // The line between "before the run" and "during the run" is the file clock itself, not Date.now() minus a margin:
  // a commit made the instant before spelunk starts (a CI checkout, a test's set-up) is never blamed on the run,
  // and a write the instant after the snapshot is always caught. Repeated, because a tick boundary is a matter of luck.
  it.each([
    ['a commit just before the snapshot is not a change during the run', 'before', true],
    ['a write just after the snapshot is a change during the run', 'after', false],
  ] as const)('%s (20 tries, no settling)', async (_name, when, verified) => {
    for (let i = 0; i < 20; i++) {
      if (when === 'before') {
        write('src/a.ts', `export const a = ${i};\n`);
        git(root, 'commit', '-q', '-am', `edit ${i}`);
      }
      const before = await snapshotRepoState(root);
      if (when === 'after') write('src/b.ts', `export const b = ${i};\n`);
      expect((await verifyReadOnly(before)).verified).toBe(verified);
    }
  });

  it('verifies an untouched repository and records HEAD', async () => {
    const before = await snapshot();
    expect(before.head).toMatch(/^[0-9a-f]{40}$/);
    // Read from the file clock, to the nanosecond.
    expect(before.sinceRef).toMatch(/^@\d+\.\d{9}$/);
    expect(before.warning).toBeNull();
    expect(await verdict(before)).toEqual({ verified: true, detail: null });
    expect(await gitCommit(root)).toBe(before.head);
  });

  it.each<[string, () => void, string]>([
    ['a modified tracked file', () => appendFileSync(path.join(root, 'src/a.ts'), '// x\n'), 'changed: src/a.ts'],
    ['a created file', () => write('src/new.ts', 'x'), 'changed: src/new.ts'],
    ['a file created in a new directory', () => write('fresh/deep/x.ts', 'x'), 'changed: fresh/deep/x.ts'],
    ['a deleted file', () => rmSync(path.join(root, 'src/b.ts')), 'entries created, deleted or renamed in: src/'],
    ['a staged change', () => (appendFileSync(path.join(root, 'src/a.ts'), 'y'), git(root, 'add', 'src/a.ts')), 'changed: .git/index'],
    ['a new commit', () => git(root, 'commit', '-q', '--allow-empty', '-m', 'x'), 'HEAD moved: '],
    ['a git-ignored file', () => appendFileSync(path.join(root, 'dist/out.js'), 'x'), 'changed: dist/out.js'],
    ['a mode change', () => chmodSync(path.join(root, 'src/a.ts'), 0o600), 'changed: src/a.ts'],
    ['a modification with the old mtime put back', () => {
      const file = path.join(root, 'src/a.ts');
      const { atime, mtime } = statSync(file);
      appendFileSync(file, 'z');
      utimesSync(file, atime, mtime);
    }, 'changed: src/a.ts'],
    ['a rename', () => renameSync(path.join(root, 'src/b.ts'), path.join(root, 'src/b2.ts')), 'changed: src/b2.ts'],
  ])('detects %s', async (_name, change, fragment) => {
    const before = await snapshot();
    change();
    const after = await verifyReadOnly(before);
    expect(after.verified).toBe(false);
    expect(after.detail).toContain(fragment);
  });

  it('detects a second change to a file that was already dirty before the run', async () => {
    appendFileSync(path.join(root, 'src/a.ts'), '// local edit\n');
    write('notes.txt', 'untracked before the run');
    const before = await snapshot();
    expect(await verdict(before)).toEqual({ verified: true, detail: null });
    appendFileSync(path.join(root, 'src/a.ts'), '// and again\n');
    appendFileSync(path.join(root, 'notes.txt'), '!');
    const after = await verifyReadOnly(before);
    expect(after.verified).toBe(false);
    expect(after.detail).toContain('changed: src/a.ts');
    expect(after.detail).toContain('changed: notes.txt');
  });

  it('names a file the tools read as modified, from its stamp, even without find', async () => {
    const before = await snapshotRepoState(root, { find: null });
    expect(before.warning).toContain('without find');
    before.noteRead(path.join(root, 'dist/out.js'));
    appendFileSync(path.join(root, 'dist/out.js'), 'changed\n');
    expect(await verdict(before, { find: null })).toEqual({ verified: false, detail: 'modified: dist/out.js' });
  });

  it('with a subdirectory as root, compares only what lies below it', async () => {
    const sub = path.join(root, 'src');
    const before = await snapshot(sub);
    write('elsewhere.txt', 'outside the searched root');
    expect(await verdict(before)).toEqual({ verified: true, detail: null });
    write('src/c.ts', 'x');
    expect((await verifyReadOnly(before)).detail).toBe('entries created, deleted or renamed in: ./; changed: c.ts');
  });

  it('does not rewrite .git/index, although a plain git status would', async () => {
    // A newer mtime makes the index's stat data stale: a refreshing status writes a new index.
    const future = new Date(Date.now() + 60_000);
    const touch = (): void => utimesSync(path.join(root, 'src/a.ts'), future, future);
    touch();
    const hash = indexHash();
    const before = await snapshot();
    expect(await verdict(before)).toEqual({ verified: true, detail: null });
    expect(indexHash()).toBe(hash);

    git(root, 'status', '--porcelain=v1');
    expect(indexHash()).not.toBe(hash);
  });

  it('reports no commit before the first one', async () => {
    const fresh = path.join(root, 'fresh');
    mkdirSync(fresh);
    git(fresh, 'init', '-q');
    expect(await gitCommit(fresh)).toBeNull();
    const before = await snapshot(fresh);
    expect(before.head).toBeNull();
    write('fresh/x.txt', 'x');
    expect((await verifyReadOnly(before)).detail).toBe('entries created, deleted or renamed in: ./; changed: x.txt');
    // The first commit made during the run moves HEAD from none, and a branch deleted moves it back to none.
    git(fresh, 'commit', '-q', '--allow-empty', '-m', 'first');
    const head = git(fresh, 'rev-parse', 'HEAD').trim();
    expect((await verifyReadOnly(before, { find: null })).detail).toBe(`HEAD moved: (none) → ${head}`);
    const committed = await snapshotRepoState(fresh, { find: null });
    git(fresh, 'update-ref', '-d', 'HEAD');
    expect((await verifyReadOnly(committed, { find: null })).detail).toBe(`HEAD moved: ${head} → (none)`);
  });

  it('a HEAD git gave up on at the start is not compared: the walk decides, and without find the proof fails closed', async () => {
    const before = await snapshotRepoState(root);
    const unknown = { ...before, head: null, headUnknown: true, warning: 'git gave up reading HEAD after 0.5 s' };
    // HEAD is a commit now, but nothing was written: a compared HEAD would read "moved: (none) → …".
    expect(await verdict(unknown)).toEqual({ verified: true, detail: null });
    expect((await verifyReadOnly({ ...unknown, headUnknown: false })).detail).toMatch(/^HEAD moved: \(none\) → [0-9a-f]{40}$/);
    expect(await verdict({ ...unknown }, { find: null })).toEqual({ verified: false, detail: 'HEAD could not be compared (git gave up reading HEAD after 0.5 s)' });
  });

  // The saved session records the HEAD the proof read at the end (run-question.ts), so the proof must hand back a
  // commit, none, or "unknown" exactly as git answered: unknown is never saved as a commit a resume would compare.
  it.each<[string, (root: string) => void, 'after' | null | undefined]>([
    ['a commit made during the run: the new HEAD', (dir) => git(dir, 'commit', '-q', '--allow-empty', '-m', 'during'), 'after'],
    ['the branch deleted during the run: none', (dir) => git(dir, 'update-ref', '-d', 'HEAD'), null],
    ['git not used (a FIFO where git reads): unknown', (dir) => execFileSync('/usr/bin/mkfifo', [path.join(dir, '.git', 'commondir')]), undefined],
  ])('hands back HEAD as read at the end: %s', async (_name, during, expected) => {
    const before = await snapshot();
    during(root);
    const proof = await verifyReadOnly(before);
    expect(proof.head).toBe(expected === 'after' ? git(root, 'rev-parse', 'HEAD').trim() : expected);
    expect(proof.head).not.toBe(before.head);
  });
});

describe('read-only proof outside git', () => {
  beforeEach(() => {
    write('a.txt', 'alpha\n');
    write('b.txt', 'beta\n');
  });

  it('has no HEAD and no warning', async () => {
    const before = await snapshot();
    expect(before.head).toBeNull();
    expect(before.warning).toBeNull();
    expect(await gitCommit(root)).toBeNull();
    expect((await verifyReadOnly(before)).head).toBeNull();
  });

  it('verifies when the files read are unchanged', async () => {
    const before = await snapshot();
    before.noteRead(path.join(root, 'a.txt'));
    expect(await verdict(before)).toEqual({ verified: true, detail: null });
  });

  it.each<[string, () => void, string]>([
    ['modified', () => appendFileSync(path.join(root, 'a.txt'), 'more'), 'modified: a.txt'],
    ['deleted', () => rmSync(path.join(root, 'a.txt')), 'deleted: a.txt'],
  ])('detects a read file that was %s', async (_name, change, detail) => {
    const before = await snapshot();
    before.noteRead(path.join(root, 'a.txt'));
    change();
    expect(await verifyReadOnly(before)).toMatchObject({ verified: false, detail: expect.stringContaining(detail) });
  });

  it('stamps a file at its first read, not at a later one', async () => {
    // Without find, so that only the stamps can tell.
    await settle();
    const before = await snapshotRepoState(root, { find: null });
    before.noteRead(path.join(root, 'a.txt'));
    appendFileSync(path.join(root, 'a.txt'), 'more');
    before.noteRead(path.join(root, 'a.txt'));
    expect(await verdict(before, { find: null })).toEqual({ verified: false, detail: 'modified: a.txt' });
  });

  it('sees a change to a file nobody read', async () => {
    const before = await snapshot();
    before.noteRead(path.join(root, 'a.txt'));
    appendFileSync(path.join(root, 'b.txt'), 'more');
    expect(await verdict(before)).toEqual({ verified: false, detail: 'changed: b.txt' });
  });

  it('without find, only proves what was read: a change to an unread file is not seen', async () => {
    await settle();
    const before = await snapshotRepoState(root, { find: null });
    before.noteRead(path.join(root, 'a.txt'));
    appendFileSync(path.join(root, 'b.txt'), 'more');
    expect((await verifyReadOnly(before, { find: null })).verified).toBe(true);
  });

  it('without find, a read file changed and put back to its old size and mtime is still caught by its ctime', async () => {
    const file = path.join(root, 'a.txt');
    // A whole-second mtime survives utimes exactly, so only the ctime can tell.
    utimesSync(file, 1_000_000_000, 1_000_000_000);
    await settle();
    const before = await snapshotRepoState(root, { find: null });
    before.noteRead(file);
    writeFileSync(file, 'ALPHA\n');
    utimesSync(file, 1_000_000_000, 1_000_000_000);
    expect(await verdict(before, { find: null })).toEqual({ verified: false, detail: 'modified: a.txt' });
  });

  it('fails closed when the walk cannot run', async () => {
    const before = await snapshot();
    const after = await verifyReadOnly(before, { find: '/bin/false' });
    expect(after.verified).toBe(false);
    expect(after.detail).toContain('could not walk the repository');
  });
});

describe('the proof\'s clock and its limits', () => {
  /** The snapshot's reference instant in epoch milliseconds. */
  const refMs = (sinceRef: string): number => Math.round(Number(sinceRef.slice(1)) * 1000);

  it.each<[string, (root: string) => string]>([
    ['inside the root', (dir) => path.join(dir, 'tmp')],
    ['the root itself', (dir) => dir],
  ])('with the temporary directory %s, no probe is written: Date.now() less 25 ms', async (_name, tmp) => {
    write('a.txt', 'a\n');
    mkdirSync(tmp(root), { recursive: true });
    await settle();
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = tmp(root);
    try {
      const t0 = Date.now();
      const before = await snapshotRepoState(root);
      const t1 = Date.now();
      expect(before.sinceRef).toMatch(/^@\d+\.\d{3}$/);
      expect(refMs(before.sinceRef)).toBeGreaterThanOrEqual(t0 - 25);
      expect(refMs(before.sinceRef)).toBeLessThanOrEqual(t1 - 25);
      // Nothing was created in the root to read the clock.
      expect(await verdict(before)).toEqual({ verified: true, detail: null });
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });

  it('whole-second mtimes alone do not make a filesystem coarse: the ctimes still have nanoseconds', async () => {
    write('a.txt', 'a\n');
    for (const entry of [root, path.join(root, 'a.txt')]) utimesSync(entry, 1_000_000_000, 1_000_000_000);
    expect((await snapshotRepoState(root)).sinceRef).toMatch(/^@\d+\.\d{9}$/);
  });

  it('leaves nothing in the temporary directory', async () => {
    write('a.txt', 'a\n');
    const tmp = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'spelunk-readonly-tmp-')));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    try {
      expect((await snapshotRepoState(root)).sinceRef).toMatch(/^@\d+\.\d{9}$/);
      expect(readdirSync(tmp)).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it.each<[string, [number, number][], boolean]>([
    ['nothing sampled', [], true],
    ['whole seconds everywhere', [[1_000_000_000, 2_000_000_000], [3_000_000_000, 0]], true],
    ['one ctime with nanoseconds', [[1_000_000_000, 2_000_000_000], [3_000_000_001, 0]], false],
    ['one mtime with nanoseconds', [[1_000_000_000, 2_000_000_000], [3_000_000_000, 999_999_999]], false],
  ])('timestamps are whole seconds: %s → %s', (_name, times, expected) => {
    expect(wholeSeconds(times.map(([ctime, mtime]) => ({ ctimeNs: BigInt(ctime), mtimeNs: BigInt(mtime) })))).toBe(expected);
  });

  it('outside git too, a write the instant after the snapshot is a change during the run (20 tries, no settling)', async () => {
    for (let i = 0; i < 20; i++) {
      const before = await snapshotRepoState(root);
      write('x.txt', `${i}`);
      expect((await verifyReadOnly(before)).verified).toBe(false);
    }
  });

  it('with / as the root, the temporary directory is inside it too: no probe (Date.now(), to the millisecond)', async () => {
    expect((await snapshotRepoState('/')).sinceRef).toMatch(/^@\d+\.\d{3}$/);
  });

  it('a root whose timestamps cannot be read counts as whole-second: Date.now() less 2 s', async () => {
    const t0 = Date.now();
    const before = await snapshotRepoState(path.join(root, 'no-such-dir'));
    const t1 = Date.now();
    expect(refMs(before.sinceRef)).toBeGreaterThanOrEqual(t0 - 2000);
    expect(refMs(before.sinceRef)).toBeLessThanOrEqual(t1 - 2000);
  });

  it('lists ten differences and counts the rest', async () => {
    const before = await snapshot();
    for (let i = 0; i < 12; i++) write(`f${i}.txt`, 'x');
    const { verified, detail } = await verifyReadOnly(before);
    expect(verified).toBe(false);
    // The root's entry and twelve files: ten shown, three counted.
    expect(detail?.split('; ')).toHaveLength(10);
    expect(detail).toMatch(/ \(and 3 more\)$/);
  });

  it('lists exactly ten differences without a count', async () => {
    const before = await snapshot();
    for (let i = 0; i < 9; i++) write(`f${i}.txt`, 'x');
    const { detail } = await verifyReadOnly(before);
    expect(detail?.split('; ')).toHaveLength(10);
    expect(detail).not.toContain('more)');
  });

  it('names a file the tools found missing and that appeared later "created", and the root itself by its path', async () => {
    const before = await snapshotRepoState(root, { find: null });
    // Missing before and after: no difference.
    before.noteRead(path.join(root, 'never.txt'));
    before.noteRead(path.join(root, 'later.txt'));
    before.noteRead(root);
    await settle();
    write('later.txt', 'x');
    expect(await verdict(before, { find: null })).toEqual({ verified: false, detail: `created: later.txt; modified: ${root}` });
  });

  it('fails closed when more changed entries appear than the walk may print', async () => {
    const before = await snapshot();
    // 4,500 names of ~240 bytes: over the walk's 1 MiB.
    const dir = path.join(root, 'many');
    mkdirSync(dir);
    for (let i = 0; i < 4_500; i++) writeFileSync(path.join(dir, `${String(i).padStart(6, '0')}${'n'.repeat(230)}`), '');
    expect(await verdict(before)).toEqual({ verified: false, detail: 'the repository changed during the run (more changed entries than can be listed)' });
  });

  describe('with a stand-in find', () => {
    /** A script in find's place: prints `stdout` (with \0 separators), `stderr`, and exits with `code`. */
    const fakeFind = (body: string): string => {
      const file = path.join(root, '..', `${path.basename(root)}-find`);
      writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
      return file;
    };
    afterEach(() => rmSync(path.join(root, '..', `${path.basename(root)}-find`), { force: true }));

    it.each<[string, string, { verified: boolean; detail: string | null }]>([
      ['nothing changed', 'exit 0', { verified: true, detail: null }],
      ['one line per entry type (type, ctime, name); records without a ctime are skipped', "printf 'd 1.5 \\0d 2 sub\\0f 3.25 a.txt\\0l 4 link\\0f\\0f x.txt\\0'", {
        verified: false, detail: 'entries created, deleted or renamed in: ./; entries created, deleted or renamed in: sub/; changed: a.txt; changed: link',
      }],
      ['a directory it could not read (exit 1 with a message): what it could read still counts', "printf 'f 1 a.txt\\0'; echo \"find: './x': Permission denied\" >&2; exit 1", {
        verified: false, detail: 'changed: a.txt',
      }],
      ['the same with nothing changed', "echo \"find: './x': Permission denied\" >&2; exit 1", { verified: true, detail: null }],
      ['exit 1 and no message', 'exit 1', { verified: false, detail: 'the read-only check could not walk the repository (exit 1)' }],
      ['another failure: its first message line', "printf '\\n  find: bad option\\nusage\\n' >&2; exit 2", {
        verified: false, detail: 'the read-only check could not walk the repository (find: bad option)',
      }],
      ['messages name find, not the path of its binary', 'echo "$0: bad" >&2; exit 2', { verified: false, detail: 'the read-only check could not walk the repository (find: bad)' }],
      ['killed by a signal', 'kill -TERM $$', { verified: false, detail: 'the read-only check could not walk the repository (exit SIGTERM)' }],
    ])('%s', async (_name, body, expected) => {
      const before = await snapshotRepoState(root);
      expect(await verdict(before, { find: fakeFind(body) })).toEqual(expected);
    });

    it('each change carries the entry it names and its ctime in ms (what run/concurrent.ts attributes by)', async () => {
      const before = await snapshotRepoState(root);
      const proof = await verifyReadOnly(before, { find: fakeFind("printf 'd 1700000000.25 sub\\0f 1700000001.5 sub/a b.txt\\0'") });
      expect(proof.changes).toEqual([
        { text: 'entries created, deleted or renamed in: sub/', path: 'sub/', ctimeMs: 1700000000250 },
        { text: 'changed: sub/a b.txt', path: 'sub/a b.txt', ctimeMs: 1700000001500 },
      ]);
      expect(proof.complete).toBe(true);
      expect((await verifyReadOnly(before, { find: null })).complete).toBe(false);
    });

    it('a walk that does not finish in time is not a proof', async () => {
      const before = await snapshotRepoState(root);
      expect(await verdict(before, { find: fakeFind('sleep 30'), findTimeoutMs: 300 })).toEqual({
        verified: false,
        detail: 'the read-only check did not finish within 0.3 s',
      });
    });
  });
});
