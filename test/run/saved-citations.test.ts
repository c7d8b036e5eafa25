import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { reply, startMockApi, text, type MockApi } from '../support/mock-api.js';
import { APP_FILES, makeRepo } from '../support/temp-repo.js';

let api: MockApi | null = null;
let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => {
  await api?.close();
  await cleanup?.();
  api = null;
  cleanup = null;
});

const git = (root: string, ...args: string[]) =>
  execFileSync('git', args, { cwd: root, env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' } });

// A resume names the cited files that changed by the citation extractor's rules: a link cites, a URL does not.
it('a resumed session names a file its answer cited as a link, and not one only a URL mentioned', async () => {
  const repo = await makeRepo(APP_FILES, { git: true });
  cleanup = repo.cleanup;
  api = await startMockApi({ minCacheTokens: 256 });
  api.enqueue(reply(text('See [the handler](src/router.js#L3) and https://example.com/src/auth.js:4.')), reply(text('ok')));
  const env = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url };
  const first = await runCli(['-C', repo.root, '--output-format', 'json', 'q1'], { env });
  const id = (JSON.parse(first.stdout) as { session_id: string }).session_id;
  for (const f of ['src/router.js', 'src/auth.js']) await fs.appendFile(path.join(repo.root, f), '// changed\n');
  git(repo.root, 'commit', '-qam', 'change');
  const run = await runCli(['-C', repo.root, '--resume', id.slice(0, 8), 'q2'], { env });
  expect(run.code).toBe(0);
  expect(run.stderr).toMatch(/HEAD moved \([0-9a-f]{7} → [0-9a-f]{7}\), cited files changed: src\/router\.js(?:;|\n)/);
});
