import { execFileSync, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGit } from '../../src/sandbox/git.js';
import { createGitTool } from '../../src/tools/git.js';
import { GIT_BINARY } from '../../src/sandbox/git.js';
import { checkIncludes } from '../../src/sandbox/git-includes.js';
import type { ExecResult } from '../../src/sandbox/exec.js';
import { runCli } from '../support/cli.js';
import { reply, startMockApi, text } from '../support/mock-api.js';

/**
 * `include.path` / `includeIf.*.path` in the repository's configuration: git follows them anywhere, so a FIFO froze
 * every call and `include.path=/etc/passwd` said "bad config line 1 in file /etc/passwd" where a missing file was
 * silent. Each row plants configuration, then asks git for HEAD the hardened way: refused (with the reason, fast) or
 * answered.
 */

let ws: string;
let template: string;
let rows = 0;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('/usr/bin/git', ['-c', 'user.name=t', '-c', 'user.email=t@e', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    env: { PATH: '/usr/bin:/bin', HOME: ws, GIT_CONFIG_NOSYSTEM: '1' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A copy of the template repository whose .git/config ends with `lines`; `edit` may add files. */
async function repo(lines: string[], edit?: (root: string) => Promise<void>): Promise<string> {
  const root = path.join(ws, `row-${rows++}`);
  await fs.cp(template, root, { recursive: true });
  await fs.appendFile(path.join(root, '.git', 'config'), `${lines.join('\n')}\n`);
  await edit?.(root);
  return root;
}

const fifo = (rel: string) => async (root: string) => {
  await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
  execFileSync('/usr/bin/mkfifo', [path.join(root, rel)]);
};

beforeAll(async () => {
  ws = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-git-includes-')));
  template = path.join(ws, 'template');
  await fs.mkdir(template);
  await fs.writeFile(path.join(template, 'a.txt'), 'a\n');
  git(template, 'init', '-q');
  git(template, 'add', '-A');
  git(template, 'commit', '-q', '-m', 'init');
});
afterAll(async () => fs.rm(ws, { recursive: true, force: true }));

describe('configuration includes are checked before git reads them', () => {
  it.each<[string, string[], ((root: string) => Promise<void>) | undefined, string]>([
    ['include.path naming a FIFO in the work tree', ['[include]', '\tpath = ../x'], fifo('x'), 'x is not a regular file'],
    ['include.path naming a FIFO in .git', ['[include]', '\tpath = evil'], fifo('.git/evil'), '.git/evil is a FIFO'],
    ['includeIf.path (condition met) naming a FIFO', ['[includeIf "gitdir:/"]', '\tpath = ../x'], fifo('x'), 'x is not a regular file'],
    ['includeIf.path (condition not met) naming a FIFO', ['[includeIf "onbranch:nope"]', '\tpath = ../x'], fifo('x'), 'x is not a regular file'],
    ['a FIFO two includes deep', ['[include]', '\tpath = ../first'], async (root) => {
      await fs.writeFile(path.join(root, 'first'), '[include]\n\tpath = second\n');
      await fifo('second')(root);
    }, 'second is not a regular file'],
    ['a section and key in capitals, the path quoted', ['[Include]', '\tPATH = "../x"'], fifo('x'), 'x is not a regular file'],
    ['the key on the header line', ['[include] path = ../x'], fifo('x'), 'x is not a regular file'],
    ['an absolute path outside', ['[include]', '\tpath = /etc/passwd'], undefined, 'outside the repository root'],
    ['a relative path climbing out', ['[include]', '\tpath = ../../../../../../etc/passwd'], undefined, 'outside the repository root'],
    ['a path below ~', ['[include]', '\tpath = ~/.gitconfig'], undefined, 'outside the repository root'],
    ['a path below ~user', ['[include]', '\tpath = ~root/.gitconfig'], undefined, 'outside the repository root'],
    ['a path below %(prefix)', ['[include]', '\tpath = %(prefix)/etc/gitconfig'], undefined, 'outside the repository root'],
    ['a link in the work tree to a file outside', ['[include]', '\tpath = ../link'], async (root) => fs.symlink('/etc/passwd', path.join(root, 'link')), 'outside the repository root'],
    ['a directory in the work tree', ['[include]', '\tpath = ../dir'], async (root) => fs.mkdir(path.join(root, 'dir')), 'dir is not a regular file'],
    ['/proc', ['[include]', '\tpath = /proc/self/environ'], undefined, 'outside the repository root'],
    ['an include in config.worktree', [], async (root) => {
      await fs.writeFile(path.join(root, '.git', 'config.worktree'), '[include]\n\tpath = /etc/passwd\n');
    }, 'outside the repository root'],
  ])('refuses %s', async (_name, lines, edit, fragment) => {
    const root = await repo(lines, edit);
    const started = Date.now();
    const run = await runGit(root, ['rev-parse', 'HEAD']);
    expect(run).toMatchObject({ ok: false, unsafe: true, error: expect.stringContaining(fragment) });
    const tool = await createGitTool(GIT_BINARY as string).run({ command: 'log --oneline' }, { root, signal: new AbortController().signal, timeoutMs: 20_000 });
    expect(tool).toMatchObject({ isError: true, content: expect.stringContaining(fragment) });
    // A refusal of the repository, not a fault of spelunk's (which would fail the run).
    expect(tool.infrastructure).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it.each<[string, string[], ((root: string) => Promise<void>) | undefined]>([
    ['no include at all', [], undefined],
    ['an include of a regular file inside, which includes another', ['[include]', '\tpath = ../first'], async (root) => {
      await fs.writeFile(path.join(root, 'first'), '[include]\n\tpath = second\n');
      await fs.writeFile(path.join(root, 'second'), '[core]\n\tquotepath = false\n');
    }],
    ['an include of a file that does not exist, inside', ['[include]', '\tpath = ../missing'], undefined],
    ['include.sub.path, which git does not read as an include', ['[include "sub"]', '\tpath = /etc/passwd'], undefined],
  ])('answers with %s', async (_name, lines, edit) => {
    const root = await repo(lines, edit);
    expect(await runGit(root, ['rev-parse', 'HEAD'])).toMatchObject({ ok: true, stdout: expect.stringMatching(/^[0-9a-f]{40}\n$/) });
  });

  it('an include outside says the same whether the file exists or not (no existence oracle)', async () => {
    const outside = path.join(ws, 'outside.cfg');
    const root = await repo(['[include]', `\tpath = ${outside}`]);
    const ask = async () => JSON.stringify([await runGit(root, ['rev-parse', 'HEAD']), (await createGitTool(GIT_BINARY as string).run({ command: 'log' }, { root, signal: new AbortController().signal, timeoutMs: 20_000 })).content]);
    const missing = await ask();
    await fs.writeFile(outside, 'not a config line\n');
    const present = await ask();
    await fs.rm(outside);
    expect(present).toBe(missing);
    // Plain git tells the two apart: the row could fail.
    const plain = () => spawnSync('/usr/bin/git', ['rev-parse', 'HEAD'], { cwd: root, env: { PATH: '/usr/bin:/bin', HOME: ws }, encoding: 'utf8' }).stderr;
    const plainMissing = plain();
    await fs.writeFile(outside, 'not a config line\n');
    expect(plain()).not.toBe(plainMissing);
  });
});

describe('a one-shot question that calls no tool, in a repository with a FIFO where git reads', () => {
  // The red team's run took 80 s: the start-up HEAD query, the commit-citation check and the end-of-run query each
  // waited out git's 30 s on `[include] path = x`, x a FIFO.
  it.each<[string, string[], (root: string) => Promise<void>, string]>([
    ['include.path naming a FIFO', ['[include]', '\tpath = ../x'], fifo('x'), 'x is not a regular file'],
    ['a FIFO at .git/shallow', [], fifo('.git/shallow'), '.git/shallow is a FIFO'],
    ['a FIFO at .mailmap', [], fifo('.mailmap'), '.mailmap is a FIFO'],
  ])('%s: answers within seconds, says why once, and the read-only proof holds', async (_name, lines, edit, fragment) => {
    const root = await repo(lines, edit);
    const api = await startMockApi();
    try {
      api.enqueue(reply(text(`Nothing to see; compare ${'0'.repeat(7)}:a.txt:1.`)));
      const started = Date.now();
      const run = await runCli(['-C', root, '--output-format', 'json', '--no-session-persistence', 'q'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(run.code, run.stderr).toBe(0);
      const said = run.stderr.split('\n').filter((line) => line.includes(fragment));
      expect(said).toEqual([expect.stringMatching(/^warning: git is not used for this repository: /)]);
      expect(JSON.parse(run.stdout)).toMatchObject({ readonly_verified: true, repo: { git_commit: null } });
    } finally {
      await api.close();
    }
  });
});

// The include query is git itself; when its time limit or an abort ends it, it answered nothing, and "no include" must
// not be read from that (it was, until execCapped stopped reporting exit 0 for a run the timer ended): fail closed.
describe('an include query that did not finish refuses the call', () => {
  const unfinished = (over: Partial<ExecResult>): ExecResult => ({
    stdout: '', stderr: '', exitCode: null, signal: 'SIGKILL', timedOut: false, aborted: false, capped: false, durationMs: 1, ...over,
  });
  it.each<[string, Partial<ExecResult>, RegExp]>([
    ['ran out of time', { timedOut: true }, /could not be checked \(git ran out of time\)/],
    ['ended by an abort', { aborted: true }, /could not be checked \(git did not finish\)/],
  ])('%s', async (_name, over, expected) => {
    const root = await repo([]);
    const reason = await checkIncludes(root, [path.join(root, '.git', 'config')], async () => unfinished(over));
    expect(reason).toMatch(expected);
    expect(reason).toMatch(/^the includes of \.git\/config /);
  });

  it('exit 1 (no include) and a configuration git refuses (exit 3) still let the call through', async () => {
    const root = await repo([]);
    for (const exitCode of [1, 3]) {
      expect(await checkIncludes(root, [path.join(root, '.git', 'config')], async () => unfinished({ exitCode, signal: null }))).toBeNull();
    }
  });
});
