import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gitCommit, snapshotRepoState, verifyReadOnly } from '../../src/ci/readonly.js';

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

  it('verifies an untouched repository and records HEAD', async () => {
    const before = await snapshotRepoState(root);
    expect(before.git?.head).toMatch(/^[0-9a-f]{40}$/);
    expect(before.warning).toBeNull();
    expect(await verifyReadOnly(before)).toEqual({ verified: true, detail: null });
    expect(await gitCommit(root)).toBe(before.git?.head);
  });

  it.each<[string, () => void, string]>([
    ['a modified tracked file', () => appendFileSync(path.join(root, 'src/a.ts'), '// x\n'), 'modified: src/a.ts'],
    ['a created file', () => write('src/new.ts', 'x'), 'created: src/new.ts'],
    ['a file created in a new directory', () => write('fresh/deep/x.ts', 'x'), 'created: fresh/deep/x.ts'],
    ['a deleted file', () => rmSync(path.join(root, 'src/b.ts')), 'deleted: src/b.ts'],
    ['a staged change', () => (appendFileSync(path.join(root, 'src/a.ts'), 'y'), git(root, 'add', 'src/a.ts')), 'modified: src/a.ts'],
    ['a new commit', () => git(root, 'commit', '-q', '--allow-empty', '-m', 'x'), 'HEAD moved'],
  ])('detects %s', async (_name, change, fragment) => {
    const before = await snapshotRepoState(root);
    change();
    const after = await verifyReadOnly(before);
    expect(after.verified).toBe(false);
    expect(after.detail).toContain(fragment);
  });

  it('detects a second change to a file that was already dirty before the run', async () => {
    appendFileSync(path.join(root, 'src/a.ts'), '// local edit\n');
    write('notes.txt', 'untracked before the run');
    const before = await snapshotRepoState(root);
    expect(await verifyReadOnly(before)).toEqual({ verified: true, detail: null });
    appendFileSync(path.join(root, 'src/a.ts'), '// and again\n');
    appendFileSync(path.join(root, 'notes.txt'), '!');
    const after = await verifyReadOnly(before);
    expect(after.verified).toBe(false);
    expect(after.detail).toContain('modified: src/a.ts');
    expect(after.detail).toContain('modified: notes.txt');
  });

  it('detects a change to a git-ignored file the tools read, which status cannot see', async () => {
    const before = await snapshotRepoState(root);
    before.noteRead(path.join(root, 'dist/out.js'));
    appendFileSync(path.join(root, 'dist/out.js'), 'changed\n');
    expect(await verifyReadOnly(before)).toEqual({ verified: false, detail: 'modified: dist/out.js' });
  });

  it('ignores the paths it is told spelunk wrote itself', async () => {
    const before = await snapshotRepoState(root);
    write('report.sarif', '{}');
    expect((await verifyReadOnly(before)).verified).toBe(false);
    expect(await verifyReadOnly(before, { ignore: [path.join(root, 'report.sarif')] })).toEqual({ verified: true, detail: null });
  });

  it('with a subdirectory as root, compares only what lies below it', async () => {
    const sub = path.join(root, 'src');
    const before = await snapshotRepoState(sub);
    write('elsewhere.txt', 'outside the searched root');
    expect(await verifyReadOnly(before)).toEqual({ verified: true, detail: null });
    write('src/c.ts', 'x');
    expect((await verifyReadOnly(before)).detail).toBe('created: src/c.ts');
  });

  it('does not rewrite .git/index, although a plain git status would', async () => {
    // A newer mtime makes the index's stat data stale: a refreshing status writes a new index.
    const future = new Date(Date.now() + 60_000);
    const touch = (): void => utimesSync(path.join(root, 'src/a.ts'), future, future);
    touch();
    const hash = indexHash();
    const before = await snapshotRepoState(root);
    expect(await verifyReadOnly(before)).toEqual({ verified: true, detail: null });
    expect(indexHash()).toBe(hash);

    git(root, 'status', '--porcelain=v1');
    expect(indexHash()).not.toBe(hash);
  });

  it('reports no commit before the first one', async () => {
    const fresh = path.join(root, 'fresh');
    mkdirSync(fresh);
    git(fresh, 'init', '-q');
    expect(await gitCommit(fresh)).toBeNull();
    const before = await snapshotRepoState(fresh);
    expect(before.git).not.toBeNull();
    write('fresh/x.txt', 'x');
    expect((await verifyReadOnly(before)).detail).toBe('created: x.txt');
  });
});

describe('read-only proof outside git', () => {
  beforeEach(() => {
    write('a.txt', 'alpha\n');
    write('b.txt', 'beta\n');
  });

  it('has no git state and no warning', async () => {
    const before = await snapshotRepoState(root);
    expect(before.git).toBeNull();
    expect(before.warning).toBeNull();
    expect(await gitCommit(root)).toBeNull();
  });

  it('verifies when the files read are unchanged', async () => {
    const before = await snapshotRepoState(root);
    before.noteRead(path.join(root, 'a.txt'));
    expect(await verifyReadOnly(before)).toEqual({ verified: true, detail: null });
  });

  it.each<[string, () => void, string]>([
    ['modified', () => appendFileSync(path.join(root, 'a.txt'), 'more'), 'modified: a.txt'],
    ['deleted', () => rmSync(path.join(root, 'a.txt')), 'deleted: a.txt'],
  ])('detects a read file that was %s', async (_name, change, detail) => {
    const before = await snapshotRepoState(root);
    before.noteRead(path.join(root, 'a.txt'));
    change();
    expect(await verifyReadOnly(before)).toEqual({ verified: false, detail });
  });

  it('stamps a file at its first read, not at a later one', async () => {
    const before = await snapshotRepoState(root);
    before.noteRead(path.join(root, 'a.txt'));
    appendFileSync(path.join(root, 'a.txt'), 'more');
    before.noteRead(path.join(root, 'a.txt'));
    expect((await verifyReadOnly(before)).verified).toBe(false);
  });

  it('only proves what was read: a change to an unread file is not seen', async () => {
    const before = await snapshotRepoState(root);
    before.noteRead(path.join(root, 'a.txt'));
    appendFileSync(path.join(root, 'b.txt'), 'more');
    expect((await verifyReadOnly(before)).verified).toBe(true);
  });
});
