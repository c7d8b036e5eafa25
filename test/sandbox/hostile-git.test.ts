import { execFileSync, spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { reply, startMockApi, text, toolUse, type MockApi, type Reply } from '../support/mock-api.js';
import { GIT_BINARY, runGit } from '../../src/sandbox/git.js';
import { createGitTool } from '../../src/tools/git.js';
import { GIT_ALLOWED } from './git-policy-cases.js';
import { BIN, PtySession } from '../support/pty.js';
import { snapshot } from './sandbox-fixture.js';

/**
 * A repository that arrived with a hostile `.git` (an archive, a CI cache): every configuration key we know that
 * makes git run a program points at a script that leaves a marker, stat data is stale so a refreshing git would
 * re-read (and filter) every file, and `bin/git` / `bin/rg` stand first on PATH. spelunk runs as the README's CI
 * recipe does: from the parent directory, with `-C code`. Nothing may run, nothing may change, no secret may leak.
 */

const CANARY = 'sk-ant-canary-hostile-git-51f0';
/** A file outside the root that the configuration names as a file to read (blame ignore list, diff order, mailmap). */
const OUTSIDE_SECRET = 'OUTSIDE-SECRET-git-config-3c9e';
const HOOKS = ['applypatch-msg', 'pre-applypatch', 'post-applypatch', 'pre-commit', 'pre-merge-commit', 'prepare-commit-msg',
  'commit-msg', 'post-commit', 'pre-rebase', 'post-checkout', 'post-merge', 'pre-push', 'pre-receive', 'update',
  'proc-receive', 'post-receive', 'post-update', 'reference-transaction', 'push-to-checkout', 'pre-auto-gc',
  'post-rewrite', 'sendemail-validate', 'fsmonitor-watchman', 'p4-changelist', 'p4-prepare-changelist',
  'p4-post-changelist', 'p4-pre-submit', 'post-index-change'];

let ws: string;
let root: string;
let markers: string;
let api: MockApi;

/** A script that records that it ran (under `markers/<name>`) and passes stdin through, as a filter would. */
async function plant(file: string, name: string): Promise<string> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, `#!/bin/sh\ntouch '${path.join(markers, name)}'\ncat\n`, { mode: 0o755 });
  return file;
}

function git(...args: string[]): string {
  return execFileSync('/usr/bin/git', ['-c', 'user.name=t', '-c', 'user.email=t@e', '-c', 'init.defaultBranch=main', ...args], {
    cwd: root,
    env: { PATH: '/usr/bin:/bin', HOME: ws, GIT_CONFIG_NOSYSTEM: '1' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
}

/**
 * Gives HEAD a (fake) PGP signature, same tree, parent and message: a signature is only verified, through
 * gpg.program, when a commit carries one, so without it log.showSignature and %G? could never start anything.
 */
function signHead(): void {
  const signature = 'gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----';
  const body = git('cat-file', 'commit', 'HEAD').replace(/^(committer .*)$/m, `$1\n${signature}`);
  const signed = execFileSync('/usr/bin/git', ['hash-object', '-t', 'commit', '-w', '--stdin'], {
    cwd: root,
    env: { PATH: '/usr/bin:/bin', HOME: ws, GIT_CONFIG_NOSYSTEM: '1' },
    input: body,
    encoding: 'utf8',
  }).trim();
  git('update-ref', 'refs/heads/main', signed);
}

beforeAll(async () => {
  ws = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-hostile-git-')));
  root = path.join(ws, 'code');
  markers = path.join(ws, 'markers');
  await fs.mkdir(markers);
  await fs.writeFile(path.join(ws, 'outside-secret.txt'), `${OUTSIDE_SECRET} <t@e>\n`);
  const files: Record<string, string> = {
    'README.md': '# app\nneedle in the readme\n',
    'src/a.ts': 'export const a = "needle";\n',
    'src/b.p': 'process filter target\n',
    'src/c.js': 'module.exports = 1;\n',
    // One file per filter driver: each place a driver can be defined (config, config.worktree, include.path,
    // includeIf) defines a clean/smudge driver and a process driver, assigned in .gitattributes or .git/info/attributes.
    'notes.mdp': 'info attributes process filter target\n',
    'src/d.tp': 'worktree config process filter target\n',
    'src/e.jp': 'include process filter target\n',
    'src/f.if': 'includeIf filter target\n',
    'src/g.ifp': 'includeIf process filter target\n',
    '.gitattributes': [
      '* filter=evil diff=evil', '*.p filter=evilp', '*.ts filter=wtevil', '*.tp filter=wtevilp', '*.js filter=incevil',
      '*.jp filter=incevilp', '*.if filter=ifevil', '*.ifp filter=ifevilp', '',
    ].join('\n'),
  };
  for (const [rel, body] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await fs.writeFile(path.join(root, rel), body);
  }
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'init');
  // A second commit, so the git tool's revision ranges (HEAD~1..HEAD, :/init) resolve and diffs have content.
  await fs.writeFile(path.join(root, 'src/a.ts'), 'export const a = "needle";\nexport const b = "more needle";\n');
  git('commit', '-q', '-a', '-m', 'second');
  signHead();
  // Links for the /proc/self/cwd attacks: in spelunk's process (cwd = ws) z/proc is the root's own `code` link,
  // in a child (cwd = root) it would be `/`.
  await fs.symlink('/', path.join(root, 'code'));
  await fs.symlink('/proc/self/cwd/code', path.join(root, 'z'));

  const gitDir = path.join(root, '.git');
  const script = (name: string) => plant(path.join(ws, 'scripts', name), name);
  /** A clean/smudge driver `name` and a process driver `<name>p`, as configuration lines. */
  const drivers = async (name: string): Promise<string[]> => [
    `[filter "${name}"]`, `\tclean = ${await script(`${name}-clean`)}`, `\tsmudge = ${await script(`${name}-smudge`)}`,
    `[filter "${name}p"]`, `\tprocess = ${await script(`${name}p-process`)}`,
  ];
  const config = [
    '[core]', '\trepositoryformatversion = 1', `\tfsmonitor = ${await script('fsmonitor')}`, `\thooksPath = ${path.join(ws, 'hooks')}`,
    `\tpager = ${await script('core-pager')}`, `\tsshCommand = ${await script('ssh-command')}`, '[extensions]', '\tworktreeConfig = true',
    ...(await drivers('evil')), '[filter "evil"]', '\trequired = true', ...(await drivers('infoevil')),
    '[diff "evil"]', `\ttextconv = ${await script('textconv')}`, '[diff]', `\texternal = ${await script('diff-external')}`,
    '[gpg]', `\tprogram = ${await script('gpg-program')}`, '[log]', '\tshowSignature = true',
    '[pager]', `\tlog = ${await script('pager-log')}`, `\tstatus = ${await script('pager-status')}`,
    // A format name the model could pass (--format=evil), and the default format of log and show: %G? verifies the
    // signature with gpg.program, %(describe) starts git describe.
    '[pretty]', '\tevil = %G? %(describe)', '[format]', '\tpretty = evil',
    '[blame]', `\tignoreRevsFile = ${path.join(ws, 'outside-secret.txt')}`, '[mailmap]', `\tfile = ${path.join(ws, 'outside-secret.txt')}`,
    '[diff]', `\torderFile = ${path.join(ws, 'outside-secret.txt')}`,
    '[include]', `\tpath = ${path.join(gitDir, 'evil-include')}`,
    `[includeIf "gitdir:${gitDir}"]`, `\tpath = ${path.join(gitDir, 'evil-include-if')}`,
  ];
  await fs.writeFile(path.join(gitDir, 'config'), `${config.join('\n')}\n`, { flag: 'a' });
  await fs.writeFile(path.join(gitDir, 'config.worktree'), `${(await drivers('wtevil')).join('\n')}\n`);
  await fs.writeFile(path.join(gitDir, 'evil-include'), `${(await drivers('incevil')).join('\n')}\n`);
  await fs.writeFile(path.join(gitDir, 'evil-include-if'), `${(await drivers('ifevil')).join('\n')}\n`);
  await fs.mkdir(path.join(gitDir, 'info'), { recursive: true });
  await fs.writeFile(path.join(gitDir, 'info', 'attributes'), '*.md filter=infoevil\n*.mdp filter=infoevilp\n');
  for (const hook of HOOKS) {
    await plant(path.join(ws, 'hooks', hook), `hooks-path-${hook}`);
    await plant(path.join(gitDir, 'hooks', hook), `git-hooks-${hook}`);
  }
  await plant(path.join(root, 'bin', 'git'), 'planted-bin-git');
  await plant(path.join(root, 'bin', 'rg'), 'planted-bin-rg');
  // Stale stat data on every tracked file: a refreshing `git status` would re-hash each one through the filters.
  const past = new Date(Date.now() - 3_600_000);
  for (const rel of Object.keys(files)) await fs.utimes(path.join(root, rel), past, past);
});

afterAll(async () => {
  await fs.rm(ws, { recursive: true, force: true });
});

afterEach(async () => {
  await api?.close();
});

/** The tool calls of every run: ordinary searches that touch every filtered file, and the outside-read attacks. */
const ATTACKS = [
  "rg -a -uu --max-depth 2 -g environ --no-messages -o 'ANTHROPIC_API_KEY=[^\\x00]*' z/proc",
  'ls -la z/',
  'cat z/etc/passwd',
  'rg -n needle z',
  'find z/proc/self -maxdepth 1',
];
const SEARCHES = ['rg -n needle', 'grep -rn needle .', 'cat README.md src/b.p', 'ls -la', 'find . -name "*.ts"', 'wc -l src/a.ts'];
/** History reads through the git tool that would start every diff, filter and signature program the config names. */
const HISTORY = ['log -p -n 2', 'show --stat HEAD', 'diff HEAD~1 HEAD', 'blame HEAD -- src/a.ts', 'grep -n needle HEAD', "log --format='%h %s'"];

/**
 * Proof that the fixture is live, so the tests that find nothing could fail: plain git (no overrides) starting each
 * program the configuration names, a row per vector as [vector, git arguments, on a terminal?, markers it leaves].
 * The first row must be the first plain git run: its status re-hashes the stale files, through every clean and
 * process driver, and then writes the index.
 */
const LIVE_ROWS: Array<[string, string[], { tty?: boolean }, string[]]> = [
  ['fsmonitor, a hook, every clean and process driver', ['status'], {}, ['fsmonitor', 'hooks-path-post-index-change',
    'evil-clean', 'evilp-process', 'infoevil-clean', 'infoevilp-process', 'wtevil-clean', 'wtevilp-process',
    'incevil-clean', 'incevilp-process', 'ifevil-clean', 'ifevilp-process']],
  ['smudge, .gitattributes + config', ['cat-file', '--filters', 'HEAD:.gitattributes'], {}, ['evil-smudge']],
  ['smudge, info/attributes + config', ['cat-file', '--filters', 'HEAD:README.md'], {}, ['infoevil-smudge']],
  ['smudge, config.worktree', ['cat-file', '--filters', 'HEAD:src/a.ts'], {}, ['wtevil-smudge']],
  ['smudge, include.path', ['cat-file', '--filters', 'HEAD:src/c.js'], {}, ['incevil-smudge']],
  ['smudge, includeIf', ['cat-file', '--filters', 'HEAD:src/f.if'], {}, ['ifevil-smudge']],
  ['textconv', ['diff', '--no-ext-diff', 'HEAD~1', 'HEAD'], {}, ['textconv']],
  ['diff.external', ['diff', 'HEAD~1', 'HEAD'], {}, ['diff-external']],
  ['gpg.program through log.showSignature', ['log', '-n1', '--format=medium'], {}, ['gpg-program']],
  ['gpg.program through the pretty.evil alias', ['-c', 'log.showSignature=false', 'log', '-n1', '--format=evil'], {}, ['gpg-program']],
  ['gpg.program through format.pretty', ['-c', 'log.showSignature=false', 'log', '-n1'], {}, ['gpg-program']],
  // Pagers start only on a terminal: util-linux script gives git one. Nothing else may start there, as a planted
  // `cat` reading the terminal would wait forever (signatures and fsmonitor are switched off for these rows).
  ['pager.log', ['-c', 'log.showSignature=false', 'log', '-n1', '--format=medium'], { tty: true }, ['pager-log']],
  ['core.pager', ['-c', 'log.showSignature=false', 'show', '-s', '--format=medium', 'HEAD'], { tty: true }, ['core-pager']],
  ['pager.status', ['-c', 'core.fsmonitor=false', 'status'], { tty: true }, ['pager-status']],
];

function script(final: Reply): Reply[] {
  return [
    reply(...SEARCHES.map((command) => toolUse('bash', { command })), ...HISTORY.map((command) => toolUse('git', { command }))),
    reply(...ATTACKS.map((command) => toolUse('bash', { command })), toolUse('read_file', { path: 'z/proc/self/environ' })),
    final,
  ];
}

function env(): Record<string, string> {
  return {
    PATH: `${path.join(root, 'bin')}:/usr/bin:/bin`,
    HOME: ws,
    ANTHROPIC_API_KEY: CANARY,
    ANTHROPIC_BASE_URL: api.url,
    NO_COLOR: '1',
  };
}

function runBinary(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, '-C', 'code', ...args], { cwd: ws, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** Every tool_result the model was sent, as text. */
function toolResults(): string {
  return api.requests.map((r) => JSON.stringify(r.body?.messages ?? '')).join('\n');
}

async function expectUntouched(before: Map<string, string>, output: string): Promise<void> {
  expect(await fs.readdir(markers)).toEqual([]);
  expect(await snapshot(root)).toEqual(before);
  expect(output).not.toContain(CANARY);
  expect(output).not.toMatch(/root:x?:0:0/);
  const results = toolResults();
  expect(results).not.toContain(CANARY);
  expect(results).not.toContain(OUTSIDE_SECRET);
  expect(results).not.toMatch(/root:x?:0:0/);
  // Each attack (and the read_file one) is refused by the text of the link, without looking outside.
  expect(results.split('/proc is never readable').length - 1).toBeGreaterThanOrEqual(ATTACKS.length + 1);
}

const REPORT = { verdict: 'pass', summary: 'nothing found', findings: [] };

describe('a repository with a hostile .git, spelunk run from its parent directory', () => {
  it.each<[string, string[], Reply, number]>([
    ['text', ['where is the needle?'], reply(text('In src/a.ts:1.')), 0],
    ['json', ['--output-format', 'json', 'where is the needle?'], reply(text('In src/a.ts:1.')), 0],
    ['stream-json', ['--output-format', 'stream-json', 'where is the needle?'], reply(text('In src/a.ts:1.')), 0],
    ['audit', ['audit', '--output-format', 'json', 'is there a needle?'], reply(toolUse('report_findings', REPORT)), 0],
    ['audit --diff (git diff HEAD~1...HEAD)', ['audit', '--diff', 'HEAD~1', '--output-format', 'json', 'is there a needle?'], reply(toolUse('report_findings', REPORT)), 0],
  ])('%s mode: no program of the repository runs, nothing changes, nothing outside is read', async (_mode, args, final, code) => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(...script(final), reply(text('Done.')));
    const before = await snapshot(root);
    const run = await runBinary(args);
    expect(run.code, run.stderr).toBe(code);
    await expectUntouched(before, run.stdout + run.stderr);
    if (args.includes('json')) expect(JSON.parse(run.stdout)).toMatchObject({ readonly_verified: true, repo: { git_commit: expect.stringMatching(/^[0-9a-f]{40}$/) } });
  });

  it('REPL mode in a terminal: the same', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(...script(reply(text('In src/a.ts:1.'))));
    const before = await snapshot(root);
    // Started from the test runner's directory, which is not the root either.
    const pty = new PtySession(['-C', root], { ...env(), XDG_STATE_HOME: ws });
    try {
      await pty.waitFor(/\/help for commands[\s\S]*› $/);
      pty.type('where is the needle?\r');
      await pty.waitFor(/In src\/a\.ts:1\.[\s\S]*› $/);
      pty.type('\x04');
      await pty.exited;
    } finally {
      pty.kill();
    }
    await expectUntouched(before, pty.screen());
  });

  it.each([
    [['status', '--porcelain']],
    // Diffing commands must pass --no-textconv --no-ext-diff (see filterOverrides). A diff against the work tree is
    // not here: it takes .git/index.lock to refresh the index even with --no-optional-locks (so a git tool must
    // refuse it); only revision-to-revision diffs are read-only.
    [['diff', '--no-textconv', '--no-ext-diff', 'HEAD', 'HEAD']],
    [['log', '-p', '--no-textconv', '--no-ext-diff', '-n', '1']],
    [['show', '--no-textconv', '--no-ext-diff', 'HEAD']],
    // The repository's default format (format.pretty → pretty.evil, %G? %(describe)) is not used.
    [['log', '-n', '1']],
    // Smudge and process drivers from each place a driver can be defined.
    [['cat-file', '--filters', 'HEAD:.gitattributes']],
    [['cat-file', '--filters', 'HEAD:src/a.ts']],
    [['cat-file', '--filters', 'HEAD:src/c.js']],
    [['cat-file', '--filters', 'HEAD:src/f.if']],
    [['cat-file', '--filters', 'HEAD:src/g.ifp']],
    [['cat-file', '--filters', 'HEAD:notes.mdp']],
    [['rev-parse', 'HEAD']],
  ])('the hardened git runner runs %j without starting any configured program or writing', async (args) => {
    const before = await snapshot(root);
    const run = await runGit(root, args);
    expect(run.ok, JSON.stringify(run)).toBe(true);
    expect(await fs.readdir(markers)).toEqual([]);
    expect(await snapshot(root)).toEqual(before);
  });

  // HEAD is signed, so these verify a signature: git writes it to a temporary file first, which the file-size limit
  // (prlimit --fsize=0) stops with SIGXFSZ; without prlimit, git finds gpg.program empty and cannot run it.
  it.each([
    [['log', '--show-signature', '-n', '1']],
    [['log', '-n', '1', '--format=evil']],
  ])('the hardened git runner runs %j (a signature to verify) without starting any configured program or writing', async (args) => {
    const before = await snapshot(root);
    const run = await runGit(root, args);
    expect(run.ok || run.error === 'exit SIGXFSZ', JSON.stringify(run)).toBe(true);
    expect(await fs.readdir(markers)).toEqual([]);
    expect(await snapshot(root)).toEqual(before);
  });

  it('the hardened git runner shows log in git\'s default format, not the repository\'s (format.pretty = evil)', async () => {
    const run = await runGit(root, ['log', '-n', '1']);
    expect(run).toMatchObject({ ok: true, stdout: expect.stringMatching(/^commit [0-9a-f]{40}\nAuthor: t <t@e>\n/) });
  });

  it.each(GIT_ALLOWED)('the git tool runs %j without starting any configured program or writing', async (command) => {
    const before = await snapshot(root);
    const tool = createGitTool(GIT_BINARY as string);
    const outcome = await tool.run({ command }, { root, signal: new AbortController().signal, timeoutMs: 20_000 });
    expect(outcome.infrastructure, outcome.content).toBeUndefined();
    expect(outcome.content).not.toMatch(/^Command refused/);
    expect(outcome.content).not.toContain(OUTSIDE_SECRET);
    expect(await fs.readdir(markers)).toEqual([]);
    expect(await snapshot(root)).toEqual(before);
  });

  it('the git tool answered in the runs above: a commit of the fixture reached the model', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(...script(reply(text('In src/a.ts:1.'))));
    const run = await runBinary(['where is the needle?']);
    expect(run.code, run.stderr).toBe(0);
    expect(toolResults()).toContain('second');
    expect(toolResults()).toContain('+export const b = \\"more needle\\"');
  });

  // Last (vitest runs a file's tests in order): LIVE_ROWS, markers cleared before each row.
  it.each(LIVE_ROWS)('the fixture is live: plain git starts it (%s)', async (_vector, args, opts, expected) => {
    for (const name of await fs.readdir(markers)) await fs.rm(path.join(markers, name));
    const env = { PATH: '/usr/bin:/bin', HOME: ws };
    const command = opts.tty === true ? ['script', '-qec', ['git', ...args].map((a) => `'${a}'`).join(' '), '/dev/null'] : ['git', ...args];
    try {
      execFileSync(`/usr/bin/${command[0] as string}`, command.slice(1), { cwd: root, env, stdio: 'ignore' });
    } catch {
      // Some vectors make git fail (a process filter that answers its handshake wrongly); the markers tell.
    }
    expect((await fs.readdir(markers)).sort()).toEqual(expect.arrayContaining(expected));
  });

  it('the fixture is live: every program the configuration names is started by a row above, or says why not', async () => {
    const fired = new Set(LIVE_ROWS.flatMap(([, , , names]) => names));
    const planted = (await fs.readdir(path.join(ws, 'scripts'))).filter((name) => !fired.has(name));
    // core.sshCommand needs a transport (a fetch or ls-remote over ssh), and the planted `cat` would then block git's
    // protocol handshake: it is overridden, but not shown to fire. The .git/hooks scripts are shadowed by
    // core.hooksPath (whose post-index-change fires above); the other hooks run only for commands that write.
    expect(planted).toEqual(['ssh-command']);
  });

  it('the fixture is live: plain git reads and shows the outside file the configuration names', () => {
    const plain = (args: string[]): string => {
      try {
        return execFileSync('/usr/bin/git', args, { cwd: root, env: { PATH: '/usr/bin:/bin', HOME: ws, GIT_PAGER: 'cat' }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (error) {
        return String((error as { stderr?: string }).stderr);
      }
    };
    expect(plain(['blame', 'HEAD', '--', 'src/a.ts'])).toContain(OUTSIDE_SECRET);
    expect(plain(['log', '-n1', '--format=%aN'])).toContain(OUTSIDE_SECRET);
  });
});
