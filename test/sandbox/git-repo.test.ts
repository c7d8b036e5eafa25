import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execGit } from '../../src/sandbox/git.js';
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

/** Object directories `alt1` … `altN` in the root, each the alternate of the one before, starting from .git/objects. */
async function alternateChain(root: string, depth: number): Promise<void> {
  let from = path.join(root, '.git', 'objects');
  for (let n = 1; n <= depth; n += 1) {
    const next = path.join(root, `alt${n}`);
    await fs.mkdir(path.join(next, 'info'), { recursive: true });
    await fs.writeFile(path.join(from, 'info', 'alternates'), `${next}\n`);
    from = next;
  }
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

  it('accepts a commondir written with CRLF (git drops the trailing CR and LF)', async () => {
    const root = await repo('crlf-commondir', async (root) => {
      await fs.mkdir(path.join(root, '.git', 'common', 'objects'), { recursive: true });
      await fs.writeFile(path.join(root, '.git', 'commondir'), 'common\r\n');
    });
    expect(await locateGitDir(root)).toEqual({ ok: true, gitDir: path.join(root, '.git'), commonDir: path.join(root, '.git', 'common') });
  });

  it('accepts alternates nested five deep', async () => {
    const root = await repo('five-deep', async (root) => alternateChain(root, 5));
    expect(await locateGitDir(root)).toMatchObject({ ok: true });
  });

  it('accepts alternates of exactly 64 KiB (the longest read)', async () => {
    const root = await repo('exactly-64k', async (root) => {
      const entry = `${path.join(root, 'more-objects')}\n`;
      await fs.mkdir(path.join(root, 'more-objects'));
      await fs.writeFile(path.join(root, '.git', 'objects', 'info', 'alternates'), `${'#'.repeat(64 * 1024 - entry.length - 1)}\n${entry}`);
    });
    expect(await locateGitDir(root)).toMatchObject({ ok: true });
  });

  it('closes every file it opens', async () => {
    const root = await repo('fd-count', async (root) => {
      await fs.writeFile(path.join(root, '.git', 'commondir'), '.\n');
      await alternateChain(root, 2);
    });
    const open = async () => (await fs.readdir('/proc/self/fd')).length;
    const before = await open();
    for (let i = 0; i < 5; i += 1) expect(await locateGitDir(root)).toMatchObject({ ok: true });
    expect(await open()).toBe(before);
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
    }, '.git/commondir is a FIFO'],
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
    ['a quoted alternate without its closing quote', async (root) => {
      await fs.writeFile(path.join(root, '.git', 'objects', 'info', 'alternates'), '"/x\\tmp\n');
    }, 'quoted entry'],
    ['an alternates that is a directory', async (root) => {
      await fs.mkdir(path.join(root, '.git', 'objects', 'info', 'alternates'));
    }, 'objects/info/alternates is not a regular file'],
    ['alternates nested six deep', async (root) => alternateChain(root, 6), 'objects/info/alternates are nested more than 5 deep'],
    ['a second alternate pointing outside after one inside', async (root) => {
      await fs.mkdir(path.join(root, 'more-objects'));
      await fs.writeFile(path.join(root, '.git', 'objects', 'info', 'alternates'), `${path.join(root, 'more-objects')}\n${path.join(other, '.git', 'objects')}\n`);
    }, 'an objects/info/alternates entry points outside'],
    // git reads each line as it is: it trims nothing and takes `#` as a comment only in the first column, so a
    // line that looks clean once trimmed can name a link to another repository.
    ['an alternate with a trailing space naming a link to another repository', async (root) => {
      // The link lives in the work tree: one inside .git is refused as a link before any pointer is read.
      await fs.mkdir(path.join(root, 'evil'));
      await fs.symlink(path.join(other, '.git', 'objects'), path.join(root, 'evil '));
      await fs.writeFile(path.join(root, '.git', 'objects', 'info', 'alternates'), '../../evil \n');
    }, 'an objects/info/alternates entry points outside'],
    ['an indented "#" line, which git reads as an alternate', async (root) => {
      await fs.mkdir(path.join(root, '.git', 'objects', '  #x'));
      await fs.symlink(path.join(other, '.git', 'objects'), path.join(root, '  #x'));
      await fs.writeFile(path.join(root, '.git', 'objects', 'info', 'alternates'), '  #x/../../../  #x\n');
    }, 'an objects/info/alternates entry points outside'],
    ['an alternate line ending in CRLF, which git reads with the CR', async (root) => {
      await fs.mkdir(path.join(root, 'evil'));
      await fs.symlink(path.join(other, '.git', 'objects'), path.join(root, 'evil\r'));
      await fs.writeFile(path.join(root, '.git', 'objects', 'info', 'alternates'), '../../evil\r\n');
    }, 'an objects/info/alternates entry points outside'],
    // git reads the whole file, so reading only its first 64 KiB would miss the entries after them.
    ['alternates longer than 64 KiB with an entry pointing outside at the end', async (root) => {
      await fs.writeFile(path.join(root, '.git', 'objects', 'info', 'alternates'), `${'#'.repeat(70_000)}\n${path.join(other, '.git', 'objects')}\n`);
    }, 'objects/info/alternates is not a regular file of at most 64 KiB'],
    ['a commondir with a trailing space naming a link to another repository', async (root) => {
      await fs.mkdir(path.join(root, 'common', 'objects'), { recursive: true });
      await fs.symlink(path.join(other, '.git'), path.join(root, 'common '));
      await fs.writeFile(path.join(root, '.git', 'commondir'), '../common \n');
    }, 'the commondir of .git points outside'],
    ['a commondir whose second line continues the path (git reads the whole file)', async (root) => {
      await fs.mkdir(path.join(root, 'common', 'objects'), { recursive: true });
      await fs.symlink(path.join(other, '.git'), path.join(root, 'common\nx'));
      await fs.writeFile(path.join(root, '.git', 'commondir'), '../common\nx\n');
    }, 'the commondir of .git points outside'],
    ['a commondir longer than 64 KiB', async (root) => {
      await fs.writeFile(path.join(root, '.git', 'commondir'), `${'.'.repeat(70_000)}\n`);
    }, 'the commondir of .git is not a regular file of at most 64 KiB'],
    ['a gitdir: naming a directory that does not exist', async (root) => {
      await fs.rm(path.join(root, '.git'), { recursive: true });
      await fs.writeFile(path.join(root, '.git'), 'gitdir: missing\n');
    }, 'the gitdir: of .git does not exist or cannot be read'],
    ['a .git file whose gitdir: is not at the start of its line', async (root) => {
      await fs.rename(path.join(root, '.git'), path.join(root, 'store'));
      await fs.writeFile(path.join(root, '.git'), 'see gitdir: store\n');
    }, 'without a "gitdir:" line'],
    ['a .git file whose gitdir: line has a CR inside (git would read it all as the path)', async (root) => {
      await fs.rename(path.join(root, '.git'), path.join(root, 'store'));
      await fs.writeFile(path.join(root, '.git'), 'gitdir: store\rjunk\n');
    }, 'without a "gitdir:" line'],
    ['the object directory a symlink to another repository', async (root) => {
      await fs.rm(path.join(root, '.git', 'objects'), { recursive: true });
      await fs.symlink(path.join(other, '.git', 'objects'), path.join(root, '.git', 'objects'));
    }, '.git/objects is a symlink'],
  ])('refuses %s', async (name, edit, fragment) => {
    const made = await repo(name.replace(/\W+/g, '-'), edit);
    const root = name.startsWith('no .git') ? path.join(made, 'sub') : made;
    const located = await locateGitDir(root);
    expect(located.ok).toBe(false);
    if (!located.ok) expect(located.reason).toContain(fragment);
  });
});

describe('locateGitDir: a linked worktree (git worktree add) reads the repository it belongs to', () => {
  it('accepts the worktree: its git directory and the common directory lie outside the root, pinned for git', async () => {
    const main = await repo('wt-main');
    const linked = path.join(ws, 'wt-linked');
    git(main, 'worktree', 'add', '-q', linked);
    expect(await locateGitDir(linked)).toEqual({ ok: true, gitDir: path.join(main, '.git', 'worktrees', 'wt-linked'), commonDir: path.join(main, '.git'), linked: true });
    const log = await execGit(linked, ['log', '--format=%s'], { timeoutMs: 20_000, maxBytes: 65_536 });
    expect(log).toMatchObject({ exitCode: 0, stdout: 'init\n' });
  });

  it.each<[string, (root: string, main: string) => Promise<void>]>([
    ['a .git file naming another repository\'s worktree (its gitdir points elsewhere)', async (root, main) => {
      const other = path.join(ws, `wt-other-${Math.random().toString(36).slice(2)}`);
      git(main, 'worktree', 'add', '-q', other);
      await fs.writeFile(path.join(root, '.git'), `gitdir: ${path.join(main, '.git', 'worktrees', path.basename(other))}\n`);
    }],
    ['a .git file naming another repository\'s own git directory', async (root, main) => {
      await fs.writeFile(path.join(root, '.git'), `gitdir: ${path.join(main, '.git')}\n`);
    }],
    ['a .git file naming a worktrees/ directory that does not exist', async (root, main) => {
      await fs.writeFile(path.join(root, '.git'), `gitdir: ${path.join(main, '.git', 'worktrees', 'nope')}\n`);
    }],
  ])('refuses %s, with the same words whatever is there', async (_name, plant) => {
    const main = await repo(`wt-victim-${Math.random().toString(36).slice(2)}`);
    const root = path.join(ws, `wt-planted-${Math.random().toString(36).slice(2)}`);
    await fs.mkdir(root);
    await plant(root, main);
    expect(await locateGitDir(root)).toEqual({ ok: false, reason: 'the gitdir: of .git points outside the repository root, and not at a linked worktree of it (git worktree add)' });
  });

  it('keeps alternates outside the root refused in a linked worktree', async () => {
    const main = await repo('wt-alt-main');
    const linked = path.join(ws, 'wt-alt-linked');
    git(main, 'worktree', 'add', '-q', linked);
    await fs.writeFile(path.join(main, '.git', 'objects', 'info', 'alternates'), `${path.join(other, '.git', 'objects')}\n`);
    expect(await locateGitDir(linked)).toMatchObject({ ok: false, reason: expect.stringContaining('an objects/info/alternates entry points outside') });
  });
});
