import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Config } from '../src/config.js';
import { openSession } from '../src/session.js';
import type { Tool } from '../src/tools/tool.js';

const root = path.resolve('fixtures/sample-repo');
const config: Config = {
  root,
  model: 'claude-sonnet-5-5',
  maxTurns: 25,
  maxTokens: 16000,
  depth: 3,
  maxEntries: 200,
  toolTimeoutMs: 30_000,
  verbose: false,
  thinking: false,
  showThinking: false,
  color: false,
  debug: false,
  interactive: false,
  outputFormat: 'text',
  maxBudgetUsd: null,
  timeoutMs: null,
  audit: null,
  apiKey: 'test-key',
  baseURL: 'http://127.0.0.1:9',
};

/** A tool that records when it runs. */
function probe(events: string[]): Tool<Record<string, never>> {
  return {
    name: 'probe',
    description: 'records its runs',
    inputSchema: { type: 'object', properties: {} },
    parse: () => ({ ok: true, value: {} }),
    display: () => 'probe',
    run: async () => {
      events.push('run');
      return { content: 'ran', summary: 'ran', isError: false };
    },
  };
}

describe('openSession toolsReady (the one-shot read-only snapshot gates the tools, not the first request)', () => {
  it('a tool call waits until toolsReady settles', async () => {
    const events: string[] = [];
    let release!: () => void;
    const ready = new Promise<void>((resolve) => (release = resolve));
    const session = await openSession(config, [probe(events)], { toolsReady: ready });
    const ctx = { root, signal: new AbortController().signal, timeoutMs: 1000 };
    const outcome = session.registry.dispatch('probe', {}, ctx);
    await new Promise((resolve) => setImmediate(resolve));
    events.push('release');
    release();
    expect(await outcome).toMatchObject({ content: 'ran', isError: false });
    expect(events).toEqual(['release', 'run']);
  });

  it('a rejected toolsReady still lets the tool run', async () => {
    const events: string[] = [];
    const session = await openSession(config, [probe(events)], { toolsReady: Promise.reject(new Error('git failed')) });
    const ctx = { root, signal: new AbortController().signal, timeoutMs: 1000 };
    expect(await session.registry.dispatch('probe', {}, ctx)).toMatchObject({ isError: false });
    expect(events).toEqual(['run']);
  });

  it('cancelling the call stops the wait', async () => {
    const events: string[] = [];
    const session = await openSession(config, [probe(events)], { toolsReady: new Promise(() => {}) });
    const controller = new AbortController();
    const outcome = session.registry.dispatch('probe', {}, { root, signal: controller.signal, timeoutMs: 1000 });
    controller.abort();
    await outcome;
    expect(events).toEqual(['run']);
  });

  it('without toolsReady the tool runs at once', async () => {
    const events: string[] = [];
    const session = await openSession(config, [probe(events)]);
    const outcome = session.registry.dispatch('probe', {}, { root, signal: new AbortController().signal, timeoutMs: 1000 });
    events.push('dispatched');
    await outcome;
    expect(events).toEqual(['run', 'dispatched']);
  });
});
