import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { httpError, reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';
import { runBinary } from '../support/binary.js';
import { MODEL_ALIASES } from '../../src/agent/model.js';
import { KNOWN_MODELS } from '../../src/agent/pricing.js';
import { continueLine } from '../../src/run/session-list.js';

// Issue 24, item 7, on the built binary against the local Messages API.
let api: MockApi;
let state: string;
const repo = useRepo(APP_FILES, { git: true });

beforeAll(async () => {
  state = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-models-state-'));
});
afterAll(async () => {
  await fs.rm(state, { recursive: true, force: true });
});
afterEach(async () => {
  await api?.close();
});

function run(args: string[], env: Record<string, string> = { ANTHROPIC_API_KEY: 'k' }) {
  return runBinary(args, { cwd: repo.root, env: { HOME: state, XDG_STATE_HOME: state, ...(api ? { ANTHROPIC_BASE_URL: api.url } : {}), ...env } });
}
const sent = () => api.requests.filter((r) => r.path === '/v1/messages');

describe('model aliases', () => {
  it('each alias names a model with a price (so budgets and costs work)', () => {
    expect([...MODEL_ALIASES.keys()]).toEqual(['opus', 'sonnet', 'haiku']);
    for (const id of MODEL_ALIASES.values()) expect(KNOWN_MODELS).toContain(id);
  });

  it.each([
    [['-m', 'opus'], {}, 'claude-opus-5-5'],
    [['--model', 'Sonnet'], {}, 'claude-sonnet-5-5'],
    [[], { SPELUNK_MODEL: 'haiku' }, 'claude-haiku-5-5'],
    [['-m', 'claude-opus-4-8'], {}, 'claude-opus-4-8'],
  ])('%j %j sends %s', async (args, env, id) => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('ok')));
    const result = await run([...args, 'q'], { ANTHROPIC_API_KEY: 'k', ...env });
    expect(result.code).toBe(0);
    expect(sent()[0]!.body.model).toBe(id);
  });

  it('--help lists the aliases with their ids', async () => {
    const result = await run(['--help'], {});
    expect(result.stdout).toContain('model id or alias (see Models below)');
    expect(result.stdout).toContain('Models: opus = claude-opus-5-5 · sonnet = claude-sonnet-5-5 · haiku = claude-haiku-5-5');
    expect(result.stdout).toContain('--allow-large-question');
  });
});

describe('ANTHROPIC_AUTH_TOKEN', () => {
  it('is sent as the bearer token when ANTHROPIC_API_KEY is not set', async () => {
    api = await startMockApi({ minCacheTokens: 256, expectedKey: 'tok-123' });
    api.enqueue(reply(text('ok')));
    const result = await run(['q'], { ANTHROPIC_AUTH_TOKEN: 'tok-123' });
    expect(result.code).toBe(0);
    expect(sent()[0]!.headers.authorization).toBe('Bearer tok-123');
    expect(sent()[0]!.headers['x-api-key']).toBeUndefined();
  });

  it('loses to ANTHROPIC_API_KEY when both are set (the SDK order), without a warning', async () => {
    api = await startMockApi({ minCacheTokens: 256, expectedKey: 'key-1' });
    api.enqueue(reply(text('ok')));
    const result = await run(['q'], { ANTHROPIC_API_KEY: 'key-1', ANTHROPIC_AUTH_TOKEN: 'tok-123' });
    expect(result.code).toBe(0);
    expect(sent()[0]!.headers.authorization).toBe('Bearer key-1');
    expect(result.stderr).not.toContain('both set');
  });

  it.each([
    [{ ANTHROPIC_API_KEY: 'key-1' }, 'key-1', 'ANTHROPIC_API_KEY'],
    [{ ANTHROPIC_AUTH_TOKEN: 'tok-123' }, 'tok-123', 'none'],
  ])('stream-json\'s init line says where the key came from (%j: %s)', async (env, key, source) => {
    api = await startMockApi({ minCacheTokens: 256, expectedKey: key });
    api.enqueue(reply(text('ok')));
    const result = await run(['--output-format', 'stream-json', 'q'], env);
    expect(result.code, result.stderr).toBe(0);
    const init = JSON.parse(result.stdout.split('\n')[0]!);
    expect(init).toMatchObject({ type: 'system', subtype: 'init', apiKeySource: source });
  });

  it('a refused token names the variable it came from', async () => {
    api = await startMockApi({ minCacheTokens: 256, expectedKey: 'right' });
    const result = await run(['q'], { ANTHROPIC_AUTH_TOKEN: 'wrong' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the bearer token in ANTHROPIC_AUTH_TOKEN was refused (ANTHROPIC_API_KEY is not set)');
  });

  it('neither set: one line naming both', async () => {
    const result = await runBinary(['q'], { cwd: repo.root, env: { HOME: state } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^spelunk: ANTHROPIC_API_KEY is not set; .* or ANTHROPIC_AUTH_TOKEN for a bearer token\n$/);
  });
});

describe('the context window: exit 3, as the README says', () => {
  it('stop_reason model_context_window_exceeded', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue({ kind: 'message', content: [text('Partial')], stop_reason: 'model_context_window_exceeded' });
    const result = await run(['q']);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("the conversation filled the model's context window");
  });

  it('a 400 "prompt is too long" (and a 413) in text mode: one line, exit 3', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(httpError(400, 'invalid_request_error', 'prompt is too long: 1204381 tokens > 1000000 maximum'), httpError(413, 'request_too_large', 'Request exceeds the maximum size'));
    const first = await run(['q']);
    expect(first.code).toBe(3);
    expect(first.stderr).toContain("the question does not fit claude-sonnet-5-5's context window (API 400: prompt is too long: 1204381 tokens > 1000000 maximum); ask a narrower question or send less text");
    expect(first.stderr).not.toContain('internal error');
    const second = await run(['q']);
    expect(second.code).toBe(3);
    expect(second.stderr).toContain('(API 413: Request exceeds the maximum size)');
  });

  it('any other 400 stays an API failure (exit 1)', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(httpError(400, 'invalid_request_error', 'messages: text content blocks must be non-empty'));
    expect((await run(['q'])).code).toBe(1);
  });
});

describe('saved sessions: how to go on', () => {
  it('a stream cut mid-answer says to continue with -c, and -c picks up the saved tool results', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('read_file', { path: 'src/router.js' })), { kind: 'stream_cut', afterText: 'The router is ' });
    const cut = await run(['where is the router?']);
    expect(cut.code).toBe(1);
    expect(cut.stderr).toMatch(/the API stream was cut mid-answer[^\n]*\ncontinue: spelunk -c "…" \(or spelunk --resume [0-9a-f]{8} "…"\)\n$/);
    api.enqueue(reply(text('In src/router.js:1.')));
    const resumed = await run(['-c', 'go on']);
    expect(resumed.code).toBe(0);
    const messages = JSON.stringify(sent().at(-1)!.body.messages);
    expect(messages).toContain('where is the router?');
    expect(messages).toContain('function handle');
    expect(resumed.stderr).not.toContain('continue: spelunk');
  });

  it('spelunk --resume with no id lists this repository\'s sessions, newest first, without a key', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('one')), reply(text('two')));
    await run(['first question?']);
    await run(['second question?']);
    const listed = await runBinary(['--resume'], { cwd: repo.root, env: { HOME: state, XDG_STATE_HOME: state } });
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toBe('spelunk --resume <id> "question" continues one (a prefix of the id is enough); spelunk -c the latest');
    const rows = lines.slice(0, -1).filter((l) => /question\?$/.test(l));
    expect(rows.slice(0, 2).map((l) => l.replace(/^.*q {2}/, ''))).toEqual(['second question?', 'first question?']);
    expect(rows[0]).toMatch(/^ {2}[0-9a-f]{8} {2}\d{4}-\d\d-\d\d \d\d:\d\d +~\$[\d.]+ +1 q {2}second question\?$/);
  });

  it('the continue line names the root when it is not the current directory (sessions are kept per root)', () => {
    const id = '0123abcd-0000-4000-8000-000000000000';
    expect(continueLine('/repo', '/repo', id)).toBe('continue: spelunk -c "…" (or spelunk --resume 0123abcd "…")');
    expect(continueLine('/src/my repo', '/home', id)).toBe('continue: spelunk -C "/src/my repo" -c "…" (or spelunk -C "/src/my repo" --resume 0123abcd "…")');
  });

  it('spelunk -C elsewhere --resume: an empty list says so', async () => {
    const other = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-empty-repo-'));
    try {
      const listed = await runBinary(['-C', other, '--resume'], { cwd: repo.root, env: { HOME: state, XDG_STATE_HOME: state } });
      expect(listed.code).toBe(0);
      expect(listed.stdout).toBe('no saved sessions for this repository yet\n');
    } finally {
      await fs.rm(other, { recursive: true, force: true });
    }
  });
});
