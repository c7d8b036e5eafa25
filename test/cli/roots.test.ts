import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runBinary } from '../support/binary.js';
import { runCli } from '../support/cli.js';
import { startMockApi, type MockApi } from '../support/mock-api.js';
import { BIN, PtySession } from '../support/pty.js';

// Issue 32 part 2 and F4: every subcommand that takes a root refuses the same roots, in one place (src/roots.ts),
// with one line and exit 2, before any program starts and before any request.
const SUBCOMMANDS: Array<[string, (root: string) => string[]]> = [
  ['ask', (root) => ['-C', root, 'where is main?']],
  ['the REPL', (root) => ['-C', root, '-i']],
  ['audit', (root) => ['audit', '-C', root, 'is input checked?']],
  ['locate', (root) => ['locate', '-C', root, 'mainLoop']],
  ['mcp', (root) => ['mcp', '-C', root]],
];

let api: MockApi;
let scratch: string;
beforeAll(async () => {
  api = await startMockApi();
  scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'spelunk-cli-roots-')));
});
afterAll(async () => {
  await api.close();
  rmSync(scratch, { recursive: true, force: true });
});

function env(extra: Record<string, string> = {}): Record<string, string> {
  return { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: api.url, ...extra };
}

/** A fresh repository below the scratch directory with one source file. */
function repo(name: string): string {
  const root = path.join(scratch, name);
  mkdirSync(path.join(root, 'src'), { recursive: true });
  writeFileSync(path.join(root, 'src/main.ts'), 'export function main() {}\n');
  return root;
}

const ROOTS = ['/', '/proc', '/proc/self', '/sys/kernel', '/dev', '/dev/pts'];
const SYSTEM_ROWS = ROOTS.flatMap((root) => SUBCOMMANDS.map(([name, argv]) => [root, name, argv] as const));

describe('system trees as the root', () => {
  it.each(SYSTEM_ROWS)('-C %s with %s: exit 2, one line, no request', async (root, _name, argv) => {
    const before = api.requests.length;
    const run = await runCli(argv(root), { env: env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^spelunk: the root \S+( \([^)]*\))? (is|is inside) [^\n]*; pass -C a repository directory\n$/);
    expect(run.stdout).toBe('');
    expect(api.requests.length).toBe(before);
  });

  it('the default root, a working directory of / (a container with WORKDIR /), is refused too', async () => {
    const run = await runCli(['where is main?'], { env: env(), cwd: '/' });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('spelunk: the root / is the whole filesystem (it holds /proc, /sys and /dev), not a repository; pass -C a repository directory\n');
  });

  const bwrap = spawnSync('/usr/bin/bwrap', ['--dev-bind', '/', '/', '--unshare-pid', '--proc', path.join(os.tmpdir(), 'spelunk-bwrap-probe'), '/bin/true']);
  it.skipIf(bwrap.status !== 0)(
    `a root with proc (or a device tree) mounted below it, by the built binary in a mount namespace${bwrap.status === 0 ? '' : ' (skipped: bwrap cannot mount proc here)'}`,
    () => {
      const jail = repo('jail');
      // The namespace's own /proc: with the host's, bwrap inside it (spelunk's sandbox) reads another process's
      // namespaces by the pid it sees, and fails when no host process has that pid.
      const run = (mount: string[]): string =>
        spawnSync('/usr/bin/bwrap', ['--dev-bind', '/', '/', '--unshare-pid', '--proc', '/proc', ...mount, process.execPath, BIN, 'locate', '-C', jail, 'mainLoop'], {
          encoding: 'utf8',
          env: { PATH: '/usr/bin:/bin' },
        }).stderr;
      expect(run(['--proc', path.join(jail, 'chroot/proc')])).toBe(
        `spelunk: the root ${jail} contains a proc mount at ${jail}/chroot/proc (a kernel interface: process environments, devices), so it is not a repository; pass -C a repository directory\n`,
      );
      expect(run(['--dev', path.join(jail, 'chroot/dev')])).toMatch(/contains a (devtmpfs|devpts) mount at .*chroot\/dev/);
      // Control: the same binary in the same namespace, with proc mounted beside the root rather than below it.
      expect(run(['--proc', path.join(scratch, 'beside-proc')])).toBe('');
    },
  );
});

describe('a root that is or holds the home directory', () => {
  const HOME_ROWS = SUBCOMMANDS.flatMap(([name, argv]) => [
    ['the home directory', name, argv, (home: string) => home, 'is your home directory'] as const,
    ['its parent', name, argv, (home: string) => path.dirname(home), 'contains your home directory'] as const,
  ]);

  it.each(HOME_ROWS)('%s with %s, not on a terminal: refused, naming --allow-home', async (_what, _name, argv, root, message) => {
    const home = repo('home-a/me');
    const before = api.requests.length;
    const run = await runCli(argv(root(home)), { env: env({ HOME: home }) });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`spelunk: the root ${message}`);
    expect(run.stderr).toContain('pass -C a repository directory, or --allow-home (SPELUNK_ALLOW_HOME=1) if you mean it');
    expect(run.stderr.split('\n')).toHaveLength(2);
    expect(api.requests.length).toBe(before);
  });

  it.each([
    ['--allow-home', ['--allow-home'], {}],
    ['SPELUNK_ALLOW_HOME=1', [], { SPELUNK_ALLOW_HOME: '1' }],
  ])('%s admits it', async (_what, flag, extra) => {
    const home = repo('home-b/me');
    const run = await runCli(['locate', ...flag, '-C', home, 'mainLoop'], { env: env({ HOME: home, ...extra }) });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('src/main.ts');
  });

  it('a repository below the home directory is an ordinary root', async () => {
    const home = repo('home-c/me');
    const run = await runCli(['locate', '-C', path.join(home, 'src'), 'mainLoop'], { env: env({ HOME: home }) });
    expect(run.code).toBe(0);
  });

  it('SPELUNK_ALLOW_HOME set to anything but 1 does not admit it', async () => {
    const home = repo('home-d/me');
    const run = await runCli(['locate', '-C', home, 'mainLoop'], { env: env({ HOME: home, SPELUNK_ALLOW_HOME: 'yes' }) });
    expect(run.code).toBe(2);
  });
});

describe('the home question on a real terminal (the built binary in a pty)', () => {
  let pty: PtySession | null = null;
  afterEach(() => {
    pty?.kill();
    pty = null;
  });

  function open(args: string[], extra: Record<string, string> = {}): { pty: PtySession; home: string } {
    const home = repo(`home-pty-${Math.random().toString(36).slice(2)}/me`);
    pty = new PtySession(['locate', '-C', home, ...args, 'mainLoop'], { HOME: home, ...extra });
    return { pty, home };
  }

  const QUESTION = /The root is your home directory \(.*\): its dotfiles \(\.ssh\/, \.aws\/, shell history\) would be searched like the repository's files\. Search it anyway\? \[y\/N\] $/;

  it('asks once; y runs it', async () => {
    const { pty: p } = open([]);
    await p.waitFor(QUESTION);
    p.type('y\r');
    expect(await p.exited).toBe(0);
    expect(p.screen()).toContain('src/main.ts');
    expect(p.screen().match(/Search it anyway/g)).toHaveLength(1);
  });

  it.each([['n\r'], ['\r'], ['whatever\r']])('answer %j: not started, exit 2', async (keys) => {
    const { pty: p } = open([]);
    await p.waitFor(QUESTION);
    p.type(keys);
    expect(await p.exited).toBe(2);
    expect(p.screen()).toContain('spelunk: not started; pass -C a repository directory');
    expect(p.screen()).not.toContain('src/main.ts');
  });

  it('Ctrl+C at the question: exit 130', async () => {
    const { pty: p } = open([]);
    await p.waitFor(QUESTION);
    p.type('\x03');
    expect(await p.exited).toBe(130);
    expect(p.screen()).not.toContain('src/main.ts');
  });

  it('CI set: refused without a question, even on a terminal', async () => {
    const { pty: p } = open([], { CI: 'true' });
    expect(await p.exited).toBe(2);
    expect(p.screen()).toContain('--allow-home (SPELUNK_ALLOW_HOME=1)');
    expect(p.screen()).not.toContain('[y/N]');
  });

  it('--allow-home: no question', async () => {
    const { pty: p } = open(['--allow-home']);
    expect(await p.exited).toBe(0);
    expect(p.screen()).not.toContain('[y/N]');
    expect(p.screen()).toContain('src/main.ts');
  });
});

describe('special files refused before anything runs (F4, F8)', () => {
  const PLANTS: Array<[string, (root: string) => void, string]> = [
    ['a FIFO .gitignore one level down', (root) => execFileSync('/usr/bin/mkfifo', [path.join(root, 'src/.gitignore')]), 'src/.gitignore is a FIFO'],
    ['a FIFO .rgignore three levels down', (root) => {
      mkdirSync(path.join(root, 'a/b/c'), { recursive: true });
      execFileSync('/usr/bin/mkfifo', [path.join(root, 'a/b/c/.rgignore')]);
    }, 'a/b/c/.rgignore is a FIFO'],
    ['a FIFO .gitattributes at the root', (root) => execFileSync('/usr/bin/mkfifo', [path.join(root, '.gitattributes')]), '.gitattributes is a FIFO'],
    ['a .git file pointing outside', (root) => {
      mkdirSync(path.join(root, 'sub'));
      writeFileSync(path.join(root, 'sub/.git'), `gitdir: ${scratch}/fake\n`);
    }, 'sub/.git is a .git file whose gitdir points outside the repository root'],
  ];
  const ROWS = PLANTS.flatMap(([what, plant, message]) => SUBCOMMANDS.map(([name, argv]) => [what, name, argv, plant, message] as const));

  it.each(ROWS)('%s, %s: exit 2, one stderr line naming it, no request', async (_what, name, argv, plant, message) => {
    const root = repo(`special-${Math.random().toString(36).slice(2)}`);
    plant(root);
    const before = api.requests.length;
    const run = await runCli(argv(root), { env: env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`^spelunk: ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[^\n]*\n$`));
    expect(api.requests.length).toBe(before);
    expect(name).toBeTruthy();
  });

  it('the built binary: locate over a FIFO .ignore ends at once (rg is never started)', async () => {
    const root = repo('special-binary');
    execFileSync('/usr/bin/mkfifo', [path.join(root, 'src/.ignore')]);
    const run = await runBinary(['locate', '-C', root, 'mainLoop'], { cwd: root, env: { HOME: scratch } });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'spelunk: src/.ignore is a FIFO: ripgrep and git open every file of that name and would wait on it (or read it without end); remove it, or pass -C a directory without it\n',
    );
  });
});
