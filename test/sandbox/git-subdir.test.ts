import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDiff } from '../../src/audit/diff.js';
import { chooseSandbox } from '../../src/sandbox/choose.js';
import { useSandbox } from '../../src/sandbox/exec.js';
import { checkGitCommand } from '../../src/sandbox/git-policy.js';
import { locateRepository } from '../../src/sandbox/git-repo.js';
import { checkRepository, GIT_BINARY } from '../../src/sandbox/git.js';
import type { Sandbox } from '../../src/sandbox/kernel.js';
import { createGitTool, gitAvailability } from '../../src/tools/git.js';
import { makeMonorepo, SECRET, type Monorepo } from '../support/monorepo.js';

/**
 * A root that is a subdirectory of a work tree (`spelunk -C packages/a` in a monorepo clone): the git tool and
 * `--diff` read the enclosing repository, confined to the root. Every row runs the real tool on a real repository,
 * under the tables and (where bwrap works) under the kernel sandbox, and no output may ever hold packages/b's content.
 */
let mono: Monorepo;
let kernel: Sandbox | null = null;
let kernelWhyNot = '';

beforeAll(async () => {
  mono = await makeMonorepo();
  const choice = await chooseSandbox('required');
  if (choice.ok) kernel = choice.sandbox;
  else kernelWhyNot = choice.error;
});
afterAll(async () => {
  useSandbox({ kind: 'tables' });
  await mono.cleanup();
});

const git = GIT_BINARY as string;

async function runTool(command: string, sandbox: 'kernel' | 'tables') {
  useSandbox(sandbox === 'kernel' && kernel !== null ? kernel : { kind: 'tables' });
  try {
    return await createGitTool(git).run({ command }, { root: mono.root, signal: new AbortController().signal, timeoutMs: 20_000, sandbox });
  } finally {
    useSandbox({ kind: 'tables' });
  }
}

describe('locateRepository: a subdirectory root reads the enclosing repository, with its prefix', () => {
  it('packages/a below the top: the top, its .git, and the prefix', async () => {
    const found = await locateRepository(mono.root);
    expect(found).toEqual({ ok: true, gitDir: path.join(mono.top, '.git'), commonDir: path.join(mono.top, '.git'), top: mono.top, prefix: 'packages/a/' });
    expect(await checkRepository(mono.root)).toMatchObject({ ok: true, prefix: 'packages/a/' });
    expect(await gitAvailability(mono.root)).toMatchObject({ available: true, confinedTo: { top: mono.top, prefix: 'packages/a/' } });
  });

  it('the top itself has no prefix', async () => {
    const found = await locateRepository(mono.top);
    expect(found).toEqual({ ok: true, gitDir: path.join(mono.top, '.git'), commonDir: path.join(mono.top, '.git') });
  });

  it('a subdirectory of a linked worktree: its repository, linked and confined; the tool runs under the kernel sandbox', async () => {
    const linked = path.join(path.dirname(mono.top), 'linked');
    mono.git('worktree', 'add', '-q', linked);
    const root = path.join(linked, 'packages', 'a');
    const found = await locateRepository(root);
    expect(found).toEqual({ ok: true, gitDir: path.join(mono.top, '.git', 'worktrees', 'linked'), commonDir: path.join(mono.top, '.git'), linked: true, top: linked, prefix: 'packages/a/' });
    useSandbox(kernel ?? { kind: 'tables' });
    try {
      const outcome = await createGitTool(git).run({ command: 'log --format=%s -p' }, { root, signal: new AbortController().signal, timeoutMs: 20_000, sandbox: kernel === null ? 'tables' : 'kernel' });
      expect(outcome.content).toMatch(/^touch both\n/);
      expect(outcome.content).toContain('+a3');
      expect(outcome.content).not.toMatch(/SECRET|touch b\n/);
    } finally {
      useSandbox({ kind: 'tables' });
    }
  });

  it('a root inside the git directory is refused', async () => {
    const found = await locateRepository(path.join(mono.top, '.git', 'objects'));
    expect(found).toMatchObject({ ok: false, reason: expect.stringContaining('inside a git directory') });
  });

  it('an alternate outside the work tree is refused for the subdirectory too, naming the work tree', async () => {
    const other = await makeMonorepo();
    try {
      await fs.writeFile(path.join(other.top, '.git', 'objects', 'info', 'alternates'), `${path.join(mono.top, '.git', 'objects')}\n`);
      const found = await locateRepository(other.root);
      expect(found).toMatchObject({ ok: false, reason: expect.stringMatching(/^the work tree at .* holding this root: an objects\/info\/alternates entry points outside/) });
      expect(await gitAvailability(other.root)).toMatchObject({ available: false });
    } finally {
      await other.cleanup();
    }
  });
});

describe('the policy confines every command to the root', () => {
  it.each<[string, string[]]>([
    ['log --oneline', ['log', '--abbrev-commit', '--no-textconv', '--no-ext-diff', '-O/dev/null', '--submodule=short', '--relative', '--oneline', '--end-of-options', '--', '.']],
    ['log --oneline -- sub', ['--end-of-options', '--', 'sub']],
    ["log -L '1,2:app.txt'", ['-L1,2:app.txt', '--end-of-options', '--']],
    ['show HEAD', ['--relative', '--end-of-options', 'HEAD^{commit}', '--', '.']],
    ['show HEAD:app.txt', ['--end-of-options', 'HEAD:./app.txt', '--', '.']],
    ['show HEAD:./app.txt', ['HEAD:./app.txt']],
    ['show HEAD~2..HEAD', ['HEAD~2^{commit}..HEAD^{commit}', '--', '.']],
    ['show ^HEAD~2 HEAD^!', ['^HEAD~2', 'HEAD^!', '--', '.']],
    ['diff HEAD~3 HEAD', ['--relative', '--end-of-options', 'HEAD~3^{commit}', 'HEAD^{commit}', '--', '.']],
    ['diff HEAD~3...HEAD', ['HEAD~3^{commit}...HEAD^{commit}', '--', '.']],
    ['cat-file -p HEAD:app.txt', ['HEAD:./app.txt']],
    ['ls-tree -r HEAD', ['ls-tree', '-r', '--', 'HEAD', '.']],
    ["grep -n a HEAD", ['HEAD', '--', '.']],
    ['rev-list --count HEAD', ['HEAD', '--', '.']],
    ['shortlog -s HEAD', ['HEAD', '--', '.']],
    ['rev-parse HEAD:app.txt', ['HEAD:./app.txt']],
    ["rev-parse 'main@{2024-01-05 10:00}'", ['main@{2024-01-05 10:00}']],
    ["show 'HEAD^{/touch a: x}:app.txt'", ['HEAD^{/touch a: x}:./app.txt']],
  ])('%s → …%j', async (command, tail) => {
    const verdict = await checkGitCommand(command, mono.root, 'tables', true);
    expect(verdict.ok, JSON.stringify(verdict)).toBe(true);
    const args = verdict.ok ? verdict.args : [];
    const at = args.findIndex((_, i) => tail.every((w, j) => args[i + j] === w));
    expect(at, args.join(' ')).toBeGreaterThanOrEqual(0);
  });

  it('unconfined (the top of a work tree) nothing changes', async () => {
    const verdict = await checkGitCommand('show HEAD:app.txt', mono.root, 'tables', false);
    expect(verdict).toMatchObject({ ok: true, args: ['show', '--abbrev-commit', '--no-textconv', '--no-ext-diff', '-O/dev/null', '--submodule=short', '--end-of-options', 'HEAD:app.txt', '--'] });
  });
});

/**
 * [command, refused (an error result) or run, a fragment the output must hold]. Whatever the row, packages/b's
 * content (SECRET) never appears.
 */
const ROWS: Array<[string, 'refused' | 'runs' | 'fails', string | RegExp]> = [
  ['log --oneline', 'runs', /touch both\n.*touch a\n.*init/],
  ['log --format=%s --all', 'runs', /^touch both\ntouch a\ninit$/m],
  ['log -p', 'runs', '+a3'],
  ['log --stat', 'runs', 'app.txt |'],
  ["log -L '1,3:app.txt' --format=%s", 'runs', '+a3'],
  ['log --name-only --format=%s --all', 'runs', /^touch both\n\napp\.txt$/m],
  [`log -S ${SECRET} --oneline`, 'runs', ''],
  ['show HEAD', 'runs', '+a3'],
  ['show --stat HEAD', 'runs', 'app.txt | 1 +'],
  ['show HEAD~1', 'runs', '[this root is packages/a/ of its repository: history is shown only as it concerns files below it]'],
  ['show HEAD:app.txt', 'runs', 'a1\na2\na3'],
  ['show HEAD:', 'runs', 'app.txt'],
  ['show HEAD:../b/secret.txt', 'refused', 'outside the repository root'],
  ['show HEAD:packages/b/secret.txt', 'fails', "bad revision 'HEAD:./packages/b/secret.txt'"],
  ['show HEAD:/packages/b/secret.txt', 'refused', 'absolute path'],
  ["show ':/touch b'", 'refused', 'log --grep=TEXT'],
  ["show 'HEAD^{tree}'", 'fails', 'expected commit type'],
  ['show HEAD~1:../b/x', 'refused', 'outside the repository root'],
  ['log --oneline -- ../b', 'refused', 'outside the repository root'],
  ["log --oneline -- ':/'", 'refused', 'pathspec magic'],
  ["log --oneline -- ':(top)packages/b'", 'refused', 'pathspec magic'],
  ["log --oneline -- ':(top)'", 'refused', 'pathspec magic'],
  ['log --oneline -- /etc', 'refused', 'absolute path'],
  ['log -p --full-diff -- app.txt', 'refused', 'outside this root'],
  [`log --pickaxe-all -S a3 -p`, 'refused', 'outside this root'],
  ['log --relative=../b -p', 'refused', 'is fixed here'],
  ['diff HEAD~3 HEAD', 'runs', '+a3'],
  ['diff --stat HEAD~3 HEAD', 'runs', ' app.txt | 2 ++'],
  ['diff HEAD~3 HEAD -- ../b', 'refused', 'outside the repository root'],
  ['diff HEAD~1:../b/secret.txt HEAD:../b/secret.txt', 'refused', 'outside the repository root'],
  ['cat-file -p HEAD', 'refused', 'cat-file -p HEAD:path'],
  ["cat-file -p 'HEAD^{tree}'", 'refused', 'cat-file -p HEAD^{tree}:path'],
  ['cat-file -p HEAD:app.txt', 'runs', 'a3'],
  ['cat-file -p HEAD:packages/b/secret.txt', 'fails', "path 'packages/a/packages/b/secret.txt' does not exist"],
  ['ls-tree -r --name-only HEAD', 'runs', /^app\.txt$/m],
  ['ls-tree --full-tree -r HEAD', 'refused', 'ls-tree HEAD lists this root'],
  ['ls-tree HEAD:packages', 'refused', 'ls-tree -r HEAD path'],
  ["ls-tree -r 'HEAD^{tree}'", 'runs', 'app.txt'],
  [`grep -n ${SECRET} HEAD`, 'runs', ''],
  ['grep -n a3 HEAD', 'runs', 'HEAD:app.txt:3:a3'],
  ['grep -n a3 HEAD:packages', 'refused', "grep -n 'pattern' HEAD -- path"],
  ['rev-list --objects HEAD', 'refused', 'ls-tree -r HEAD'],
  ['rev-list --count HEAD', 'runs', /^3$/m],
  ['shortlog -s HEAD', 'runs', /^\s+3\tt$/m],
  ['blame HEAD -- app.txt', 'runs', 'a3'],
  ['blame -C HEAD -- app.txt', 'refused', 'use -M within the file'],
  ['stash show', 'refused', 'stash show is refused here'],
  ['for-each-ref', 'runs', 'refs/heads/main'],
];

describe.each(['tables', 'kernel'] as const)('the git tool in packages/a, sandbox %s', (sandbox) => {
  it.each(ROWS)('%s → %s', async (command, expected, fragment) => {
    if (sandbox === 'kernel' && kernel === null) {
      console.warn(`skipped under the kernel sandbox: ${kernelWhyNot}`);
      return;
    }
    const outcome = await runTool(command, sandbox);
    expect(outcome.content).not.toContain(SECRET);
    // A refusal or git's complaint may echo the path asked for; what runs never names b's files.
    if (expected === 'runs') expect(outcome.content).not.toMatch(/packages\/b|secret\.txt|\bx\b/);
    if (expected === 'runs') expect(outcome.isError, outcome.content).toBe(false);
    else expect(outcome.isError, outcome.content).toBe(true);
    if (typeof fragment === 'string') expect(outcome.content).toContain(fragment);
    else expect(outcome.content).toMatch(fragment);
  });
});

describe('under the kernel sandbox, the work-tree forms see the root only', () => {
  it('status, diff and ls-files name a\'s changes, never b\'s, with b changed in the work tree too', async () => {
    if (kernel === null) {
      console.warn(`skipped: ${kernelWhyNot}`);
      return;
    }
    await fs.writeFile(path.join(mono.root, 'app.txt'), 'changed\n');
    await fs.writeFile(path.join(mono.top, 'packages', 'b', 'secret.txt'), `${SECRET}-changed\n`);
    try {
      const status = await runTool('status --short', 'kernel');
      expect(status.content).toMatch(/^ M app\.txt$/m);
      const diff = await runTool('diff', 'kernel');
      expect(diff.content).toContain('+changed');
      const files = await runTool('ls-files', 'kernel');
      expect(files.content.trim().split('\n').slice(0, -1)).toEqual(['app.txt']);
      for (const outcome of [status, diff, files]) expect(outcome.content).not.toMatch(/SECRET|secret\.txt|packages\/b/);
    } finally {
      mono.git('checkout', '--', '.');
    }
  });
});

describe('audit --diff from a subdirectory root', () => {
  it('diffs the root only, with paths relative to it', async () => {
    const scope = await loadDiff({ kind: 'git', base: 'HEAD~3', head: 'HEAD' }, mono.root);
    expect(scope.files).toEqual([{ path: 'app.txt', lines: [[2, 3]], deleted: false }]);
    expect(scope.text).not.toContain(SECRET);
    expect(scope.text).toContain('+++ b/app.txt');
  });

  it('a change of b only is an empty diff here', async () => {
    const scope = await loadDiff({ kind: 'git', base: 'HEAD~2', head: 'HEAD~1' }, mono.root);
    expect(scope.files).toEqual([]);
    expect(scope.text).toBe('');
  });
});

describe('commit citations from a subdirectory root', () => {
  it('are checked in the enclosing repository, at paths below the root; b\'s file is never found', async () => {
    const { verifyCitations } = await import('../../src/citations/verify.js');
    const head = mono.git('rev-parse', '--short=7', 'HEAD').trim();
    const [good, outside, other] = await verifyCitations(mono.root, `See ${head}:app.txt:3, ${head}:../b/secret.txt:1 and ${head}:packages/b/secret.txt:1.`);
    expect(good).toMatchObject({ path: 'app.txt', status: 'ok' });
    expect(outside).toMatchObject({ status: 'outside_root' });
    expect(other).toMatchObject({ status: 'missing_file' });
  });
});
