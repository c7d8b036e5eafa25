import { setMaxListeners } from 'node:events';
import os from 'node:os';
import type { ToolRegistry } from '../tools/registry.js';
import type { ToolOutcome } from '../tools/tool.js';
import type { SymbolSource } from '../symbols/layer.js';
import type { AgentEvent } from './events.js';
import type { Block } from './model.js';
import type { SandboxKind } from '../sandbox/kernel.js';

/**
 * Tools of one turn that may run at once: one per core, at most 8, and never fewer than the 4 of before. The calls
 * are mostly rg/find walks that wait on the file system as much as on the CPU: on a 2-core machine, 8 `find` scans of
 * a 100k-file repository took 3.9 s in one turn 2 at a time, 2.3-2.7 s 4 at a time and 1.8-2.1 s 8 at a time.
 */
export const TOOL_CONCURRENCY = Math.min(8, Math.max(4, os.availableParallelism()));
/**
 * Abort listeners one running call may hold on the turn's signal at once (the read-only gate, the process it
 * started, a suggestion walk), plus the turn's own bookkeeping. The bound stays finite so a real leak still warns.
 */
const LISTENERS_PER_CALL = 3;
const LISTENERS_SLACK = 4;
/** A wait for the tools' gate shorter than this is not worth a line. */
const WAIT_NOTICE_MS = 50;

export interface ToolRoundConfig {
  registry: ToolRegistry;
  root: string;
  toolTimeoutMs: number;
  onRead?: (absPath: string) => void;
  /** Tools run only once this settles (the read-only snapshot); the wait is reported, not counted as tool time. */
  toolsReady?: Promise<unknown>;
  /** Calls running at once (default TOOL_CONCURRENCY). */
  toolConcurrency?: number;
  /** The session's symbol layer, handed to every call (read_file's outline). */
  symbols?: SymbolSource;
  /** The sandbox the programs run in (the git tool's policy depends on it); absent: the tables alone, the stricter reading. */
  sandbox?: SandboxKind;
}

type ToolUse = Extract<Block, { type: 'tool_use' }>;

/**
 * Runs every tool_use of a turn, up to the concurrency bound at once; yields start/end events (ends in completion
 * order) and returns the tool_result blocks in request order, for one user message. Cancelling `signal` cancels
 * every running call and turns every queued one into a "cancelled" result at once.
 */
export async function* runToolRound(content: Block[], config: ToolRoundConfig, signal: AbortSignal): AsyncGenerator<AgentEvent, Block[]> {
  const calls = content.filter((b): b is ToolUse => b.type === 'tool_use');
  for (const call of calls) {
    yield { type: 'tool_start', id: call.id, name: call.name, input: call.input, display: config.registry.display(call.name, call.input) };
  }
  if (config.toolsReady) {
    const waited = await waitFor(config.toolsReady, signal);
    if (waited >= WAIT_NOTICE_MS) yield { type: 'tools_waited', durationMs: waited };
  }
  const bound = Math.max(1, config.toolConcurrency ?? TOOL_CONCURRENCY);
  const turn = turnSignal(signal, Math.min(bound, calls.length));
  try {
    const outcomes = yield* runBounded(calls, bound, config, turn.signal);
    return calls.map((call, i) => toolResult(call.id, outcomes[i]!));
  } finally {
    turn.release();
  }
}

/** Runs the calls, `bound` at a time, yielding each `tool_end` as it finishes; outcomes come back by index. */
async function* runBounded(
  calls: ToolUse[],
  bound: number,
  config: ToolRoundConfig,
  signal: AbortSignal,
): AsyncGenerator<AgentEvent, ToolOutcome[]> {
  const ctx = {
    root: config.root,
    signal,
    timeoutMs: config.toolTimeoutMs,
    onRead: config.onRead,
    sandbox: config.sandbox ?? 'tables',
    ...(config.symbols ? { symbols: config.symbols } : {}),
  };
  const outcomes: ToolOutcome[] = [];
  const pending = new Map<number, Promise<{ index: number; outcome: ToolOutcome; durationMs: number }>>();
  let next = 0;
  const launch = (): void => {
    const index = next++;
    const call = calls[index];
    if (!call) return;
    const started = Date.now();
    pending.set(
      index,
      config.registry.dispatch(call.name, call.input, ctx).then((outcome) => ({ index, outcome, durationMs: Date.now() - started })),
    );
  };
  while (next < Math.min(bound, calls.length)) launch();
  while (pending.size > 0) {
    const finished = await Promise.race(pending.values());
    pending.delete(finished.index);
    outcomes[finished.index] = finished.outcome;
    const call = calls[finished.index]!;
    yield { type: 'tool_end', id: call.id, name: call.name, input: call.input, outcome: finished.outcome, durationMs: finished.durationMs };
    launch();
  }
  return outcomes;
}

/**
 * The signal the turn's tools listen to: one listener on the run's signal however many calls there are, and a
 * listener bound sized to the calls that run at once (Node warns past 10 listeners on one AbortSignal).
 */
function turnSignal(run: AbortSignal, running: number): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  setMaxListeners(Math.max(10, running * LISTENERS_PER_CALL + LISTENERS_SLACK), controller.signal);
  const forward = (): void => controller.abort(run.reason);
  if (run.aborted) forward();
  else run.addEventListener('abort', forward, { once: true });
  return { signal: controller.signal, release: () => run.removeEventListener('abort', forward) };
}

function toolResult(id: string, outcome: ToolOutcome): Block {
  const text = outcome.content === '' ? '(no output)' : outcome.content;
  return { type: 'tool_result', tool_use_id: id, content: text, ...(outcome.isError ? { is_error: true } : {}) };
}

/** Milliseconds until `ready` settles (or the signal aborts; the tools then report the cancel themselves). */
async function waitFor(ready: Promise<unknown>, signal: AbortSignal): Promise<number> {
  const started = Date.now();
  let onAbort = (): void => {};
  await new Promise<void>((resolve) => {
    onAbort = resolve;
    void ready.then(() => resolve(), () => resolve());
    if (signal.aborted) resolve();
    signal.addEventListener('abort', onAbort, { once: true });
  });
  signal.removeEventListener('abort', onAbort);
  return Date.now() - started;
}
