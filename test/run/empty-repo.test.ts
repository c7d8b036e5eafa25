import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { reply, startMockApi, text, type MockApi } from '../support/mock-api.js';
import { makeRepo } from '../support/temp-repo.js';

// Issue 33: a repository with nothing to search is answered without a paid request.
let api: MockApi | undefined;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await api?.close();
  api = undefined;
  for (const c of cleanups.splice(0)) await c();
});

describe('nothing to search: no model request', () => {
  it.each<[string, Record<string, string>, boolean]>([
    ['an empty directory', {}, false],
    ['an empty git repository', {}, true],
    ['a directory whose every file is ignored (its .gitignore too)', { '.gitignore': '*\n', 'build/out.o': 'x', 'notes.log': 'y' }, false],
  ])('%s: one line saying so, exit 0, the API never asked', async (_name, files, git) => {
    const repo = await makeRepo(files, { git: git && Object.keys(files).length > 0 });
    cleanups.push(repo.cleanup);
    if (git && Object.keys(files).length === 0) await import('node:child_process').then(({ execFileSync }) => execFileSync('git', ['init', '-q'], { cwd: repo.root }));
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('should not be asked')));
    const env = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url };
    const run = await runCli(['-C', repo.root, 'where is the server?'], { env });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^There is nothing to search here: .* has no files \(it is empty, or everything in it is ignored\)\. No model request was made\.\n$/);
    const json = await runCli(['-C', repo.root, '--output-format', 'json', 'where?'], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ subtype: 'success', num_turns: 0, total_cost_usd: 0, readonly_verified: true });
    expect(api.requests.filter((r) => r.path === '/v1/messages')).toHaveLength(0);
  });

  it('an audit of nothing reaches no verdict (exit 5), also without a request', async () => {
    const repo = await makeRepo({});
    cleanups.push(repo.cleanup);
    api = await startMockApi({ minCacheTokens: 256 });
    const run = await runCli(['-C', repo.root, 'audit', '--output-format', 'json', 'is it safe?'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } });
    expect(run.code).toBe(5);
    expect(JSON.parse(run.stdout).audit).toMatchObject({ verdict: 'inconclusive' });
    expect(api.requests).toHaveLength(0);
  });
});
