import { promises as fs } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { reply, startMockApi, text, toolUse, type MockApi, type RecordedRequest } from '../support/mock-api.js';
import { APP_FILES, makeRepo } from '../support/temp-repo.js';

// Issue 33: a resumed conversation is sent byte for byte as the live one was (every field the API put on the wire,
// e.g. `caller` on tool_use blocks, which the fake API sends as the real one does), so it reads the prompt cache.
let api: MockApi | undefined;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await api?.close();
  api = undefined;
  for (const c of cleanups.splice(0)) await c();
});

async function freshRepo(): Promise<string> {
  const repo = await makeRepo(APP_FILES, { git: true });
  cleanups.push(repo.cleanup);
  return fs.realpath(repo.root);
}

/** The first question's script: a tool call, then the answer; the second question is answered at once. */
const SCRIPT = () => [reply(toolUse('bash', { command: 'ls src' }), toolUse('read_file', { path: 'src/router.js' })), reply(text('Routing is in src/router.js:3.')), reply(text('It returns 404 at src/router.js:5.'))];

/** A request's messages as bytes, without the sender's cache_control markers (they move with the last message). */
function messageBytes(request: RecordedRequest): string {
  return JSON.stringify(request.body.messages, (key, value) => (key === 'cache_control' ? undefined : value));
}

const env = () => ({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api!.url });

/** The REPL asks both questions in one process: its second question's first request is the live one. */
async function liveSecondRequest(): Promise<RecordedRequest> {
  const root = await freshRepo();
  api = await startMockApi({ minCacheTokens: 256 });
  api.enqueue(...SCRIPT());
  const run = await runCli(['-C', root, '-i', 'Where is routing?'], { env: env(), stdin: 'And unknown routes?\n' });
  expect(run.code).toBe(0);
  const request = api.requests.filter((r) => r.path === '/v1/messages').at(-1)!;
  await api.close();
  api = undefined;
  return request;
}

describe('resumes hit the cache: -c and --resume send the conversation as it was sent live', () => {
  it.each([
    ['-c', (_id: string) => ['-c']],
    ['--resume', (id: string) => ['--resume', id]],
  ])('%s: the same message bytes as the live request, and a cache read of the whole earlier conversation', async (_flag, resumeArgs) => {
    const live = await liveSecondRequest();
    const root = await freshRepo();
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(...SCRIPT());
    const first = await runCli(['-C', root, '--output-format', 'json', 'Where is routing?'], { env: env() });
    expect(first.code).toBe(0);
    const id = JSON.parse(first.stdout).session_id as string;
    const before = api.requests.at(-1)!.usage!;
    const second = await runCli(['-C', root, '--output-format', 'json', ...resumeArgs(id), 'And unknown routes?'], { env: env() });
    expect(second.code).toBe(0);
    const resumed = api.requests.at(-1)!;
    // The tool_use blocks carry the API's `caller` in both: the saved session kept it.
    expect(messageBytes(resumed)).toContain('"caller":{"type":"direct"}');
    expect(messageBytes(resumed)).toBe(messageBytes(live));
    // Everything the first run sent or received is read from the cache: nothing of it is written again.
    expect(resumed.usage!.cache_read_input_tokens).toBeGreaterThanOrEqual(before.cache_read_input_tokens + before.cache_creation_input_tokens);
    expect(second.stderr).not.toMatch(/cache miss/);
  });
});
