import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import { escapeControls } from '../escape.js';
import { Conversation } from '../agent/conversation.js';
import { ABORT_INTERRUPT } from '../agent/loop.js';
import type { Config } from '../config.js';
import type { Io } from '../io.js';
import { estimateCostUsd } from '../agent/pricing.js';
import { UsageLedger, formatCostUsd } from '../output/usage.js';
import type { ResultObject } from '../output/result.js';
import { snapshotRepoState, verifyReadOnly } from '../sandbox/readonly.js';
import { askOnce, type EventSink } from '../run/ask.js';
import { runOnce } from '../run/oneshot.js';
import type { Session } from '../run/session.js';
import { citationsOf } from './citations.js';
import { ANSWER_FIT, AUDIT_FIT, fitAnswer, fitResult } from './fit.js';
import type { McpCall } from './tools.js';
import type { Severity } from '../audit/report.js';
import { currentSandbox } from '../sandbox/exec.js';
import { locate } from '../locate/locate.js';
import { SymbolIndex } from '../symbols/index.js';

/** Conversations kept for ask_followup; past this the least recently used idle one is forgotten. */
const MAX_CONVERSATIONS = 32;

/** What a tool call returns to the MCP client: the structured result, or an error message. */
export type CallOutcome = { ok: true; structured: Record<string, unknown> } | { ok: false; message: string };

/** How a call is controlled: the client's cancellation and the progress sink (when it sent a progress token). */
export interface CallControl {
  signal: AbortSignal;
  progress: EventSink | null;
}

interface Entry {
  session: Session;
  busy: boolean;
  usedAt: number;
}

/**
 * The server's state: the shared preamble session, the conversations ask_followup can continue, and the money spent.
 * One instance per `spelunk mcp` process (held by the server, never at module level).
 */
export class Researcher {
  readonly #config: Config;
  readonly #base: Promise<Session>;
  readonly #io: Io;
  readonly #conversations = new Map<string, Entry>();
  readonly #symbols = new SymbolIndex();
  #spentUsd = 0;
  /**
   * Counts every billed request toward --max-budget-usd-total as its usage arrives, not when the call returns: a
   * cancelled call was billed too, and a call started meanwhile must already see the spending.
   */
  readonly #spend: EventSink = {
    handle: (e) => {
      if (e.type === 'usage') this.#spentUsd += estimateCostUsd(e.model, e.usage) ?? 0;
    },
  };

  constructor(config: Config, base: Promise<Session>, io: Io) {
    this.#config = config;
    this.#base = base;
    this.#io = io;
  }

  /** Runs one validated call; never throws for anything the client or the model did. */
  async run(call: McpCall, ctl: CallControl): Promise<CallOutcome> {
    // Free (no model call), so no budget applies; one symbol index per server keeps parsed files across calls.
    if (call.tool === 'locate') return this.#locate(call.question, call.k, ctl.signal);
    const over = this.#budgetLeft();
    if (typeof over === 'string') return { ok: false, message: over };
    if (call.tool === 'audit') return this.#audit(call.question, call.failOn, over, ctl);
    if (call.tool === 'ask') {
      const base = await this.#base;
      const entry: Entry = { session: { ...base, conversation: new Conversation(), ledger: new UsageLedger() }, busy: false, usedAt: Date.now() };
      const id = randomUUID();
      this.#remember(id, entry);
      return this.#answer(id, entry, call.question, call.maxTurns ?? this.#config.maxTurns, over, ctl);
    }
    const entry = this.#conversations.get(call.sessionId);
    if (!entry) return { ok: false, message: `unknown session_id "${call.sessionId.slice(0, 80)}": it was never returned by this server or was forgotten (the server keeps the last ${MAX_CONVERSATIONS}); start again with ask` };
    if (entry.busy) return { ok: false, message: 'that session is still answering an earlier question; wait for it, or start a new one with ask' };
    return this.#answer(call.sessionId, entry, call.question, this.#config.maxTurns, over, ctl);
  }

  /** The per-call budget in USD (null: none), or why no call can start. */
  #budgetLeft(): number | null | string {
    const mcp = this.#config.mcp;
    const perCall = mcp?.perCallUsd ?? this.#config.maxBudgetUsd;
    if (!mcp || mcp.totalUsd === null) return perCall;
    const left = mcp.totalUsd - this.#spentUsd;
    if (left <= 0) return `the server's budget is spent (${formatCostUsd(this.#spentUsd)} of --max-budget-usd-total ${mcp.totalUsd}); restart spelunk mcp with a larger one`;
    return perCall === null ? left : Math.min(perCall, left);
  }

  #remember(id: string, entry: Entry): void {
    this.#conversations.set(id, entry);
    if (this.#conversations.size <= MAX_CONVERSATIONS) return;
    const idle = [...this.#conversations].filter(([, e]) => !e.busy).sort((a, b) => a[1].usedAt - b[1].usedAt);
    const oldest = idle[0];
    if (oldest) this.#conversations.delete(oldest[0]);
  }

  // Long on purpose: one call from start to result, in order (proof, loop, proof, result).
  async #answer(id: string, entry: Entry, question: string, maxTurns: number, budgetUsd: number | null, ctl: CallControl): Promise<CallOutcome> {
    entry.busy = true;
    entry.usedAt = Date.now();
    const controller = linkedAbort(ctl.signal);
    try {
      const before = await snapshotRepoState(this.#config.root).catch(() => null);
      // A fresh ledger per call: the budget the loop enforces is this call's, the conversation is shared.
      const ledger = new UsageLedger();
      const session: Session = { ...entry.session, ledger };
      const feed: EventSink = { handle: (e) => e.type === 'usage' && ledger.add({ turn: e.turn, model: e.model, usage: e.usage, durationMs: e.durationMs }) };
      const config: Config = { ...this.#config, maxTurns, maxBudgetUsd: budgetUsd };
      const sinks = [feed, this.#spend, ...(ctl.progress ? [ctl.progress] : [])];
      const done = await askOnce(question, session, config, sinks, controller.signal, (abs) => before?.noteRead(abs));
      const summary = ledger.summarySince(0);
      if (done.stop === 'aborted') return { ok: false, message: 'cancelled' };
      const readonly = before ? await verifyReadOnly(before) : { verified: null, detail: 'the repository state could not be recorded before the call' };
      const notes = [...(done.message && done.stop !== 'end_turn' ? [done.message] : []), ...(readonly.verified === false ? [`the repository changed during the call: ${readonly.detail ?? ''}`] : [])];
      if (done.text === '' && done.stop !== 'end_turn') return { ok: false, message: notes.join('; ') || done.stop };
      const { text, truncated, note } = fitAnswer(done.text, 'answer_markdown');
      if (note) notes.push(note);
      this.#log(`${question.slice(0, 60)} → ${done.stop}, ${summary.requests} requests, ${formatCostUsd(summary.costUsd)}`);
      return {
        ok: true,
        structured: fitResult(
          {
            answer_markdown: text,
            citations: await citationsOf(text, this.#config.root),
            session_id: id,
            truncated,
            stop_reason: done.stop,
            readonly_verified: readonly.verified,
            sandbox: currentSandbox().kind,
            notes,
            usage: {
              input: summary.usage.input_tokens,
              cache_write: summary.usage.cache_creation_input_tokens,
              cache_read: summary.usage.cache_read_input_tokens,
              output: summary.usage.output_tokens,
              requests: summary.requests,
              cost_usd: summary.costUsd === null ? null : Math.round(summary.costUsd * 1e6) / 1e6,
            },
          },
          ANSWER_FIT,
        ),
      };
    } finally {
      entry.busy = false;
      controller.dispose();
    }
  }

  /** An audit is exactly `spelunk audit --output-format json`, run in-process: the same result object and proof. */
  async #audit(question: string, failOn: Severity, budgetUsd: number | null, ctl: CallControl): Promise<CallOutcome> {
    const signals = new EventEmitter();
    const onAbort = (): void => void signals.emit('SIGINT');
    ctl.signal.addEventListener('abort', onAbort, { once: true });
    let stdout = '';
    const io: Io = {
      stdout: { write: (chunk: string) => (stdout += chunk) },
      stderr: this.#io.stderr,
      stdin: Readable.from([]) as Io['stdin'],
      env: this.#io.env,
      cwd: this.#config.root,
      signals: signals as Io['signals'],
    };
    const config: Config = { ...this.#config, outputFormat: 'json', quiet: true, audit: { failOn, sarif: null, sarifCategory: null, sarifOnError: 'none', diff: null, scope: 'line', baseline: null, updateBaseline: false }, maxBudgetUsd: budgetUsd };
    try {
      const exitCode = await runOnce(config, question, io, [this.#spend, ...(ctl.progress ? [ctl.progress] : [])]);
      if (ctl.signal.aborted) return { ok: false, message: 'cancelled' };
      const result = JSON.parse(stdout) as ResultObject;
      this.#log(`audit ${question.slice(0, 60)} → ${result.audit?.verdict ?? result.subtype}, ${formatCostUsd(result.total_cost_usd)}`);
      const { text, truncated, note } = fitAnswer(result.result, 'result');
      const warnings = note ? [...result.warnings, note] : result.warnings;
      return { ok: true, structured: fitResult({ ...result, result: text, truncated, warnings, fail_on: failOn, exit_code: exitCode }, AUDIT_FIT) };
    } finally {
      ctl.signal.removeEventListener('abort', onAbort);
    }
  }

  async #locate(question: string, k: number, signal: AbortSignal): Promise<CallOutcome> {
    const result = await locate(this.#config.root, question, { k, timeoutMs: this.#config.toolTimeoutMs, signal, symbols: this.#symbols });
    if (signal.aborted) return { ok: false, message: 'cancelled' };
    this.#log(`locate ${question.slice(0, 60)} → ${result.results.length} files`);
    return { ok: true, structured: { ...result } };
  }

  #log(line: string): void {
    this.#io.stderr.write(`spelunk mcp: ${escapeControls(line)}\n`);
  }
}

/** An AbortController that aborts (as an interrupt) when `signal` does; `dispose` unhooks it. */
function linkedAbort(signal: AbortSignal): AbortController & { dispose(): void } {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(ABORT_INTERRUPT);
  if (signal.aborted) onAbort();
  signal.addEventListener('abort', onAbort, { once: true });
  return Object.assign(controller, { dispose: () => signal.removeEventListener('abort', onAbort) });
}
