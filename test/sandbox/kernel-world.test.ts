import { execFileSync } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseSandbox } from '../../src/sandbox/choose.js';
import { execCapped, type ExecResult } from '../../src/sandbox/exec.js';
import { GIT_BINARY } from '../../src/sandbox/git.js';
import { TABLES_ONLY, type Sandbox } from '../../src/sandbox/kernel.js';
import { bundledRg } from '../../src/sandbox/programs.js';

/**
 * Issue 32: the kernel layer holds without the second one. Every row calls the spawner directly with git and none of
 * spelunk's `-c` overrides, forced flags or isolating environment (TMPDIR too: git writes the blobs it hands a diff
 * driver, and a signature, to temporary files, and CHILD_ENV's TMPDIR that cannot exist would stop it first), against a repository that configures a program
 * for git to start. In each program's own world nothing runs (no shell, no other program: the marker stays absent and
 * the payload says nothing); the control rows make the same call with /usr whole (the payload runs inside the
 * sandbox and says so) and with no sandbox at all (it writes its marker, outside /tmp).
 */
const probe = await chooseSandbox('required');
const KERNEL: Sandbox | null = probe.ok ? probe.sandbox : null;
const SYSTEM_WORLD: Sandbox | null = KERNEL === null ? null : ({ ...KERNEL, world: 'system' } as Sandbox);
const WHY_SKIPPED = probe.ok ? '' : ` (skipped: ${probe.error})`;
const GIT = GIT_BINARY ?? '/usr/bin/git';
const AUTHOR = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' };

/** One way git starts a program the repository names: how to plant it and which git call triggers it. */
interface Vector {
  name: string;
  plant: (repo: string, payload: (tag: string) => string) => Promise<void>;
  argv: string[];
}

const VECTORS: Vector[] = [
  {
    name: 'diff.external',
    plant: async (repo, payload) => config(repo, 'diff.external', payload('external')),
    argv: ['diff', 'HEAD~1', 'HEAD'],
  },
  {
    name: 'diff.<driver>.command',
    plant: async (repo, payload) => {
      await attributes(repo, '* diff=drv');
      config(repo, 'diff.drv.command', payload('command'));
    },
    argv: ['diff', 'HEAD~1', 'HEAD'],
  },
  {
    name: 'diff.<driver>.textconv',
    plant: async (repo, payload) => {
      await attributes(repo, '* diff=drv');
      config(repo, 'diff.drv.textconv', payload('textconv'));
    },
    argv: ['show', 'HEAD'],
  },
  {
    name: 'the submodule diff driver (diff.submodule=diff, F1)',
    plant: plantSubmodule,
    argv: ['diff', 'HEAD~1', 'HEAD'],
  },
  {
    name: 'core.fsmonitor',
    plant: async (repo, payload) => config(repo, 'core.fsmonitor', payload('fsmonitor')),
    argv: ['status', '--porcelain'],
  },
  {
    name: 'core.pager (grep --open-files-in-pager runs it without a terminal)',
    plant: async (repo, payload) => config(repo, 'core.pager', payload('pager')),
    argv: ['grep', '--open-files-in-pager', '-e', 'two'],
  },
  {
    name: 'gpg.program (a signed commit shown with its signature)',
    plant: async (repo, payload) => {
      await script(path.join(repo, 'pwn-gpg'), payload('gpg'));
      config(repo, 'gpg.program', path.join(repo, 'pwn-gpg'));
      signHead(repo);
    },
    argv: ['log', '--show-signature', '-1'],
  },
  {
    name: 'core.sshCommand',
    plant: async (repo, payload) => config(repo, 'core.sshCommand', payload('ssh')),
    argv: ['ls-remote', 'ssh://example.invalid/repo.git'],
  },
  {
    name: 'a hook (.git/hooks/pre-commit)',
    plant: async (repo, payload) => script(path.join(repo, '.git', 'hooks', 'pre-commit'), payload('hook')),
    argv: ['hook', 'run', 'pre-commit'],
  },
  {
    name: 'a clean filter (filter.<driver>.clean on a changed file)',
    plant: async (repo, payload) => {
      await attributes(repo, '* filter=f');
      config(repo, 'filter.f.clean', payload('filter'));
      await fs.writeFile(path.join(repo, 'a.txt'), 'three\n');
    },
    argv: ['diff'],
  },
  {
    name: 'a shell alias',
    plant: async (repo, payload) => config(repo, 'alias.x', `!${payload('alias')}`),
    argv: ['x'],
  },
];

describe.skipIf(KERNEL === null)(`nothing a repository names runs in git's own world, with every override removed${WHY_SKIPPED}`, () => {
  let scratch: string;
  let marks: string;
  beforeAll(async () => {
    scratch = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-world-')));
    // Outside /tmp: the kernel sandbox's /tmp is private, so a marker there would prove nothing about an escape.
    marks = await fs.realpath(await fs.mkdtemp(path.join(existsSync('/var/tmp') ? '/var/tmp' : os.homedir(), 'spelunk-world-marks-')));
  });
  afterAll(async () => {
    await fs.rm(scratch, { recursive: true, force: true });
    await fs.rm(marks, { recursive: true, force: true });
  });

  it.each(VECTORS)('$name', async ({ name, plant, argv }) => {
    const repo = path.join(scratch, name.replace(/\W+/g, '-'));
    await makeRepo(repo);
    const pwn = path.join(repo, 'pwn');
    // The payload a hostile repository ships: a shell script, named in git's configuration (through `sh -c` when the
    // value has a space, which git runs through a shell, or directly).
    await script(pwn, `echo "PWNED-$1" >&2\necho ran > "${marks}/$1"\n`);
    const tagOf = (tag: string): string => `${pwn} ${tag}`;
    let tag = '';
    await plant(repo, (t) => {
      tag = t;
      return tagOf(t);
    });
    const marker = path.join(marks, tag);
    const run = (sandbox: Sandbox): Promise<ExecResult> =>
      execCapped(GIT, argv, { cwd: repo, timeoutMs: 10_000, sandbox, limiter: null, parentDeath: null, env: { TMPDIR: '/tmp' } });

    const own = await run(KERNEL!);
    // git started, tried, and found no shell (the value has a space) or no interpreter for the script.
    expect(own.stderr).toMatch(/cannot run .*: No such file or directory/);
    expect(`${own.stdout}${own.stderr}`).not.toContain('PWNED');
    expect(existsSync(marker)).toBe(false);

    // Control: with /usr whole the payload runs, inside the sandbox (it cannot write its marker there).
    const whole = await run(SYSTEM_WORLD!);
    expect(`${whole.stdout}${whole.stderr}`).toContain(`PWNED-${tag}`);
    expect(existsSync(marker)).toBe(false);

    // Control: with no sandbox at all it runs as the user and writes outside the root.
    const free = await run(TABLES_ONLY);
    expect(`${free.stdout}${free.stderr}`).toContain(`PWNED-${tag}`);
    expect(existsSync(marker)).toBe(true);
  });

  // The bash tool's programs that can start another, with the flags the tables refuse: the same class.
  it.each([
    ['find -exec', '/usr/bin/find', ['.', '-name', 'a.txt', '-exec', '/usr/bin/echo', 'PWNED-find', ';']],
    ['find -execdir through a shell', '/usr/bin/find', ['.', '-name', 'a.txt', '-execdir', '/bin/sh', '-c', 'echo PWNED-find-sh', ';']],
    ["sed's e command (runs a shell)", '/usr/bin/sed', ['-n', '1e echo PWNED-sed', 'a.txt']],
    ["rg's --pre", 'RG', ['--pre', '/usr/bin/sed', '-n', '.', 'a.txt']],
  ])('%s: starts nothing in its own world; with /usr whole it does', async (_name, program, args) => {
    const file = program === 'RG' ? await bundledRg() : program;
    if (file === null) throw new Error('the bundled rg is missing: npm ci installs it');
    const repo = path.join(scratch, 'programs');
    if (!existsSync(repo)) await makeRepo(repo);
    const run = (sandbox: Sandbox): Promise<ExecResult> => execCapped(file, args, { cwd: repo, timeoutMs: 10_000, sandbox, limiter: null });
    const own = await run(KERNEL!);
    expect(own.stdout).not.toMatch(/PWNED|two/);
    // sed's popen runs /bin/sh, whose failure sed reports as its own.
    expect(own.stderr).toMatch(/No such file or directory|not found|error in subprocess/);
    const whole = await run(SYSTEM_WORLD!);
    expect(whole.stdout).toMatch(/PWNED|two/);
  });

  it('a program that starts another gets "No such file or directory": no shell, no other program', async () => {
    const repo = path.join(scratch, 'plain');
    await makeRepo(repo);
    const shell = await execCapped('/usr/bin/sh', ['-c', 'echo $0 runs; ls; /usr/bin/cat a.txt; /bin/sh -c "echo nested"'], {
      cwd: repo, timeoutMs: 10_000, sandbox: KERNEL!, limiter: null,
    });
    // sh is a link (to dash here): its world is the real binary's.
    expect(shell.stdout).toMatch(/^\/usr\/bin\/\w+ runs\n$/);
    expect(shell.stderr).toMatch(/ls: not found[\s\S]*\/usr\/bin\/cat: not found[\s\S]*\/bin\/sh: not found/);
    const listed = await execCapped('/usr/bin/ls', ['-A', '/', '/usr/bin'], { cwd: repo, timeoutMs: 10_000, sandbox: KERNEL!, limiter: null });
    // Of the host only /usr/bin/ls itself and what the loader maps for it (under /lib*, /usr/lib*); no /bin, /etc, /proc.
    expect(listed.stdout).toMatch(/^\/:\n(dev\n)?(lib\n)?(lib64\n)?tmp\nusr\n\n\/usr\/bin:\nls\n$/);
    const git = await execCapped(GIT, ['-c', 'alias.x=!true', 'x'], { cwd: repo, timeoutMs: 10_000, sandbox: KERNEL!, limiter: null });
    expect(git.stderr).toMatch(/cannot run true: No such file or directory|cannot exec|No such file/);
  });

  // Known limit, stated in docs/sandbox.md: the world holds no program but the checked one, yet the root is shown as it
  // is, executable files included (bwrap 0.8 cannot mount it noexec). A static executable the repository ships, named
  // by configuration the overrides would neutralise, still runs: inside the sandbox (read-only, no network, no /proc).
  it('known limit: a static executable the repository ships still runs, inside the sandbox', async () => {
    const rg = await bundledRg();
    if (rg === null) throw new Error('the bundled rg is missing: npm ci installs it');
    const repo = path.join(scratch, 'static');
    await makeRepo(repo);
    await fs.copyFile(rg, path.join(repo, 'tool'));
    await fs.chmod(path.join(repo, 'tool'), 0o755);
    config(repo, 'diff.external', path.join(repo, 'tool'));
    const run = await execCapped(GIT, ['diff', 'HEAD~1', 'HEAD'], { cwd: repo, timeoutMs: 10_000, sandbox: KERNEL!, limiter: null, env: { TMPDIR: '/tmp' } });
    // rg took git's seven arguments as a pattern and paths: its own complaint shows that it ran.
    expect(run.stderr).toMatch(/^rg: /m);
  });

  it('the rg of @vscode/ripgrep is static: its world is its binary alone, and it searches there', async () => {
    const rg = await bundledRg();
    if (rg === null) throw new Error('the bundled rg is missing: npm ci installs it');
    const repo = path.join(scratch, 'rg');
    await makeRepo(repo);
    const found = await execCapped(rg, ['-n', 'two', '.'], { cwd: repo, timeoutMs: 10_000, sandbox: KERNEL! });
    expect(found.stdout).toBe('./a.txt:1:two\n');
  });
});

async function makeRepo(repo: string): Promise<void> {
  await fs.mkdir(repo, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  await fs.writeFile(path.join(repo, 'a.txt'), 'one\n');
  git(repo, 'add', 'a.txt');
  git(repo, 'commit', '-qm', 'one');
  await fs.writeFile(path.join(repo, 'a.txt'), 'two\n');
  git(repo, 'commit', '-qam', 'two');
}

function git(repo: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: repo, env: { PATH: '/usr/bin:/bin', ...AUTHOR }, encoding: 'utf8' });
}

function config(repo: string, key: string, value: string): void {
  git(repo, 'config', key, value);
}

async function attributes(repo: string, line: string): Promise<void> {
  await fs.writeFile(path.join(repo, '.git', 'info', 'attributes'), `${line}\n`);
}

async function script(file: string, body: string): Promise<void> {
  await fs.writeFile(file, `#!/bin/sh\n${body}`, { mode: 0o755 });
}

/** HEAD replaced by the same commit with a (bogus) PGP signature, which `--show-signature` hands to gpg.program. */
function signHead(repo: string): void {
  const body = git(repo, 'cat-file', 'commit', 'HEAD');
  const signature = 'gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n';
  const signed = body.replace(/^(committer .*\n)/m, `$1${signature}`);
  const id = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], { cwd: repo, input: signed, encoding: 'utf8' }).trim();
  git(repo, 'update-ref', 'HEAD', id);
}

/**
 * F1's plant: a gitlink `sub` moved between two commits of a submodule whose git directory (`.evilgit`, inside the
 * root) names a diff driver for every file, and `diff.submodule=diff` in the superproject, so `git diff A B` runs
 * `git diff` inside the submodule, which reads the submodule's configuration and attributes.
 */
async function plantSubmodule(repo: string, payload: (tag: string) => string): Promise<void> {
  const sub = path.join(repo, 'sub');
  await fs.mkdir(sub);
  git(sub, 'init', '-q', '-b', 'main', `--separate-git-dir=${path.join(repo, '.evilgit')}`, '.');
  await fs.writeFile(path.join(sub, 'keep.txt'), 'k\n');
  git(sub, 'add', '-A');
  git(sub, 'commit', '-qm', 's1');
  await fs.writeFile(path.join(sub, 'e.txt'), '');
  git(sub, 'add', '-A');
  git(sub, 'commit', '-qm', 's2');
  await fs.writeFile(path.join(sub, '.git'), 'gitdir: ../.evilgit\n');
  const evil = ['--git-dir', path.join(repo, '.evilgit')];
  await fs.writeFile(path.join(repo, '.evilgit', 'info', 'attributes'), '* diff=pwn\n');
  // Set by `init --separate-git-dir` on some versions; git would then read the submodule's work tree from there.
  try {
    git(repo, ...evil, 'config', '--unset', 'core.worktree');
  } catch {
    // Not set: nothing to remove.
  }
  git(repo, ...evil, 'config', 'diff.pwn.command', payload('submodule'));
  const s1 = git(repo, ...evil, 'rev-parse', 'HEAD~1').trim();
  const s2 = git(repo, ...evil, 'rev-parse', 'HEAD').trim();
  await fs.writeFile(path.join(repo, '.gitmodules'), '[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n');
  git(repo, 'add', '.gitmodules');
  git(repo, 'update-index', '--add', '--cacheinfo', `160000,${s1},sub`);
  git(repo, 'commit', '-qm', 'c1');
  git(repo, 'update-index', '--cacheinfo', `160000,${s2},sub`);
  git(repo, 'commit', '-qm', 'c2');
  config(repo, 'diff.submodule', 'diff');
}
