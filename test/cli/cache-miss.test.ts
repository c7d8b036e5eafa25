import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { APP_FILES, makeRepo } from '../support/temp-repo.js';

// The local server's cache model decides what is read; spelunk names the block that changed between runs of a session.
let api: MockApi | null = null;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await api?.close();
  api = null;
  for (const c of cleanups.splice(0)) await c();
});

async function setup(git = true): Promise<{ root: string; run: (argv: string[]) => Promise<{ code: number; stdout: string; stderr: string }> }> {
  const repo = await makeRepo(APP_FILES, { git });
  cleanups.push(repo.cleanup);
  api = await startMockApi({ minCacheTokens: 256 });
  const env = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url };
  return { root: repo.root, run: (argv) => runCli(['-C', repo.root, ...argv], { env }) };
}

describe('cache misses explained (resumed sessions against the local server)', () => {
  it.each([
    ['AGENTS.md', (root: string) => fs.appendFile(path.join(root, 'AGENTS.md'), 'Lint with `npm run lint`.\n'), [] as string[], /^cache miss: AGENTS\.md changed \(\+\d+ bytes\), ~[\d,]+ tokens re-written ≈ \$0\.\d+$/m],
    ['the listing', (root: string) => fs.writeFile(path.join(root, 'src', 'session.js'), '// new\n'), [], /^cache miss: listing changed \(\+\d+ bytes\), ~[\d,]+ tokens re-written ≈ \$0\.\d+$/m],
    ['the model', async () => {}, ['-m', 'claude-opus-5-5'], /^cache miss: the model changed \(claude-sonnet-5-5 → claude-opus-5-5\), ~[\d,]+ tokens re-written ≈ \$0\.\d+$/m],
  ])('%s changed between runs: one stderr line names it', async (_name, change, flags, line) => {
    const { root, run } = await setup();
    api!.enqueue(reply(toolUse('read_file', { path: 'src/router.js' })), reply(text('In src/router.js:1.')), reply(text('Still there.')));
    const first = await run(['Where are routes?']);
    expect(first.code).toBe(0);
    expect(first.stderr).not.toContain('cache miss');
    await change(root);
    const second = await run(['-c', ...flags, 'And now?']);
    expect(second.code).toBe(0);
    expect(second.stderr).toMatch(line);
    expect(second.stderr.match(/cache miss/g)).toHaveLength(1);
  });

  // No input a user controls changes a tool's description between runs: bash lists the programs installed in
  // /usr/bin:/bin (an install between runs would), read_file's and git's are constants. The closest real case is the
  // tool list itself: the directory becoming a git repository adds the git tool, the first bytes of the prompt.
  it('the directory became a git repository between runs: the line names the git tool', async () => {
    const { root, run } = await setup(false);
    api!.enqueue(reply(toolUse('read_file', { path: 'src/router.js' })), reply(text('In src/router.js:1.')), reply(text('Still there.')));
    const first = await run(['Where are routes?']);
    expect(first.code).toBe(0);
    expect(api!.requests[0]!.body.tools!.map((t) => t.name)).toEqual(['read_file', 'bash']);
    const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' };
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: root, env });
    execFileSync('git', ['add', '-A'], { cwd: root, env });
    execFileSync('git', ['commit', '-q', '-m', 'init'], { cwd: root, env });
    const second = await run(['-c', 'And now?']);
    expect(second.code).toBe(0);
    expect(api!.requests.at(-1)!.body.tools!.map((t) => t.name)).toEqual(['read_file', 'bash', 'git']);
    expect(second.stderr).toMatch(/^cache miss: tool git added, ~[\d,]+ tokens re-written ≈ \$0\.\d+$/m);
    expect(second.stderr.match(/cache miss/g)).toHaveLength(1);
  });

  it('the json result lists the misses in cache_misses[], and an unchanged resume has none', async () => {
    const { root, run } = await setup();
    api!.enqueue(reply(text('One.')), reply(text('Two.')), reply(text('Three.')));
    expect((await run(['q1'])).code).toBe(0);
    const unchanged = JSON.parse((await run(['-c', '--output-format', 'json', 'q2'])).stdout) as { cache_misses: unknown[] };
    expect(unchanged.cache_misses).toEqual([]);
    await fs.appendFile(path.join(root, 'AGENTS.md'), 'More.\n');
    const changed = JSON.parse((await run(['-c', '--output-format', 'json', 'q3'])).stdout) as { cache_misses: Array<Record<string, unknown>> };
    expect(changed.cache_misses).toEqual([{ turn: 1, changed: expect.stringMatching(/^AGENTS\.md changed \(\+\d+ bytes\)$/), tokens: expect.any(Number), cost_usd: expect.any(Number), api_reason: null }]);
    expect(changed.cache_misses[0]!.tokens).toBeGreaterThan(0);
    // Not Anthropic's endpoint: the diagnostics parameter is never sent to it.
    expect(api!.requests.every((r) => !('diagnostics' in r.body))).toBe(true);
  });

  it('an old message changed (compaction near the context window) is named by its position', async () => {
    const { run } = await setup();
    // The third response reports a 160k-token prompt: the next request elides the oldest large tool result.
    api!.enqueue(
      reply(toolUse('bash', { command: 'cat src/server.js src/router.js src/auth.js' })),
      reply(toolUse('bash', { command: 'ls src' })),
      { kind: 'message', content: [toolUse('bash', { command: 'wc -l src/server.js' })], usage: { input_tokens: 160_000 } },
      reply(text('Done.')),
    );
    const result = await run(['Where is auth?']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('warning: conversation near the context window: replaced 1 old tool results with placeholders');
    expect(result.stderr).toMatch(/^cache miss: message 3 \(user\) changed \(-\d+ bytes\), ~[\d,]+ tokens re-written ≈ \$0\.\d+$/m);
  });
});
