import { execFileSync } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execGit, filterOverrides, findWorkTree, GIT_BINARY, runGit } from '../../src/sandbox/git.js';

let base: string;
let root: string;

beforeAll(async () => {
  base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-git-test-')));
  root = path.join(base, 'repo');
  await fs.mkdir(path.join(root, 'sub', 'deeper'), { recursive: true });
  await fs.writeFile(path.join(root, 'a.txt'), 'a\n');
  const env = { PATH: '/usr/bin:/bin', HOME: base, GIT_CONFIG_NOSYSTEM: '1' };
  for (const args of [['init', '-q'], ['add', '.'], ['-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-qm', 'x']]) {
    execFileSync('/usr/bin/git', args, { cwd: root, env, stdio: 'ignore' });
  }
});
afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

describe('findWorkTree', () => {
  it('finds the directory holding .git from the root or any directory below it', () => {
    expect(findWorkTree(root)).toBe(root);
    expect(findWorkTree(path.join(root, 'sub', 'deeper'))).toBe(root);
  });

  it('accepts a gitdir file (a linked work tree) and answers null where there is none', async () => {
    const linked = path.join(base, 'linked');
    await fs.mkdir(linked);
    await fs.writeFile(path.join(linked, '.git'), `gitdir: ${path.join(root, '.git')}\n`);
    expect(findWorkTree(linked)).toBe(linked);
    expect(findWorkTree('/')).toBeNull();
  });
});

describe('filterOverrides', () => {
  it.each<[string, string[]]>([
    ['', []],
    ['filter.evil.clean\0', ['-c', 'filter.evil.clean=', '-c', 'filter.evil.smudge=', '-c', 'filter.evil.process=', '-c', 'filter.evil.required=false']],
    // Several keys of one driver give one set of overrides; a driver name may hold dots.
    ['filter.lfs.clean\0filter.lfs.smudge\0filter.lfs.process\0filter.lfs.required\0', ['-c', 'filter.lfs.clean=', '-c', 'filter.lfs.smudge=', '-c', 'filter.lfs.process=', '-c', 'filter.lfs.required=false']],
    ['filter.a.b.clean\0', ['-c', 'filter.a.b.clean=', '-c', 'filter.a.b.smudge=', '-c', 'filter.a.b.process=', '-c', 'filter.a.b.required=false']],
    [' filter.spaced.clean\n\0', ['-c', 'filter.spaced.clean=', '-c', 'filter.spaced.smudge=', '-c', 'filter.spaced.process=', '-c', 'filter.spaced.required=false']],
    // Not filter keys: a prefix before "filter.", or no key after the driver name.
    ['xfilter.evil.clean\0filter.onlyname\0', []],
  ])('%j → %j', (names, expected) => {
    expect(filterOverrides(names)).toEqual(expected);
  });
});

describe('runGit', () => {
  it('reads HEAD from any directory of the work tree', async () => {
    const head = await runGit(path.join(root, 'sub'), ['rev-parse', 'HEAD']);
    expect(head).toMatchObject({ ok: true, stdout: expect.stringMatching(/^[0-9a-f]{40}\n$/) });
    // Unpinned, git finds the work tree itself: the subdirectory stays a subdirectory (GIT_WORK_TREE would make it the top).
    expect(await runGit(path.join(root, 'sub'), ['rev-parse', '--show-prefix'])).toEqual({ ok: true, stdout: 'sub/\n' });
  });

  it('gives git exactly the isolating environment, and removes its private HOME afterwards', async () => {
    // A shell alias prints the environment git's children would see (a test-only way in: spelunk passes no -c).
    const run = await runGit(root, ['-c', 'alias.env=!env', 'env']);
    if (!run.ok) throw new Error(run.error);
    const env = new Map(run.stdout.trim().split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
    // Git adds its own: the -c overrides for its children, its exec path before PATH, and the alias's shell state.
    // Every override, literally: a setting dropped or weakened is a reviewed diff here.
    expect(env.get('GIT_CONFIG_PARAMETERS')).toBe([
      "'core.fsmonitor'='false'", `'core.hooksPath'='${env.get('HOME')}'`, "'diff.external'=''", "'core.pager'='cat'",
      "'pager.log'='false'", "'log.showSignature'='false'", "'core.untrackedCache'='false'", "'core.sshCommand'='false'",
      "'core.askPass'=''", "'credential.helper'=''", "'gpg.program'=''", "'gpg.ssh.program'=''", "'gpg.x509.program'=''",
      "'format.pretty'='medium'", "'protocol.allow'='never'", "'core.quotepath'='false'", "'mailmap.file'=''", "'mailmap.blob'=''",
      "'core.attributesFile'='/dev/null'", "'core.excludesFile'='/dev/null'", "'core.commitGraph'='false'", "'core.multiPackIndex'='false'",
      "'advice.graftFileDeprecated'='false'", "'diff.submodule'='short'", "'submodule.recurse'='false'",
      "'status.submoduleSummary'='false'", "'diff.orderFile'='/dev/null'", "'blame.ignoreRevsFile'=''",
      ...['ui', 'advice', 'branch', 'diff', 'grep', 'interactive', 'push', 'remote', 'showBranch', 'status', 'transport'].map((k) => `'color.${k}'='never'`),
      "'blame.coloring'='none'", ...['ui', 'branch', 'clean', 'status', 'tag'].map((k) => `'column.${k}'='never'`), "'grep.fullName'='false'",
      "'alias.env'=''\\!'env'",
    ].join(' '));
    const own = /^GIT_(PREFIX|EXEC_PATH|DIR|WORK_TREE|CONFIG_PARAMETERS)$|^(PWD|OLDPWD|SHLVL|_)$/;
    expect(Object.fromEntries([...env].filter(([key]) => !own.test(key)))).toEqual({
      PATH: expect.stringMatching(/^(\/usr\/lib\/git-core:)?\/usr\/bin:\/bin$/),
      LANG: 'C.UTF-8',
      LC_ALL: 'C',
      HOME: expect.stringMatching(/\/spelunk-git-[^/]+$/),
      XDG_CONFIG_HOME: env.get('HOME'),
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_ATTR_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
      GIT_OPTIONAL_LOCKS: '0',
      GIT_NO_LAZY_FETCH: '1',
      GIT_CEILING_DIRECTORIES: base,
      GIT_GRAFT_FILE: '/dev/null',
      GIT_PAGER: 'cat',
      TMPDIR: '/dev/null/spelunk-no-temp-files',
      TZ: 'UTC',
    });
    expect(existsSync(env.get('HOME') as string)).toBe(false);
  });

  it.each<[string, () => Promise<unknown>, unknown]>([
    ['git not installed', () => runGit(root, ['rev-parse', 'HEAD'], null), { ok: false, error: 'git is not installed', exitCode: null }],
    ['no work tree', () => runGit('/', ['rev-parse', 'HEAD']), { ok: false, error: 'not a git repository', exitCode: null }],
    ['git fails: its first stderr line', () => runGit(root, ['rev-parse', '--verify', 'no-such-rev']), { ok: false, error: 'fatal: Needed a single revision', exitCode: 128 }],
    ['git fails silently: the exit code', () => runGit(root, ['rev-parse', '--verify', '--quiet', 'no-such-rev']), { ok: false, error: 'exit 1', exitCode: 1 }],
  ])('%s', async (_name, call, expected) => {
    expect(await call()).toEqual(expected);
  });

  it('uses git from the trusted directories only', () => {
    expect(GIT_BINARY).toMatch(/^\/(usr\/)?bin\/git$/);
  });
});

describe('execGit pins the checked git directory', () => {
  // The git tool hands git the directory locateGitDir verified (GIT_DIR, GIT_WORK_TREE), never letting git discover
  // one: with another repository given as the checked one, git must read that one, not the one it would discover.
  it('reads the history of the given gitDir, not the one git would find in the root', async () => {
    const root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-pin-')));
    try {
      const commit = (dir: string, message: string): void => {
        const env = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
        execFileSync('git', ['init', '-q', dir], { env });
        execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', message], { env });
      };
      commit(root, 'discovered');
      commit(path.join(root, 'checked'), 'pinned');
      const run = await execGit(root, ['log', '--format=%s', '-n', '1'], { timeoutMs: 20_000, maxBytes: 65_536, location: { gitDir: path.join(root, 'checked', '.git'), commonDir: path.join(root, 'checked', '.git') } });
      expect(run).toMatchObject({ exitCode: 0, stdout: 'pinned\n' });
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });
});

describe('the hardened call, step by step (a stand-in git that answers the filter query as told)', () => {
  // A shell script in git's place: `query` is its answer to the filter query (the exact argv spelunk sends), `call`
  // its behaviour for the real call. The work tree only needs `.git/objects`: nothing here runs the real git.
  let dir: string;
  let fake: (query: string, call: string) => Promise<string>;
  beforeAll(async () => {
    dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-fakegit-')));
    // runGit checks the repository first (locateGitDir): a git directory with an object directory passes.
    await fs.mkdir(path.join(dir, 'tree', '.git', 'objects'), { recursive: true });
    let n = 0;
    fake = async (query, call) => {
      const file = path.join(dir, `git${n++}`);
      const script = [
        '#!/bin/sh',
        // The call ends with the query's arguments exactly when it is the query.
        `case "$*" in *' config --name-only -z --get-regexp ^filter\\.') ${query};; esac`,
        call,
      ].join('\n');
      await fs.writeFile(file, `${script}\n`, { mode: 0o755 });
      return file;
    };
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });
  const tree = (): string => path.join(dir, 'tree');
  const argvOf = (stdout: string): string[] => stdout.split('\n').slice(0, -1);

  it('overrides every driver the query reports, before the caller\'s arguments', async () => {
    const git = await fake(`printf 'filter.evil.clean\\0filter.evil.smudge\\0filter.a.b.process\\0'; exit 0`, `printf '%s\\n' "$@"`);
    const run = await execGit(tree(), ['log', '-1'], { timeoutMs: 20_000, maxBytes: 65_536 }, git);
    if ('error' in run) throw new Error(run.error);
    const argv = argvOf(run.stdout);
    const tail = argv.slice(argv.indexOf('filter.evil.clean=') - 1);
    expect(tail).toEqual([
      '-c', 'filter.evil.clean=', '-c', 'filter.evil.smudge=', '-c', 'filter.evil.process=', '-c', 'filter.evil.required=false',
      '-c', 'filter.a.b.clean=', '-c', 'filter.a.b.smudge=', '-c', 'filter.a.b.process=', '-c', 'filter.a.b.required=false',
      'log', '-1',
    ]);
    // The fixed overrides come first, the same on both calls.
    expect(argv.slice(0, 2)).toEqual(['--no-pager', '--no-optional-locks']);
  });

  it('uses no output of a query that exits 1 (no filter configured)', async () => {
    const git = await fake(`printf 'filter.evil.clean\\0'; exit 1`, `printf '%s\\n' "$@"`);
    const run = await runGit(tree(), ['log', '-1'], git);
    if (!run.ok) throw new Error(run.error);
    expect(run.stdout).not.toContain('filter.evil');
    expect(argvOf(run.stdout).slice(-2)).toEqual(['log', '-1']);
  });

  it.each<[string, string, string, unknown]>([
    ['a query that fails otherwise is the failure; the call never runs', `echo 'bad config line 3' >&2; exit 2`, 'echo ran', { ok: false, error: 'bad config line 3', exitCode: 2 }],
    ['the call\'s result when the query finds no filter', 'exit 1', 'echo ran', { ok: true, stdout: 'ran\n' }],
    ['the first stderr line, surrounding blank space trimmed', 'exit 1', `printf '\\n  fatal: boom\\nmore\\n' >&2; exit 128`, { ok: false, error: 'fatal: boom', exitCode: 128 }],
    ['messages name git, not the path of its binary', 'exit 1', 'echo "$0: oops" >&2; exit 3', { ok: false, error: 'git: oops', exitCode: 3 }],
    ['killed by a signal with nothing said: the signal', 'exit 1', 'kill -TERM $$', { ok: false, error: 'exit SIGTERM', exitCode: null }],
  ])('runGit: %s', async (_name, query, call, expected) => {
    expect(await runGit(tree(), ['log'], await fake(query, call))).toEqual(expected);
  });

  it('runGit: a git that hangs is stopped at the time limit and says so', async () => {
    const git = await fake('exit 1', 'sleep 30');
    expect(await runGit(tree(), ['log'], git, 300)).toEqual({ ok: false, error: 'git took longer than 0.3 s', exitCode: null });
  });
});
