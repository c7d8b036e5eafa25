import { isAscii } from 'node:buffer';
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { httpError, reply, startMockApi, text, toolUse, type MockApi, type Reply } from '../support/mock-api.js';
import { BIN } from '../support/pty.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';
import { readClaudeStream } from '../support/claude-stream-reader.js';
import { runBinary } from '../support/binary.js';

// The built binary as a separate process: bin.ts's signal wiring, process.exitCode and real pipes.
let api: MockApi;
const repo = useRepo(APP_FILES, { git: true });

afterEach(async () => {
  await api?.close();
});

function run(args: string[], opts: { env?: Record<string, string>; onSpawn?: (pid: number) => void } = {}) {
  return runBinary(args, { cwd: repo.root, env: { HOME: path.dirname(repo.root), ...opts.env }, ...(opts.onSpawn ? { onSpawn: opts.onSpawn } : {}) });
}

describe('the built binary', () => {
  it.each([['--version'], ['-v']])('%s works without a key, from any directory', async (flag) => {
    const result = await run([flag]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('spelunk help prints the help and sends nothing', async () => {
    const result = await run(['help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('--max-turns');
    expect(result.stderr).toBe('');
  });

  it('a question with no stdin: the answer alone on stdout, exit 0', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('bash', { command: 'ls src' })), reply(text('Three files in src/.')));
    const result = await run(['Which files are in src?'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Three files in src/.\n');
    expect(result.stderr).toContain('● bash ls src');
    expect(result.stderr).not.toMatch(/\x1b\[/);
  });

  it('spelunk "q" > answer.md: only the final answer on stdout; commentary and the Sources block on stderr (issue 9)', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    const answer = '## Router\n\nThe handler is `src/router.js:3`; src/router.js:99 does not exist.';
    api.enqueue(reply(text('Looking.'), toolUse('bash', { command: 'ls src' })), reply(text("I'll read the router next."), toolUse('read_file', { path: 'src/router.js' })), reply(text(answer)));
    const env = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, FORCE_HYPERLINK: '1' };
    const result = await run(['where is the handler?'], { env });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${answer}\n`);
    expect(result.stderr).toMatch(/^Looking\.\n● bash ls src[\s\S]*^I'll read the router next\.\n● read_file/m);
    expect(result.stderr).toContain('Sources\n  ✓ src/router.js:3  function handle(req, res) {\n  ✗ src/router.js:99  line out of range (the file has 9 lines)\n');
    expect(result.stdout + result.stderr).not.toContain('\x1b');
  });

  it('--output-format json: the checked citations in the result', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('See src/router.js:3 and src/nope.js:1.')));
    const result = await run(['--output-format', 'json', 'q'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } });
    const parsed = JSON.parse(result.stdout);
    expect(parsed.citations.map((c: { status: string }) => c.status)).toEqual(['ok', 'missing_file']);
    expect(parsed.warnings).toContain('citation src/nope.js:1: missing_file (no such file in the repository)');
  });

  it('tool time excludes the wait for the start-of-run state, and the wait is said once (--verbose: it may be under 1 s)', async () => {
    // The snapshot asks git for HEAD; git is taken from /usr/bin:/bin only (a slow git on PATH is never run), so it
    // is slowed the one way a repository can: a 10 MB .git/config takes git ~0.5 s to parse, twice.
    const config = path.join(repo.root, '.git', 'config');
    const original = await fs.readFile(config, 'utf8');
    await fs.appendFile(config, Array.from({ length: 400_000 }, (_, i) => `[pad "${i}"]\n\tv = ${i}\n`).join(''));
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('read_file', { path: 'src/auth.js' })), reply(toolUse('read_file', { path: 'src/server.js' })), reply(text('done')));
    const result = await run(['--verbose', 'q'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } }).finally(() => fs.writeFile(config, original));
    expect(result.code).toBe(0);
    expect(result.stderr.match(/the first tool waited \d+\.\d s while spelunk recorded the repository's state/g)).toHaveLength(1);
    const timings = [...result.stderr.matchAll(/⎿ .* · (\d+(?:\.\d)?) (ms|s)/g)].map((m) => m[2]);
    expect(timings).toEqual(['ms', 'ms']);
  });

  it.each(['json', 'stream-json'])('--output-format %s: progress on stderr, the same compact lines as text mode, no colour', async (format) => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('bash', { command: 'ls src' })), reply(toolUse('read_file', { path: 'src/auth.js' })), reply(text('Three files.')));
    const result = await run(['--output-format', format, 'Which files are in src?'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } });
    expect(result.code).toBe(0);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines.filter((l) => l.startsWith('● '))).toEqual(['● bash ls src', '● read_file src/auth.js']);
    expect(lines.filter((l) => l.startsWith('  ⎿ '))).toHaveLength(2);
    // One usage line per request (tokens · cost), then the question's total.
    expect(lines.filter((l) => l.startsWith('  ↳ in '))).toHaveLength(3);
    expect(lines.at(-1)).toMatch(/^  Σ 3 requests · /);
    expect(result.stderr).not.toContain('Three files.');
    expect(result.stderr).not.toMatch(/\x1b\[/);
    const out = result.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(out.at(-1)).toMatchObject({ type: 'result', result: 'Three files.' });
  });

  it('stream-json reads with a consumer written for Claude Code (dispatch on type, skip the unknown)', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(
      reply(text('Looking.'), toolUse('bash', { command: 'ls src' }, 'toolu_ls'), toolUse('read_file', { path: 'nope.js' }, 'toolu_nope')),
      reply(text('Three files; src/auth.js:4 builds the command.')),
    );
    const result = await run(['--output-format', 'stream-json', 'Which files are in src?'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } });
    expect(result.code).toBe(0);
    const stream = readClaudeStream(result.stdout);
    expect(stream.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(stream).toMatchObject({ model: 'claude-sonnet-5-5', tools: ['read_file', 'bash', 'git'] });
    expect(stream.texts).toEqual(['Looking.', 'Three files; src/auth.js:4 builds the command.']);
    expect(stream.toolUses).toEqual([
      { id: 'toolu_ls', name: 'bash', input: { command: 'ls src' } },
      { id: 'toolu_nope', name: 'read_file', input: { path: 'nope.js' } },
    ]);
    expect(stream.toolResults.get('toolu_ls')).toEqual({ content: expect.stringContaining('auth.js'), isError: false });
    expect(stream.toolResults.get('toolu_nope')?.isError).toBe(true);
    expect(stream.result).toMatchObject({ subtype: 'success', isError: false, text: 'Three files; src/auth.js:4 builds the command.', numTurns: 2 });
    // spelunk's own lines (deltas, tool timing, usage) were skipped, not misread.
    expect(stream.skipped).toBeGreaterThan(0);
  });

  it('--quiet: nothing on stderr for a clean run; an API failure still says so in one line', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('bash', { command: 'ls src' })), reply(text('Three files.')));
    const env = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url };
    const clean = await run(['--output-format', 'json', '--quiet', 'q'], { env });
    expect(clean.code).toBe(0);
    expect(clean.stderr).toBe('');
    expect(JSON.parse(clean.stdout)).toMatchObject({ subtype: 'success' });

    api.enqueue(reply(text('Still three.')));
    const textMode = await run(['-q', 'q'], { env });
    expect(textMode.code).toBe(0);
    expect(textMode.stdout).toBe('Still three.\n');
    expect(textMode.stderr).toBe('');

    api.enqueue(httpError(400, 'invalid_request_error', 'bad request'));
    const failed = await run(['--output-format', 'json', '--quiet', 'q'], { env });
    expect(failed.code).toBe(1);
    expect(failed.stderr.trim().split('\n')).toHaveLength(1);
    expect(failed.stderr).toContain('bad request');
  });

  it.each(['SIGINT', 'SIGTERM'] as const)('%s mid-run: the partial json result is written, exit 130', async (signal) => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('read_file', { path: 'src/auth.js' })), { kind: 'hang' });
    const result = await run(['--output-format', 'json', 'q'], {
      env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url },
      onSpawn: (pid) => void api.waitForRequests(2).then(() => process.kill(pid, signal)),
    });
    expect(result.code).toBe(130);
    const parsed = JSON.parse(result.stdout);
    expect(parsed).toMatchObject({ type: 'result', subtype: 'interrupted', is_error: true, num_turns: 2 });
    expect(parsed.tool_calls).toHaveLength(1);
  });
  it('-c continues the saved session across processes: the same session_id, and the cache miss explained', async () => {
    const state = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-bin-state-'));
    try {
      api = await startMockApi({ minCacheTokens: 256 });
      api.enqueue(reply(text('In src/router.js:1.')), reply(text('Yes, src/router.js:5.')));
      const env = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, XDG_STATE_HOME: state };
      const first = await run(['--output-format', 'json', 'Where are routes?'], { env });
      // AGENTS.md changes between the runs: the resumed run's first request misses the cache, and says why.
      await fs.appendFile(path.join(repo.root, 'AGENTS.md'), 'Lint first.\n');
      const second = await run(['--output-format', 'json', '-c', 'Is 404 handled?'], { env });
      expect([first.code, second.code]).toEqual([0, 0]);
      const a = JSON.parse(first.stdout) as { session_id: string };
      const b = JSON.parse(second.stdout) as { session_id: string; cache_misses: Array<{ changed: string }>; warnings: string[] };
      expect(b.session_id).toBe(a.session_id);
      expect(JSON.stringify(api.requests.at(-1)!.body.messages)).toContain('Where are routes?');
      expect(b.cache_misses.map((m) => m.changed)).toEqual([expect.stringMatching(/^AGENTS\.md changed \(\+\d+ bytes\)$/)]);
      expect(b.warnings.join('\n')).toMatch(/resumed session [0-9a-f]{8}: the preamble changed/);
    } finally {
      await fs.writeFile(path.join(repo.root, 'AGENTS.md'), APP_FILES['AGENTS.md']!);
      await fs.rm(state, { recursive: true, force: true });
    }
  });

  // The launcher reads the bundle as latin1 when it is ASCII (a one-byte string, hashed as bytes); the build escapes
  // what esbuild leaves in comments and regular expressions, so no character above 0x7f stays.
  it('the bundle is ASCII, and its regular expressions still match en dashes (escaped, not dropped)', async () => {
    const code = await fs.readFile(path.join(path.dirname(BIN), 'spelunk-main.cjs'));
    expect(isAscii(code)).toBe(true);
    expect(code.toString('latin1')).toContain('|\\u2013|\\u2014|to)');
  });

  // The MCP SDK, the markdown renderer, the YAML/TOML parsers and cli-table3 live in vendor files beside the bundle
  // (scripts/build.mjs): a copy of the command without them still answers a piped one-shot question, so that start-up
  // never reads them.
  it('a one-shot question loads none of the vendor chunks: it runs from a dist/ without their files', async () => {
    const dist = path.dirname(BIN);
    const vendor = (await fs.readdir(dist)).filter((f) => f.startsWith('vendor-'));
    expect(vendor.sort()).toEqual(['vendor-cloud.cjs', 'vendor-manifests.cjs', 'vendor-mcp.cjs', 'vendor-render.cjs', 'vendor-secrets.cjs', 'vendor-table.cjs']);
    expect(await fs.readFile(path.join(dist, 'vendor-mcp.cjs'), 'utf8')).toContain('StdioServerTransport');
    expect(await fs.readFile(path.join(dist, 'vendor-render.cjs'), 'utf8')).toContain('markedTerminal');
    // Inside node_modules, so the copy still resolves @vscode/ripgrep as the real command does.
    const cacheDir = path.join(dist, '..', 'node_modules', '.cache');
    await fs.mkdir(cacheDir, { recursive: true });
    const bare = await fs.mkdtemp(path.join(cacheDir, 'spelunk-bare-dist-'));
    try {
      for (const f of ['spelunk.js', 'spelunk-main.cjs']) await fs.copyFile(path.join(dist, f), path.join(bare, f));
      api = await startMockApi({ minCacheTokens: 256 });
      api.enqueue(reply(toolUse('read_file', { path: 'src/router.js' })), reply(text('Routes are in src/router.js:1.')));
      const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [path.join(bare, 'spelunk.js'), 'Where are routes?'], {
          cwd: repo.root,
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: bare, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api!.url },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
      expect(result.stderr).not.toContain('vendor-');
      expect(result.code).toBe(0);
      expect(result.stdout).toBe('Routes are in src/router.js:1.\n');
      expect(result.stderr).toContain('✓ src/router.js:1');
    } finally {
      await fs.rm(bare, { recursive: true, force: true });
    }
  });
});

/**
 * Every message a new user hit (the friction issue), seen the way the user sees it: the built binary in its own
 * process, real pipes, against the local Messages API. One line each, saying what to do, never a stack trace.
 */
describe('the built binary: messages that say what to do', () => {
  const key = () => ({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url });
  const overloaded = (): Reply => httpError(529, 'overloaded_error', 'Overloaded', { 'retry-after-ms': '50' });

  it.each<[string, string[], Reply[], number, RegExp]>([
    ['a stream cut mid-answer', ['q'], [{ kind: 'stream_cut', afterText: 'partial ' }], 1,
      /the API stream was cut mid-answer \(the text above is incomplete\) \(.+\); retryable: ask again \(request req_mock_1\)\n/],
    ['a malformed server event', ['q'], [{ kind: 'stream_malformed', afterText: 'partial ' }], 1,
      /the API sent an event spelunk could not read \(.+\); ask again, and report it if it repeats \(request req_mock_1\)\n/],
    ['an unknown model (404)', ['-m', 'claude-sonet-5-5', 'q'], [httpError(404, 'not_found_error', 'model: claude-sonet-5-5')], 1,
      /unknown model "claude-sonet-5-5" \(API 404 not_found_error\); pick another with -m or SPELUNK_MODEL, e\.g\. claude-sonnet-5-5.* \(request req_mock_1\)\n/],
    ['a 403', ['q'], [httpError(403, 'permission_error', 'not allowed')], 1,
      /this API key is not allowed to use claude-sonnet-5-5 .*console\.anthropic\.com \(request req_mock_1\)\n/],
    ['retries, then success', ['q'], [overloaded(), overloaded(), reply(text('ok'))], 0,
      /retry 1\/4 in 0\.1 s \(529 overloaded\)\n[\s\S]*retry 2\/4 in 0\.1 s \(529 overloaded\)\n/],
    ['--timeout reached', ['--timeout', '1', 'q'], [{ kind: 'hang' }], 3,
      /stopped: the run reached --timeout 1 \(seconds for the whole run\) before an answer; raise it, e\.g\. --timeout 2\n/],
    ['--max-budget-usd below the first request', ['--max-budget-usd', '0.01', 'q'], [], 3,
      /--max-budget-usd 0\.01 cannot pay for a first request at this context size \([\d,]+ prompt tokens ~\$0\.\d+ \+ 1,024 output tokens ~\$0\.\d+\); raise it to at least 0\.\d\d\n/],
    ['--max-turns abc', ['--max-turns', 'abc', 'q'], [], 2, /^spelunk: --max-turns needs a number, e\.g\. --max-turns 10 \(got "abc"\)\n$/],
    ['audit without a question', ['audit'], [], 2, /^spelunk: audit needs a question: spelunk audit "/],
    ['a word one edit from a subcommand', ['adit'], [], 2, /"adit" is not a command; did you mean spelunk audit "/],
  ])('%s', async (_name, args, replies, code, pattern) => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(...replies);
    const result = await run(args, { env: key() });
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(pattern);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    if (code !== 0) expect(result.stdout).not.toContain('ok');
  });

  it('a command refused for several reasons names the most fundamental one (the refused flag, not the quoting)', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('bash', { command: "find src -name '*.js' -exec cat {} ;" })), reply(text('done')));
    const result = await run(['q'], { env: key() });
    expect(result.code).toBe(0);
    const second = api.requests.filter((r) => r.path === '/v1/messages')[1]!;
    const results = JSON.stringify(second.body.messages!.at(-1));
    expect(results).toContain('find -exec is refused');
    expect(results).not.toContain('brace');
  });
});
