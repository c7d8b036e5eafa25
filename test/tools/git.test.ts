import { promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildSystemPrompt } from '../../src/preamble/system-prompt.js';
import { GIT_BINARY } from '../../src/sandbox/git.js';
import { createGitTool, gitAvailability } from '../../src/tools/git.js';
import { sessionTools } from '../../src/tools/index.js';
import { runCli } from '../support/cli.js';
import { makeHistoryRepo, type HistoryRepo } from '../support/history-repo.js';
import { reply, startMockApi, text, toolUse, type MockApi, type RecordedRequest } from '../support/mock-api.js';
import { makeRepo } from '../support/temp-repo.js';

let history: HistoryRepo;
let api: MockApi | undefined;
const git = GIT_BINARY as string;
const ctx = () => ({ root: history.root, signal: new AbortController().signal, timeoutMs: 20_000 });
const run = (command: string) => createGitTool(git).run({ command }, ctx());

beforeAll(async () => {
  history = await makeHistoryRepo();
});
afterAll(async () => history.cleanup());
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('the git tool answers history questions about the fixture', () => {
  it.each<[string, string, RegExp[]]>([
    ['when was rateLimit introduced?', "log -S 'rateLimit' --reverse --format='%h %an %as %s'", [/^[0-9a-f]{7} Carol 2024-01-08 Add rate limiting middleware$/m]],
    ['why was the timeout changed?', "log -L '/TIMEOUT_MS =/,+1:src/server.js' --format='%h %s%n%b'", [/Raise the server timeout to 30 s/, /INC-42/, /-const TIMEOUT_MS = 5000;\n\+const TIMEOUT_MS = 30000;/]],
    ['the history of a renamed file', 'log --follow --oneline -- src/lib/query.js', [/Move util\.js to lib\/query\.js/, /Add query parsing helper/]],
    ['where did sanitize move?', "log -S 'function sanitize' --oneline", [/Extract sanitize into lib\/sanitize\.js/, /Add router/]],
    ['was eval ever used for config?', 'log --oneline --grep=eval', [/Revert "Parse config with eval"/, /Parse config with eval/]],
    ['a file as it was', 'show HEAD~30:src/server.js', [/const TIMEOUT_MS = 5000;/]],
    ['a file that no longer exists', "log --oneline -- src/config.js", [/Revert/]],
    ['blame at a revision', 'blame -L 4,4 HEAD -- src/server.js', [/^[0-9a-f^]{8} \(Dave .*\) const TIMEOUT_MS = 30000;$/m]],
    ['grep in a revision', "grep -n 'eval' HEAD~7 -- src", [/HEAD~7:src\/config\.js:1:/]],
    ['a diff of two revisions', 'diff --stat HEAD~20 HEAD', [/src\/lib\/sanitize\.js/, /src\/router\.js/]],
    ['how many commits', 'rev-list --count HEAD', [/^35$/m]],
    ['who committed', 'shortlog -s -n HEAD', [/Alice/, /Carol/]],
    ['what is in a tree', 'ls-tree -r --name-only HEAD src', [/src\/lib\/sanitize\.js/]],
    ['an object', 'cat-file -p HEAD:src/lib/sanitize.js', [/function sanitize/]],
  ])('%s: %s', async (_question, command, expected) => {
    const outcome = await run(command);
    expect(outcome.isError, outcome.content).toBe(false);
    for (const pattern of expected) expect(outcome.content).toMatch(pattern);
  });

  it('a path that exists only in history, before --: git says so, and the tool tells the model where the path goes', async () => {
    const outcome = await run('log --oneline src/util.js');
    expect(outcome.isError).toBe(true);
    expect(outcome.content).toContain('goes after --');
  });

  it('any other git failure is passed on as git said it, without that hint', async () => {
    const outcome = await run('cat-file -p HEAD:no-such-file.js');
    expect(outcome).toMatchObject({ isError: true, summary: 'exit 128' });
    expect(outcome.content).toMatch(/^\[stderr\]\nfatal: path 'no-such-file\.js' does not exist in 'HEAD'\n\[exit 128\]$/);
  });

  it('git grep with no match is not an error', async () => {
    const outcome = await run("grep -n 'no-such-text-anywhere' HEAD");
    expect(outcome).toMatchObject({ isError: false, summary: 'no matches' });
  });

  it('a refusal is an error result that says why, and runs nothing', async () => {
    const outcome = await run('status');
    expect(outcome).toMatchObject({ isError: true, summary: expect.stringContaining('denied: git status is refused') });
    expect(outcome.content).toMatch(/^Command refused: git status is refused: it reads the work tree/);
  });
});

describe('output is bounded like bash', () => {
  it('a large blob is cut in the middle with a marker', async () => {
    const big = Array.from({ length: 20_000 }, (_, i) => `line ${i}`).join('\n');
    const repo = await makeRepo({ 'big.txt': `${big}\n` }, { git: true });
    try {
      const outcome = await createGitTool(git).run({ command: 'show HEAD:big.txt' }, { ...ctx(), root: repo.root });
      expect(outcome.content.length).toBeLessThan(31_000);
      expect(outcome.content).toMatch(/lines omitted/);
      expect(outcome.content).toContain('[output truncated');
    } finally {
      await repo.cleanup();
    }
  });
});

describe('when the git tool is offered', () => {
  it.each<[string, () => Promise<string>, string | null, string]>([
    ['a repository at the root', async () => history.root, git, ''],
    ['git not installed', async () => history.root, null, 'git is not installed'],
  ])('%s', async (_name, root, binary, reason) => {
    const availability = await gitAvailability(await root(), binary);
    if (reason === '') expect(availability).toEqual({ available: true, git });
    else expect(availability).toEqual({ available: false, reason: expect.stringContaining(reason) });
  });

  it('a root below the work tree: offered, confined to the root (its prefix in the work tree)', async () => {
    expect(await gitAvailability(path.join(history.root, 'src', 'lib'), git)).toEqual({ available: true, git, confinedTo: { top: history.root, prefix: 'src/lib/' } });
    const outcome = await createGitTool(git).run({ command: 'log --format=%s' }, { root: path.join(history.root, 'src', 'lib'), signal: new AbortController().signal, timeoutMs: 20_000 });
    expect(outcome.content.trim().split('\n').slice(0, -1)).toEqual(['Extract sanitize into lib/sanitize.js', 'Move util.js to lib/query.js']);
  });

  it('the tool list has git only when it is available, after bash and before report_findings', () => {
    const programs = new Map([['rg', '/usr/bin/rg']]);
    expect(sessionTools(programs, null).map((t) => t.name)).toEqual(['read_file', 'bash']);
    expect(sessionTools(programs, { report: null, warnings: [] }, git).map((t) => t.name)).toEqual(['read_file', 'bash', 'git', 'report_findings']);
  });

  it('the system prompt says in one line whether history can be read, and why not', () => {
    const base = { repoName: 'r', platform: 'linux', programs: ['rg'], instructions: { file: null, text: null, bytes: 0, truncatedBytes: 0, nested: [], nestedOmitted: 0 }, listing: { text: '.', shown: 0, omitted: 0, truncatedDirs: 0 } };
    const withGit = buildSystemPrompt({ ...base, git: null } as Parameters<typeof buildSystemPrompt>[0])[1]?.text ?? '';
    const without = buildSystemPrompt({ ...base, git: 'git is not installed on this machine' } as Parameters<typeof buildSystemPrompt>[0])[1]?.text ?? '';
    expect(withGit).toMatch(/^- History: the git tool reads the history read-only/m);
    expect(without).toMatch(/^- History: no git tool in this session \(git is not installed on this machine\); answer from the current files\.$/m);
  });

  it('a repository that comes to point outside the root after start-up is refused at the call', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' }, { git: true });
    try {
      const tool = createGitTool(git);
      await fs.writeFile(path.join(repo.root, '.git', 'objects', 'info', 'alternates'), `${path.join(history.root, '.git', 'objects')}\n`);
      const outcome = await tool.run({ command: 'log --oneline' }, { ...ctx(), root: repo.root });
      expect(outcome.isError).toBe(true);
      expect(outcome.content).toContain('objects/info/alternates entry points outside the repository root');
    } finally {
      await repo.cleanup();
    }
  });
});

/** The text of the last tool_result the model was sent. */
function lastToolResult(req: RecordedRequest): string {
  const last = req.body.messages?.at(-1);
  const blocks = Array.isArray(last?.content) ? last.content : [];
  return blocks.filter((b) => b.type === 'tool_result').map((b) => (typeof b.content === 'string' ? b.content : JSON.stringify(b.content))).join('\n');
}

describe('scripted explorations through the local Messages API', () => {
  it('"when was rateLimit introduced?": log -S finds the commit, show confirms it, the answer cites the short sha', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    let sha = '';
    api.enqueue(
      reply(toolUse('git', { command: "log -S 'rateLimit' --reverse --format='%h %s' -- src" })),
      (req) => {
        sha = /^([0-9a-f]{7,}) Add rate limiting middleware$/m.exec(lastToolResult(req))?.[1] ?? 'not-found';
        return reply(toolUse('git', { command: `show --stat ${sha}` }));
      },
      (req) => reply(text(lastToolResult(req).includes('src/middleware.js') ? `rateLimit was introduced in ${sha} (Add rate limiting middleware), ${sha}:src/middleware.js:4 \`function rateLimit(max) {\`.` : 'not found')),
    );
    const cli = await runCli(['-C', history.root, '--output-format', 'json', 'when was rateLimit introduced?'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } });
    expect(cli.code, cli.stderr).toBe(0);
    expect(sha).toMatch(/^[0-9a-f]{7,}$/);
    const result = JSON.parse(cli.stdout);
    expect(result.result).toContain(`introduced in ${sha}`);
    // The commit citation is checked in git's history (issue 11 with issue 9's verifier): the line and its quote.
    const validate = new Ajv({ strict: false }).compile(JSON.parse(readFileSync(new URL('../../schema/result.schema.json', import.meta.url), 'utf8')));
    expect(validate(result), JSON.stringify(validate.errors)).toBe(true);
    expect(result.citations).toEqual([{ path: 'src/middleware.js', commit: sha, start_line: 4, end_line: 4, status: 'ok', excerpt: 'function rateLimit(max) {' }]);
    const tools = api.requests.find((r) => r.path === '/v1/messages')?.body.tools?.map((t) => t.name);
    expect(tools).toEqual(['read_file', 'bash', 'git']);
  });

  it('"why was the timeout raised?": log -L reaches the commit message, with the reason in it', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(
      reply(toolUse('git', { command: "log -L '/TIMEOUT_MS =/,+1:src/server.js' --format='%h %s%n%b'" })),
      (req) => reply(text(/INC-42/.test(lastToolResult(req)) ? 'Because the upstream proxy drops idle connections after 25 s (INC-42).' : 'unknown')),
    );
    const cli = await runCli(['-C', history.root, 'why was the timeout raised?'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, NO_COLOR: '1' } });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain('INC-42');
    expect(cli.stderr).toContain('git log -L');
  });
});

describe('the git forms the issue names, through the real tool', () => {
  it.each<[string, RegExp]>([
    ['shortlog -sn', /^\s+\d+\tAlice$/m],
    ['shortlog -sne', /<[^>]+@[^>]+>/],
    ['branch --show-current', /^\w[\w/-]*$/m],
    ['rev-list -n 3 HEAD', /^(?:[0-9a-f]{40}\n){3}/],
    ['show --color=never --summary HEAD', /^commit [0-9a-f]+/m],
    ['stash list', /\(no output\)\n\[exit 0\]/],
    ['notes list', /\[exit 0\]/],
  ])('%j runs', async (command, expected) => {
    const outcome = await run(command);
    expect(outcome.isError, outcome.content).toBe(false);
    expect(outcome.content).toMatch(expected);
  });

  it.each([['branch feature', 'creates a branch'], ['tag v9', 'creates a tag'], ['status', 'reads the work tree'], ['remote -v', 'kernel sandbox'], ['worktree list', 'kernel sandbox']])(
    '%j is refused, never run as a listing (%s)',
    async (command, fragment) => {
      const outcome = await run(command);
      expect(outcome.isError).toBe(true);
      expect(outcome.content).toContain(fragment);
    },
  );

  it('under the kernel sandbox, status and remote -v run, and credentials in remote URLs are hidden', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' }, { git: true });
    try {
      await fs.appendFile(path.join(repo.root, '.git/config'), '[remote "origin"]\n\turl = https://alice:ghp_SECRETTOKEN@example.com/r.git\n');
      await fs.writeFile(path.join(repo.root, 'a.txt'), 'changed\n');
      const kernel = { root: repo.root, signal: new AbortController().signal, timeoutMs: 20_000, sandbox: 'kernel' as const };
      const status = await createGitTool(git).run({ command: 'status --short' }, kernel);
      expect(status.content).toMatch(/^ M a\.txt$/m);
      const remote = await createGitTool(git).run({ command: 'remote -v' }, kernel);
      expect(remote.content).toContain('https://***@example.com/r.git (fetch)');
      expect(remote.content).not.toContain('SECRETTOKEN');
      expect(remote.content).not.toContain('alice');
    } finally {
      await repo.cleanup();
    }
  });
});
