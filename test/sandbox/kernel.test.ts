import { execFileSync } from 'node:child_process';
import { existsSync, promises as fs, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseSandbox } from '../../src/sandbox/choose.js';
import { CHILD_ENV, execCapped, useSandbox, type ExecResult } from '../../src/sandbox/exec.js';
import { GIT_BINARY } from '../../src/sandbox/git.js';
import { createBashTool } from '../../src/tools/bash.js';
import { createGitTool } from '../../src/tools/git.js';
import { bwrapArgs, TABLES_ONLY, type Sandbox } from '../../src/sandbox/kernel.js';
import { bundledRg, resolvePrograms } from '../../src/sandbox/programs.js';
import { missingFor } from '../support/installed.js';

/**
 * The kernel layer on its own: every row calls the spawner directly with a command the policy tables would refuse,
 * so what holds here holds because of bubblewrap, not because of the tables.
 */
const probe = await chooseSandbox('required');
const KERNEL: Sandbox | null = probe.ok ? probe.sandbox : null;
const WHY_SKIPPED = probe.ok ? '' : ` (skipped: ${probe.error})`;
const MARK = 'TOPSECRET-outside-the-root';
/**
 * The kernel sandbox with /usr whole, as before each program got its own world: for rows about the namespaces (the
 * private /tmp, the pid namespace), whose shells need other programs to try what they try.
 */
const SYSTEM_WORLD: Sandbox | null = KERNEL === null ? null : { ...KERNEL, world: 'system' } as Sandbox;

describe('chooseSandbox: auto falls back loudly, required fails closed, off says so', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-choose-'));
    await fs.mkdir(path.join(dir, 'none'));
    await fs.mkdir(path.join(dir, 'broken'));
    // A bwrap that cannot create namespaces, as on a distribution that restricts unprivileged user namespaces.
    await fs.writeFile(path.join(dir, 'broken', 'bwrap'), '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n', { mode: 0o755 });
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  it.each([
    ['auto', 'none', 'tables', /no kernel sandbox \(bwrap is not installed\).*apt-get install bubblewrap/],
    ['auto', 'broken', 'tables', /no kernel sandbox \(bwrap failed a trivial run \(No permissions to create new namespace\)\).*apt-get install bubblewrap/],
    ['off', 'none', 'tables', /--sandbox off: .*for debugging/],
  ] as const)('%s with %s bwrap: %s, with a notice', async (mode, which, kind, notice) => {
    const choice = await chooseSandbox(mode, [path.join(dir, which)]);
    expect(choice.ok && choice.sandbox.kind).toBe(kind);
    expect(choice.ok ? choice.notice : '').toMatch(notice);
  });

  it.each(['none', 'broken'])('required with %s bwrap fails with the reason and how to get it', async (which) => {
    const choice = await chooseSandbox('required', [path.join(dir, which)]);
    expect(choice.ok).toBe(false);
    expect(choice.ok ? '' : choice.error).toMatch(/^--sandbox required, but the kernel sandbox cannot run here: bwrap .*; install bubblewrap/);
  });

  it.skipIf(KERNEL === null)(`auto and required with a working bwrap: kernel, no notice${WHY_SKIPPED}`, async () => {
    for (const mode of ['auto', 'required'] as const) {
      const choice = await chooseSandbox(mode);
      expect(choice).toMatchObject({ ok: true, sandbox: { kind: 'kernel' }, notice: null });
    }
  });
});

describe('bwrapArgs: the shape of every sandbox', () => {
  let parent: string;
  let root: string;
  let outside: string;
  beforeAll(async () => {
    parent = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-bwrap-args-')));
    root = path.join(parent, 'repo');
    outside = path.join(parent, 'elsewhere');
    await fs.mkdir(path.join(root, 'sub'), { recursive: true });
    await fs.mkdir(outside);
    // A link from outside into the root: its real path is inside, so it needs no mount of its own either.
    await fs.symlink(path.join(root, 'sub'), path.join(parent, 'into-root'));
  });
  afterAll(() => fs.rm(parent, { recursive: true, force: true }));

  /** The sources of every `--ro-bind SOURCE TARGET`. */
  const mounts = (args: string[]): string[] => args.flatMap((a, i) => (a === '--ro-bind' ? [args[i + 1]!] : []));

  it('shows the root and the named paths read-only, /usr, /dev, an empty /tmp; no /proc, /etc or home; all namespaces new', () => {
    const args = bwrapArgs(root, { PATH: '/usr/bin' }, [], null);
    expect(args.slice(0, 6)).toEqual(['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--clearenv']);
    expect(args).toContain('--tmpfs');
    expect(args.join(' ')).toContain('--setenv PATH /usr/bin');
    expect(mounts(args)).toEqual(['/usr', root]);
    expect(args.join(' ')).not.toMatch(/--proc|--bind |\/etc|\/home|--share-net/);
    expect(args.slice(-2)).toEqual(['--chdir', root]);
  });

  // Every path here exists (the row once used paths that did not, so "left out" held for the wrong reason): only the
  // one outside both the root and /usr gets a mount, once, at its real path.
  it.each([
    ['a directory inside the root', (): string => path.join(root, 'sub'), false],
    ['the root itself', (): string => root, false],
    ['a link from outside into the root', (): string => path.join(parent, 'into-root'), false],
    ['a file under /usr', (): string => '/usr/bin/env', false],
    ['a missing path', (): string => path.join(parent, 'missing'), false],
    ['a directory outside the root and /usr', (): string => outside, true],
  ] as const)('%s: a second mount only when outside', (_name, visible, mounted) => {
    const args = bwrapArgs(root, {}, [visible(), visible()], null);
    expect(mounts(args)).toEqual(mounted ? ['/usr', root, outside] : ['/usr', root]);
  });
});

describe.skipIf(KERNEL === null)(`the kernel sandbox holds with the tables bypassed${WHY_SKIPPED}`, () => {
  let parent: string;
  let root: string;
  let home: string;
  let victim: string;
  const run = (file: string, args: string[], extra: { sandbox?: Sandbox; signal?: AbortSignal } = {}): Promise<ExecResult> =>
    execCapped(file, args, { cwd: root, timeoutMs: 10_000, sandbox: extra.sandbox ?? KERNEL!, signal: extra.signal, limiter: null });

  beforeAll(async () => {
    parent = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-kernel-')));
    root = path.join(parent, 'repo');
    home = path.join(parent, 'home');
    await fs.mkdir(path.join(home), { recursive: true });
    await fs.writeFile(path.join(parent, 'secret.txt'), `${MARK}\n`);
    await fs.writeFile(path.join(home, '.git-credentials'), `https://user:${MARK}@example.com\n`);
    await fs.mkdir(root);
    await fs.writeFile(path.join(root, 'a.txt'), 'inside\n');
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: root });
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-q', '--allow-empty', '-m', 'init'], { cwd: root });
    // Every kind of link out: relative, absolute, a directory, the root's parent, and git metadata git reads unasked.
    await fs.symlink('../secret.txt', path.join(root, 'rel-link'));
    await fs.symlink(path.join(parent, 'secret.txt'), path.join(root, 'abs-link'));
    await fs.symlink('..', path.join(root, 'up'));
    await fs.symlink(home, path.join(root, 'home-link'));
    await fs.symlink(path.join(parent, 'secret.txt'), path.join(root, '.git', 'info', 'grafts'));
    await fs.symlink(path.join(home, '.git-credentials'), path.join(root, '.git', 'shallow'));
    victim = path.join(os.tmpdir(), `spelunk-kernel-victim-${process.pid}`);
    await fs.writeFile(victim, 'keep me\n');
  });
  afterAll(async () => {
    await fs.rm(parent, { recursive: true, force: true });
    await fs.rm(victim, { force: true });
  });

  const git = '/usr/bin/git';
  it.each([
    ['cat a relative link out', '/usr/bin/cat', ['rel-link']],
    ['cat an absolute link out', '/usr/bin/cat', ['abs-link']],
    ['cat through a directory link to the parent', '/usr/bin/cat', ['up/secret.txt']],
    ['cat the parent by ..', '/usr/bin/cat', ['../secret.txt']],
    ['cat a link into a home directory', '/usr/bin/cat', ['home-link/.git-credentials']],
    ['grep following every link', '/usr/bin/grep', ['-R', MARK.slice(0, 9), '.']],
    ['find following links', '/usr/bin/find', ['-L', '.', '-name', 'secret.txt']],
    ['git log with info/grafts and shallow linked out', git, ['log', '--oneline']],
    ['git rev-list with info/grafts and shallow linked out', git, ['rev-list', '--all']],
    ['cat /etc/passwd', '/usr/bin/cat', ['/etc/passwd']],
    ['ls of /, showing what exists', '/usr/bin/ls', ['-a', '/']],
  ])('%s: nothing from outside reaches the output', async (_name, file, args) => {
    const result = await run(file, args);
    expect(`${result.stdout}${result.stderr}`).not.toContain(MARK.slice(0, 9));
    expect(result.stdout).not.toContain('root:x:0');
  });

  it('calls onSpawn once the child runs in bwrap (its world is worked out first, so not within the call itself)', async () => {
    const seen: string[] = [];
    const running = execCapped('/bin/sh', ['-c', 'sleep 0.3; echo done'], { cwd: root, timeoutMs: 10_000, sandbox: KERNEL!, limiter: null, onSpawn: () => seen.push('spawned') });
    seen.push('returned');
    await new Promise((resolve) => setTimeout(resolve, 200));
    seen.push('still running');
    expect((await running).stdout).toBe('done\n');
    expect(seen).toEqual(['returned', 'spawned', 'still running']);
  });

  it('rg -L over the tree sees the inside file and nothing outside', async () => {
    const rg = await bundledRg();
    if (rg === null) throw new Error('the bundled rg is missing: npm ci installs it');
    const result = await run(rg, ['-L', '-n', '--no-ignore', '--hidden', '.', '.']);
    expect(result.stdout).toContain('a.txt:1:inside');
    expect(`${result.stdout}${result.stderr}`).not.toContain(MARK.slice(0, 9));
  });

  it('only /usr, /dev, /tmp and the root exist; /proc, /etc, /home, /root do not', async () => {
    const result = await run('/usr/bin/ls', ['-d', '/usr', '/dev', '/tmp', root, '/proc', '/etc', '/home', '/root', os.homedir()]);
    expect(result.stdout.split('\n').filter(Boolean).sort()).toEqual(['/dev', '/tmp', '/usr', root].sort());
    for (const hidden of ['/proc', '/etc', '/home', '/root']) expect(result.stderr).toContain(`'${hidden}': No such file or directory`);
  });

  it('the environment is exactly the fixed one (bwrap adds PWD, the root)', async () => {
    const result = await run('/usr/bin/env', []);
    const expected = [...Object.entries(CHILD_ENV).map(([k, v]) => `${k}=${v}`), `PWD=${root}`];
    expect(result.stdout.trim().split('\n').sort()).toEqual(expected.sort());
  });

  it('the rows above can fail: without the kernel sandbox the same reads do reach outside', async () => {
    for (const [file, args] of [['/usr/bin/cat', ['abs-link']], [git, ['log', '--oneline']]] as const) {
      const result = await run(file, [...args], { sandbox: TABLES_ONLY });
      expect(`${result.stdout}${result.stderr}`).toContain(MARK.slice(0, 9));
    }
  });

  it.each([
    ['touch a new file', '/usr/bin/touch', ['new.txt']],
    ['truncate a file', '/usr/bin/truncate', ['-s', '0', 'a.txt']],
    ['remove a file', '/usr/bin/rm', ['-f', 'a.txt']],
    ['make a directory', '/usr/bin/mkdir', ['d']],
    ['rename a file', '/usr/bin/mv', ['a.txt', 'b.txt']],
    ['write through a shell redirect', '/usr/bin/sh', ['-c', 'echo x > a.txt; echo y >> new.txt']],
    ['write git state', git, ['-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-q', '--allow-empty', '-m', 'x']],
    ['change a mode', '/usr/bin/chmod', ['000', 'a.txt']],
  ])('%s in the root: refused by the kernel, nothing changes', async (_name, file, args) => {
    const before = listing(root);
    const result = await run(file, args);
    expect(result.exitCode).not.toBe(0);
    expect(listing(root)).toEqual(before);
    expect(readFileSync(path.join(root, 'a.txt'), 'utf8')).toBe('inside\n');
  });

  it("the host's /tmp is not the child's: a file there can be neither seen, changed nor removed, and nothing lands there", async () => {
    const name = path.basename(victim);
    const result = await run('/usr/bin/sh', ['-c', `cat /tmp/${name}; rm -f /tmp/${name}; echo new > /tmp/${name}.made; ls /tmp`], { sandbox: SYSTEM_WORLD! });
    expect(result.stdout).not.toContain('keep me');
    expect(readFileSync(victim, 'utf8')).toBe('keep me\n');
    expect(existsSync(`${victim}.made`)).toBe(false);
  });

  it('no network: a connection to a server on the loopback never arrives (it does without the sandbox)', async () => {
    let connections = 0;
    const server = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const connect = ['-c', `exec 3<>/dev/tcp/127.0.0.1/${port}`];
    try {
      const jailed = await run('/usr/bin/bash', connect);
      expect(jailed.exitCode).not.toBe(0);
      expect(connections).toBe(0);
      const free = await run('/usr/bin/bash', connect, { sandbox: TABLES_ONLY });
      expect(free.exitCode).toBe(0);
      await waitFor(() => connections === 1);
    } finally {
      server.close();
    }
  });

  it('a killed run leaves no process behind, even one that left its process group (it does without the pid namespace)', async () => {
    const tag = String(40_000 + (process.pid % 10_000));
    const escape = ['-c', `setsid /usr/bin/sleep ${tag} & /usr/bin/sleep ${Number(tag) + 1}`];
    for (const [sandbox, survives] of [[SYSTEM_WORLD!, false], [TABLES_ONLY, true]] as const) {
      const controller = new AbortController();
      const running = run('/usr/bin/bash', escape, { sandbox, signal: controller.signal });
      await waitFor(() => sleepers(tag).length > 0);
      controller.abort();
      expect((await running).aborted).toBe(true);
      await waitFor(() => (sleepers(tag).length > 0) === survives);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(sleepers(tag).length > 0).toBe(survives);
      for (const pid of sleepers(tag)) process.kill(pid, 'SIGKILL');
    }
  });
});

describe.skipIf(KERNEL === null)(`every tool form works the same under the kernel sandbox (nothing needs /proc, /etc or home)${WHY_SKIPPED}`, () => {
  let root: string;
  beforeAll(async () => {
    root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-kernel-tools-')));
    await fs.mkdir(path.join(root, 'src'));
    await fs.writeFile(path.join(root, 'src', 'a.txt'), 'inside\nsecond line\n');
    await fs.writeFile(path.join(root, 'b.js'), 'export const b = 1;\n');
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: root });
    execFileSync('git', ['add', '-A'], { cwd: root });
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-q', '-m', 'init'], { cwd: root });
  });
  afterAll(async () => {
    useSandbox(TABLES_ONLY);
    await fs.rm(root, { recursive: true, force: true });
  });

  const ctx = () => ({ root, signal: new AbortController().signal, timeoutMs: 10_000 });
  it.for<[string, string]>([
    ['bash', 'rg -n inside'],
    ['bash', 'rg --files'],
    ['bash', 'grep -rn line src'],
    ['bash', "find . -name '*.txt'"],
    // Numeric owners: with no /etc in the sandbox, `ls -l` shows uid and gid as numbers (docs/sandbox.md, threat model).
    ['bash', 'ls -lan src'],
    ['bash', 'cat src/a.txt'],
    ['bash', 'head -n 1 src/a.txt'],
    ['bash', 'tail -n 1 src/a.txt'],
    ['bash', 'wc -l src/a.txt b.js'],
    ['bash', 'file b.js src/a.txt'],
    ['bash', 'tree -a -I .git'],
    ['git', 'log --stat'],
    ['git', 'show HEAD:b.js'],
    ['git', 'ls-tree -r HEAD'],
  ])('%s %s: the same answer with and without bwrap', async ([tool, command], test) => {
    const missing = tool === 'bash' ? missingFor(command) : null;
    if (missing !== null) test.skip(missing);
    const programs = await resolvePrograms();
    const run = (): Promise<{ content: string; isError: boolean }> =>
      tool === 'bash' ? createBashTool(programs).run({ command }, ctx()) : createGitTool(GIT_BINARY!).run({ command }, ctx());
    useSandbox(TABLES_ONLY);
    const plain = await run();
    useSandbox(KERNEL!);
    const jailed = await run();
    useSandbox(TABLES_ONLY);
    expect(plain.isError).toBe(false);
    // rg walks files in parallel threads: the order of its lines is not part of the answer (it once differed under load).
    const lines = (r: { content: string; isError: boolean }) =>
      command.startsWith('rg ') ? { ...r, content: r.content.split('\n').sort() } : r;
    expect(lines(jailed)).toEqual(lines(plain));
  });
});

describe.skipIf(KERNEL === null)(`each program's own world answers as /usr whole did (issue 32)${WHY_SKIPPED}`, () => {
  let root: string;
  beforeAll(async () => {
    root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-kernel-world-')));
    await fs.mkdir(path.join(root, 'src'));
    await fs.writeFile(path.join(root, 'src', 'a.txt'), 'b 2\na 1\na 1\nc été\n');
    await fs.writeFile(path.join(root, 'src', 'b.txt'), 'a x\nc y\n');
    await fs.writeFile(path.join(root, 'data.json'), '{"name":"spelunk","list":[1,2,3]}\n');
    await fs.writeFile(path.join(root, 'b.js'), 'export const b = 1;\n');
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: root });
    execFileSync('git', ['add', '-A'], { cwd: root });
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-q', '-m', 'init'], { cwd: root });
    await fs.appendFile(path.join(root, 'b.js'), 'export const c = 2;\n');
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-qam', 'second'], { cwd: root });
    execFileSync('git', ['tag', 'v1'], { cwd: root });
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', 'notes', 'add', '-m', 'a note'], { cwd: root });
    await fs.writeFile(path.join(root, 'b.js'), 'changed\n');
  });
  afterAll(async () => {
    useSandbox(TABLES_ONLY);
    await fs.rm(root, { recursive: true, force: true });
  });

  const ctx = () => ({ root, signal: new AbortController().signal, timeoutMs: 10_000 });
  // Every program of the whitelist (a missing one is refused the same way in both worlds) and every git form, the
  // kernel-only ones included: the same answer in the program's own world as with /usr whole.
  it.for<[string, string]>([
    ['bash', 'rg -n été'],
    ['bash', 'grep -c a src/a.txt'],
    ['bash', 'egrep -n "a|c" src/b.txt'],
    ['bash', 'find src -type f'],
    ['bash', 'ls -la src'],
    ['bash', 'wc -m src/a.txt'],
    ['bash', 'file data.json b.js'],
    ['bash', 'tree src'],
    ['bash', 'sort -u src/a.txt'],
    ['bash', 'uniq -c src/a.txt'],
    ['bash', 'cut -d " " -f 2 src/a.txt'],
    ['bash', 'nl src/b.txt'],
    ['bash', 'tac src/b.txt'],
    ['bash', "stat -c '%n %s %F' src/a.txt"],
    ['bash', 'du -a src'],
    ['bash', 'diff src/a.txt src/b.txt'],
    ['bash', 'cmp src/a.txt src/b.txt'],
    ['bash', 'od -c src/b.txt'],
    ['bash', 'xxd src/b.txt'],
    ['bash', 'hexdump -C src/b.txt'],
    ['bash', 'strings data.json'],
    ['bash', 'basename src/a.txt'],
    ['bash', 'dirname src/a.txt'],
    ['bash', 'realpath src/a.txt'],
    ['bash', 'pwd'],
    ['bash', "sed -n '2p' src/a.txt"],
    ['bash', 'jq .list data.json'],
    ['bash', 'base64 src/b.txt'],
    ['bash', 'paste src/a.txt src/b.txt'],
    ['bash', 'sha256sum src/b.txt'],
    ['bash', 'md5sum src/b.txt'],
    ['bash', 'comm src/a.txt src/b.txt'],
    ['bash', 'join src/a.txt src/b.txt'],
    ['bash', 'head -c 5 src/a.txt'],
    ['git', 'log -p --stat'],
    ['git', 'show HEAD'],
    ['git', 'diff HEAD~1 HEAD'],
    ['git', 'diff'],
    ['git', 'status'],
    ['git', 'ls-files'],
    ['git', 'blame b.js'],
    ['git', 'grep -n const HEAD'],
    ['git', 'shortlog -sn'],
    ['git', 'describe --tags'],
    ['git', 'branch -a'],
    ['git', 'tag -l'],
    ['git', 'for-each-ref'],
    ['git', 'stash list'],
    ['git', 'worktree list'],
    ['git', 'notes list'],
    ['git', 'notes show HEAD'],
    ['git', 'reflog'],
    ['git', 'remote -v'],
    ['git', 'rev-list --count HEAD'],
    ['git', 'cat-file -p HEAD'],
    ['git', 'count-objects'],
  ])('%s %s', async ([tool, command], test) => {
    const missing = tool === 'bash' ? missingFor(command) : null;
    if (missing !== null) test.skip(missing);
    const programs = await resolvePrograms();
    const run = (): Promise<{ content: string; isError: boolean }> =>
      tool === 'bash' ? createBashTool(programs).run({ command }, ctx()) : createGitTool(GIT_BINARY!).run({ command }, ctx());
    useSandbox(SYSTEM_WORLD!);
    const whole = await run();
    useSandbox(KERNEL!);
    const own = await run();
    useSandbox(TABLES_ONLY);
    expect(whole.content).not.toMatch(/could not start|not found/);
    const lines = (r: { content: string; isError: boolean }) =>
      command.startsWith('rg ') ? { ...r, content: r.content.split('\n').sort() } : r;
    expect(lines(own)).toEqual(lines(whole));
  });

  // Decided: no git-core helper in git's world. git 2.39 runs `bisect` as git-core's shell script (sh, sed, cat…), so
  // the form cannot run there; with /usr whole it does. (git 2.40+ has bisect built in.)
  it('git bisect log: a shell script in git 2.39, so not in git\'s own world; it says so', async () => {
    execFileSync('git', ['bisect', 'start'], { cwd: root });
    try {
      useSandbox(KERNEL!);
      const own = await createGitTool(GIT_BINARY!).run({ command: 'bisect log' }, ctx());
      useSandbox(SYSTEM_WORLD!);
      const whole = await createGitTool(GIT_BINARY!).run({ command: 'bisect log' }, ctx());
      useSandbox(TABLES_ONLY);
      expect(whole.content).toContain('git bisect start');
      const script = existsSync(path.join(execFileSync('git', ['--exec-path'], { encoding: 'utf8' }).trim(), 'git-bisect--helper'));
      if (script) expect(own.content).toMatch(/'bisect' is not a git command/);
    } finally {
      execFileSync('git', ['bisect', 'reset'], { cwd: root, stdio: 'ignore' });
    }
  });
});

/** Names (with types) of everything below `dir`, sorted; a change to the tree changes it. */
function listing(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((entry) => `${path.relative(dir, path.join(entry.parentPath, entry.name))}${entry.isDirectory() ? '/' : ''}`)
    .sort();
}

/** Pids of `sleep TAG` processes (read from /proc of the host). */
function sleepers(tag: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      if (argv[0]?.endsWith('sleep') && argv[1] === tag && state !== 'Z') found.push(Number(entry));
    } catch {
      // exited while listing
    }
  }
  return found;
}

async function waitFor(condition: () => boolean, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
