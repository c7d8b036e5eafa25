import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locateGitDir } from '../../src/sandbox/git-repo.js';

let ws: string;
let other: string;

function git(cwd: string, ...args: string[]): void {
  execFileSync('/usr/bin/git', ['-c', 'user.name=t', '-c', 'user.email=t@e', '-c', 'init.defaultBranch=main', ...args], { cwd, env: { PATH: '/usr/bin:/bin', HOME: ws, GIT_CONFIG_NOSYSTEM: '1' }, stdio: 'ignore' });
}

/** A fresh repository `name` in the workspace with one commit; `edit` may then tamper with it. */
async function repo(name: string, edit?: (root: string) => Promise<void>): Promise<string> {
  const root = path.join(ws, name);
  await fs.mkdir(path.join(root, 'sub'), { recursive: true });
  await fs.writeFile(path.join(root, 'sub', 'a.txt'), 'a\n');
  git(root, 'init', '-q');
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'init');
  await edit?.(root);
  return root;
}

beforeAll(async () => {
  ws = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-git-repo-')));
  other = await repo('other');
});
afterAll(async () => fs.rm(ws, { recursive: true, force: true }));

describe('locateGitDir: the repository must lie inside the root', () => {
  it('accepts an ordinary repository: .git and its objects are inside', async () => {
    const root = await repo('plain');
    expect(await locateGitDir(root)).toEqual({ ok: true, gitDir: path.join(root, '.git'), commonDir: path.join(root, '.git') });
  });

  it('accepts a gitdir: file and alternates that stay inside the root', async () => {
    const root = await repo('inside-pointers', async (root) => {
      await fs.rename(path.join(root, '.git'), path.join(root, 'store'));
      await fs.writeFile(path.join(root, '.git'), 'gitdir: store\n');
      await fs.mkdir(path.join(root, 'more-objects'));
      await fs.writeFile(path.join(root, 'store', 'objects', 'info', 'alternates'), `# a comment\n${path.join(root, 'more-objects')}\n`);
    });
    expect(await locateGitDir(root)).toMatchObject({ ok: true, gitDir: path.join(root, 'store') });
  });

  it.each<[string, (root: string) => Promise<void>, string]>([
    ['no .git at the root (the root is a subdirectory of a work tree)', async () => {}, 'not the top of a git work tree'],
    ['a gitdir: file pointing at another repository', async (root) => {
      await fs.rm(path.join(root, '.git'), { recursive: true });
      await fs.writeFile(path.join(root, '.git'), `gitdir: ${path.join(other, '.git')}\n`);
    }, 'the gitdir: of .git points outside the repository root'],
    ['a relative gitdir: climbing out', async (root) => {
      await fs.rm(path.join(root, '.git'), { recursive: true });
      await fs.writeFile(path.join(root, '.git'), 'gitdir: ../other/.git\n');
    }, 'the gitdir: of .git points outside'],
    ['a .git file without gitdir:', async (root) => {
      await fs.rm(path.join(root, '.git'), { recursive: true });
      await fs.writeFile(path.join(root, '.git'), 'hello\n');
    }, 'without a "gitdir:" line'],
    ['a .git symlink to another repository', async (root) => {
      await fs.rm(path.join(root, '.git'), { recursive: true });
      await fs.symlink(path.join(other, '.git'), path.join(root, '.git'));
    }, '.git points outside the repository root'],
    ['a commondir pointing outside', async (root) => {
      await fs.writeFile(path.join(root, '.git', 'commondir'), `${path.join(other, '.git')}\n`);
    }, 'the commondir of .git points outside'],
    ['a commondir that is a FIFO (git would block reading it)', async (root) => {
      execFileSync('/usr/bin/mkfifo', [path.join(root, '.git', 'commondir')]);
    }, 'the commondir of .git is not a regular file'],
    ['objects/info/alternates naming another repository', async (root) => {
      await fs.writeFile(path.join(root, '.git', 'objects', 'info', 'alternates'), `${path.join(other, '.git', 'objects')}\n`);
    }, 'an objects/info/alternates entry points outside'],
    ['a relative alternate climbing out', async (root) => {
      await fs.writeFile(path.join(root, '.git', 'objects', 'info', 'alternates'), '../../../other/.git/objects\n');
    }, 'an objects/info/alternates entry points outside'],
    ['an alternate inside whose own alternates point outside', async (root) => {
      const inner = path.join(root, 'inner-objects');
      await fs.mkdir(path.join(inner, 'info'), { recursive: true });
      await fs.writeFile(path.join(inner, 'info', 'alternates'), `${path.join(other, '.git', 'objects')}\n`);
      await fs.writeFile(path.join(root, '.git', 'objects', 'info', 'alternates'), `${inner}\n`);
    }, 'an objects/info/alternates entry points outside'],
    ['a quoted alternate', async (root) => {
      await fs.writeFile(path.join(root, '.git', 'objects', 'info', 'alternates'), '"/x\\tmp"\n');
    }, 'quoted entry'],
    ['the object directory a symlink to another repository', async (root) => {
      await fs.rm(path.join(root, '.git', 'objects'), { recursive: true });
      await fs.symlink(path.join(other, '.git', 'objects'), path.join(root, '.git', 'objects'));
    }, 'the object directory points outside'],
  ])('refuses %s', async (name, edit, fragment) => {
    const made = await repo(name.replace(/\W+/g, '-'), edit);
    const root = name.startsWith('no .git') ? path.join(made, 'sub') : made;
    const located = await locateGitDir(root);
    expect(located.ok).toBe(false);
    if (!located.ok) expect(located.reason).toContain(fragment);
  });
});
