import os from 'node:os';
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import type { Block } from '../../src/agent/model.js';
import { runToolRound, TOOL_CONCURRENCY } from '../../src/agent/tool-round.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { Tool, ToolOutcome } from '../../src/tools/tool.js';

interface Probe {
  running: number;
  peak: number;
  started: number[];
}

/** A tool that sleeps `ms` (or until cancelled) and records how many of its calls run at once. */
function sleeper(probe: Probe): Tool<{ n: number; ms: number }> {
  return {
    name: 'sleep',
    description: 'sleep',
    inputSchema: { type: 'object', properties: {} },
    parse: (input) => ({ ok: true, value: input as { n: number; ms: number } }),
    display: (input) => `sleep ${input.n}`,
    run: async (input, ctx): Promise<ToolOutcome> => {
      probe.running++;
      probe.peak = Math.max(probe.peak, probe.running);
      probe.started.push(input.n);
      try {
        const cancelled = await new Promise<boolean>((resolve) => {
          // Like execCapped: one listener per running call, removed when the call ends.
          const onAbort = (): void => {
            clearTimeout(timer);
            resolve(true);
          };
          const timer = setTimeout(() => {
            ctx.signal.removeEventListener('abort', onAbort);
            resolve(false);
          }, input.ms);
          ctx.signal.addEventListener('abort', onAbort, { once: true });
          if (ctx.signal.aborted) onAbort();
        });
        return cancelled ? { content: `cancelled ${input.n}`, summary: 'cancelled', isError: true } : { content: `slept ${input.n}`, summary: 'ok', isError: false };
      } finally {
        probe.running--;
      }
    },
  };
}

const calls = (durations: number[]): Block[] => durations.map((ms, n) => ({ type: 'tool_use', id: `toolu_${n}`, name: 'sleep', input: { n, ms } }));

async function drain(gen: AsyncGenerator<AgentEvent, Block[]>): Promise<{ events: AgentEvent[]; results: Block[] }> {
  const events: AgentEvent[] = [];
  for (;;) {
    const step = await gen.next();
    if (step.done) return { events, results: step.value };
    events.push(step.value);
  }
}

function setup(extra: { toolConcurrency?: number } = {}) {
  const probe: Probe = { running: 0, peak: 0, started: [] };
  const config = { registry: new ToolRegistry([sleeper(probe)]), root: '/', toolTimeoutMs: 5000, ...extra };
  return { probe, config };
}

describe('runToolRound', () => {
  it('the bound follows the machine: one per core, at least 4, at most 8', () => {
    expect(TOOL_CONCURRENCY).toBe(Math.min(8, Math.max(4, os.availableParallelism())));
    expect(TOOL_CONCURRENCY).toBeGreaterThanOrEqual(4);
    expect(TOOL_CONCURRENCY).toBeLessThanOrEqual(8);
  });

  it.each([1, 3, TOOL_CONCURRENCY])('runs at most %i calls at once and keeps every slot busy', async (bound) => {
    const { probe, config } = setup({ toolConcurrency: bound });
    await drain(runToolRound(calls(Array(12).fill(15)), config, new AbortController().signal));
    expect(probe.peak).toBe(Math.min(bound, 12));
    expect(probe.started).toEqual([...Array(12).keys()]);
  });

  it('returns results in tool_use order although they finish in reverse; tool_end events come as they finish', async () => {
    const { config } = setup({ toolConcurrency: 4 });
    const { events, results } = await drain(runToolRound(calls([80, 60, 40, 20]), config, new AbortController().signal));
    expect(results.map((r) => (r.type === 'tool_result' ? [r.tool_use_id, r.content] : null))).toEqual([
      ['toolu_0', 'slept 0'],
      ['toolu_1', 'slept 1'],
      ['toolu_2', 'slept 2'],
      ['toolu_3', 'slept 3'],
    ]);
    const ends = events.filter((e) => e.type === 'tool_end').map((e) => (e as { id: string }).id);
    expect(ends).toEqual(['toolu_3', 'toolu_2', 'toolu_1', 'toolu_0']);
    expect(events.slice(0, 4).every((e) => e.type === 'tool_start')).toBe(true);
  });

  it('cancelling stops every running call and never starts the queued ones; every call gets its one result', async () => {
    const { probe, config } = setup({ toolConcurrency: 3 });
    const controller = new AbortController();
    setTimeout(() => controller.abort('interrupt'), 30);
    const started = Date.now();
    const { results } = await drain(runToolRound(calls(Array(10).fill(60_000)), config, controller.signal));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(probe.started).toEqual([0, 1, 2]);
    expect(results).toHaveLength(10);
    expect(results.map((r) => (r.type === 'tool_result' ? r.tool_use_id : null))).toEqual(calls(Array(10).fill(0)).map((c) => (c as { id: string }).id));
    expect(results.every((r) => r.type === 'tool_result' && r.is_error === true)).toBe(true);
    expect(results.slice(0, 3).map((r) => (r as { content: string }).content)).toEqual(['cancelled 0', 'cancelled 1', 'cancelled 2']);
    expect((results[3] as { content: string }).content).toMatch(/^Cancelled by the user/);
  });

  it('already cancelled: nothing runs, every call is answered', async () => {
    const { probe, config } = setup();
    const controller = new AbortController();
    controller.abort('interrupt');
    const { results } = await drain(runToolRound(calls([10, 10, 10]), config, controller.signal));
    expect(probe.started).toEqual([]);
    expect(results).toHaveLength(3);
  });

  it('40 calls that each listen for the abort at once print no MaxListenersExceededWarning, and the run signal keeps no listener', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => {
      warnings.push(w.name);
    };
    process.on('warning', onWarning);
    try {
      const { config } = setup({ toolConcurrency: 40 });
      const controller = new AbortController();
      const added: string[] = [];
      const removed: string[] = [];
      const { signal } = controller;
      const add = signal.addEventListener.bind(signal);
      const remove = signal.removeEventListener.bind(signal);
      signal.addEventListener = ((type: string, ...rest: [never, never]) => (added.push(type), add(type, ...rest))) as typeof signal.addEventListener;
      signal.removeEventListener = ((type: string, ...rest: [never, never]) => (removed.push(type), remove(type, ...rest))) as typeof signal.removeEventListener;
      await drain(runToolRound(calls(Array(40).fill(20)), config, signal));
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
      expect(added).toEqual(['abort']);
      expect(removed).toEqual(['abort']);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
