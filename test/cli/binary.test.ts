import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
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

  it('the one-shot start-up never loads the MCP SDK: it is reached only through a dynamic import', async () => {
    const seen = new Set<string>();
    const visit = async (file: string): Promise<void> => {
      if (seen.has(file)) return;
      seen.add(file);
      const code = await fs.readFile(path.join(path.dirname(BIN), file), 'utf8');
      for (const m of code.matchAll(/^import[^;]*? from "\.\/([^"]+)";?$/gm)) await visit(m[1]!);
      for (const m of code.matchAll(/^import "\.\/([^"]+)";?$/gm)) await visit(m[1]!);
    };
    await visit(path.basename(BIN));
    expect(seen.size).toBeGreaterThan(1); // the walk follows the static chunk imports
    const statics = await Promise.all([...seen].map((f) => fs.readFile(path.join(path.dirname(BIN), f), 'utf8')));
    expect(statics.some((code) => code.includes('StdioServerTransport'))).toBe(false);
    const all = await fs.readdir(path.dirname(BIN));
    const mcpChunks = await Promise.all(all.map(async (f) => ((await fs.readFile(path.join(path.dirname(BIN), f), 'utf8')).includes('StdioServerTransport') ? f : null)));
    expect(mcpChunks.filter(Boolean).length).toBeGreaterThan(0);
  });
});
