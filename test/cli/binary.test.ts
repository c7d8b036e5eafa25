import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { BIN } from '../support/pty.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

// The built binary as a separate process: bin.ts's signal wiring, process.exitCode and real pipes.
let api: MockApi;
const repo = useRepo(APP_FILES, { git: true });

afterEach(async () => {
  await api?.close();
});

function run(args: string[], opts: { env?: Record<string, string>; onSpawn?: (pid: number) => void } = {}) {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: repo.root,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: repo.root, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  opts.onSpawn?.(child.pid!);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
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

  it('tool time excludes the wait for the read-only snapshot, and the wait is said once', async () => {
    // The snapshot asks git for HEAD; git is taken from /usr/bin:/bin only (a slow git on PATH is never run), so it
    // is slowed the one way a repository can: a 10 MB .git/config takes git ~0.5 s to parse, twice.
    const config = path.join(repo.root, '.git', 'config');
    const original = await fs.readFile(config, 'utf8');
    await fs.appendFile(config, Array.from({ length: 400_000 }, (_, i) => `[pad "${i}"]\n\tv = ${i}\n`).join(''));
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('read_file', { path: 'src/auth.js' })), reply(toolUse('read_file', { path: 'src/server.js' })), reply(text('done')));
    const result = await run(['q'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } }).finally(() => fs.writeFile(config, original));
    expect(result.code).toBe(0);
    expect(result.stderr.match(/waited \d\.\d s for the read-only snapshot/g)).toHaveLength(1);
    const timings = [...result.stderr.matchAll(/⎿ .* · (\d+(?:\.\d)?) (ms|s)/g)].map((m) => m[2]);
    expect(timings).toEqual(['ms', 'ms']);
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
});
