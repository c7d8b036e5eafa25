import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config.js';
import { openSession } from '../../src/run/session.js';
import { gitAvailability } from '../../src/tools/git.js';

const root = path.resolve('fixtures/sample-repo');
const config: Config = {
  root,
  model: 'claude-sonnet-5-5',
  maxTurns: 25,
  maxTokens: 16000,
  depth: 3,
  maxEntries: null,
  mapTokens: 2000,
  toolTimeoutMs: 30_000,
  verbose: false,
  thinking: false,
  effort: null,
  showThinking: false,
  color: false,
  debug: false,
  interactive: false,
  outputFormat: 'text',
  maxBudgetUsd: null,
  timeoutMs: null,
  audit: null,
  quiet: false,
  mcp: null,
  session: { persist: false, resume: null },
  verifyCitations: 'report',
  render: true,
  editorUrl: null,
  sandboxMode: 'auto',
  apiKey: 'test-key',
  baseURL: 'http://127.0.0.1:9',
};

/** A read_file call on the session, and whether it has finished yet. */
function readCall(session: Awaited<ReturnType<typeof openSession>>, signal = new AbortController().signal) {
  const state = { done: false };
  const outcome = session.registry.dispatch('read_file', { path: 'package.json' }, { root, signal, timeoutMs: 1000 }).finally(() => {
    state.done = true;
  });
  return { state, outcome };
}

describe('openSession toolsReady (the one-shot read-only snapshot gates the tools, not the first request)', () => {
  it('a tool call waits until toolsReady settles', async () => {
    let release!: () => void;
    const session = await openSession(config, { toolsReady: new Promise<void>((resolve) => (release = resolve)) });
    const call = readCall(session);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(call.state.done).toBe(false);
    release();
    expect(await call.outcome).toMatchObject({ isError: false });
  });

  it('a rejected toolsReady still lets the tool run', async () => {
    const session = await openSession(config, { toolsReady: Promise.reject(new Error('git failed')) });
    expect(await readCall(session).outcome).toMatchObject({ isError: false });
  });

  it('cancelling the call stops the wait', async () => {
    const session = await openSession(config, { toolsReady: new Promise(() => {}) });
    const controller = new AbortController();
    const call = readCall(session, controller.signal);
    controller.abort();
    expect(await call.outcome).toMatchObject({ isError: true, summary: 'cancelled' });
  });

  it('without toolsReady the tool runs at once', async () => {
    const session = await openSession(config);
    expect(await readCall(session).outcome).toMatchObject({ isError: false, content: expect.stringContaining('1\t{') });
  });

  it('an audit session has report_findings after the two tools, and an ask session does not', async () => {
    // The fixture lies below spelunk's own work tree in a checkout: git is offered there, confined to the fixture.
    const git = (await gitAvailability(root)).available ? ['git'] : [];
    expect((await openSession(config)).registry.names()).toEqual(['read_file', 'bash', ...git]);
    expect((await openSession(config, { audit: { report: null, warnings: [] } })).registry.names()).toEqual(['read_file', 'bash', ...git, 'report_findings']);
  });
});
