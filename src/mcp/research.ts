import { indexCacheDir, RepoIndexes } from '../locate/index/store.js';
import { redactLocate } from '../locate/redact.js';
import { randomUUID } from 'node:crypto';
import { escapeControls } from '../escape.js';
import { Conversation } from '../agent/conversation.js';
import { ABORT_INTERRUPT } from '../agent/loop.js';
import { citationRecord } from '../citations/verify.js';
import type { Config } from '../config.js';
import { stopMessage } from '../exit-codes.js';
import type { Io } from '../io.js';
import { UsageLedger, formatCostUsd } from '../output/usage.js';
import type { EventSink } from '../run/ask.js';
import { gatedSession, runQuestion, type RunOutcome } from '../run/run-question.js';
import { openSession, type Session, type SessionOptions } from '../run/session.js';
import { citationsOf } from './citations.js';
import { ANSWER_FIT, AUDIT_FIT, fitAnswer, fitResult } from './fit.js';
import type { McpCall } from './tools.js';
import type { Severity } from '../audit/report.js';
import { parseDiffSpec, type DiffSource } from '../audit/diff.js';
import { UsageError } from '../errors.js';
import { historyCacheDir } from '../locate/command.js';
import { locate } from '../locate/locate.js';
import { lazySymbols, type SymbolSource } from '../symbols/layer.js';
import { concurrentLine } from '../run/concurrent.js';

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
  readonly #symbols: SymbolSource;
  /** One content index per root, open across calls (src/locate/index/store.ts). */
  readonly #index: RepoIndexes;
  /** The history cache `spelunk locate` uses, so both mine a repository's history once. */
  readonly #historyCache: string | null;
  /**
   * Every billed request of every call, toward --max-budget-usd-total: each call's ledger adds its rows here as its
   * usage arrives, not when the call returns (a cancelled call was billed too, and a call started meanwhile must
   * already see the spending).
   */
  readonly #spent = new UsageLedger();
  #spentUsd = (): number => this.#spent.totalCostUsd() ?? 0;

  /** `symbols`: the server's symbol layer, shared with its sessions (else one of its own, with the same disk cache). */
  constructor(config: Config, base: Promise<Session>, io: Io, symbols: SymbolSource = lazySymbols(io.env)) {
    this.#config = config;
    this.#base = base;
    this.#io = io;
    // The same cache across runs as `spelunk locate` (validated entries; see disk-cache.ts), so a new server starts warm.
    this.#symbols = symbols;
    this.#index = new RepoIndexes(indexCacheDir(io.env));
    this.#historyCache = historyCacheDir(io.env);
  }

  /** Runs one validated call; never throws for anything the client or the model did. */
  async run(call: McpCall, ctl: CallControl): Promise<CallOutcome> {
    // Free (no model call), so no budget applies; one symbol index per server keeps parsed files across calls.
    if (call.tool === 'locate') return this.#locate(call.question, call.k, ctl.signal);
    const missing = this.#config.missingCredential;
    if (missing !== undefined) {
      // The variable the message asks for: the key, or a cloud's region or project (Bedrock, Vertex AI, Foundry).
      const variable = /export (\w+)=/.exec(missing)?.[1] ?? 'ANTHROPIC_API_KEY';
      return { ok: false, message: `${call.tool} calls the model, and ${missing}: in the environment spelunk mcp starts with (claude mcp add spelunk --env ${variable}=… -- spelunk mcp), then restart it; locate works without a key` };
    }
    const over = this.#budgetLeft();
    if (typeof over === 'string') return { ok: false, message: over };
    if (call.tool === 'audit') return this.#audit(call.question, call.failOn, call.diff, over, ctl);
    if (call.tool === 'ask') {
      const base = await this.#base;
      // Busy from the start: it is about to answer, so making room for it must not forget it.
      const entry: Entry = {
        session: { ...base, conversation: new Conversation(), ledger: new UsageLedger() },
        busy: true,
        usedAt: Date.now(),
      };
      const id = randomUUID();
      this.#remember(id, entry);
      return this.#answer(id, entry, call.question, call.maxTurns ?? this.#config.maxTurns, over, ctl);
    }
    const entry = this.#conversations.get(call.sessionId);
    if (!entry) {
      return {
        ok: false,
        message: `unknown session_id "${call.sessionId.slice(0, 80)}": it was never returned by this server or was forgotten (the server keeps the last ${MAX_CONVERSATIONS}); start again with ask`,
      };
    }
    if (entry.busy) {
      return { ok: false, message: 'that session is still answering an earlier question; wait for it, or start a new one with ask' };
    }
    return this.#answer(call.sessionId, entry, call.question, this.#config.maxTurns, over, ctl);
  }

  /** The per-call budget in USD (null: none), or why no call can start. */
  #budgetLeft(): number | null | string {
    const mcp = this.#config.mcp;
    const perCall = mcp?.perCallUsd ?? this.#config.maxBudgetUsd;
    if (!mcp || mcp.totalUsd === null) return perCall;
    const left = mcp.totalUsd - this.#spentUsd();
    if (left <= 0) {
      return `the server's budget is spent (${formatCostUsd(this.#spentUsd())} of --max-budget-usd-total ${mcp.totalUsd}); restart spelunk mcp with a larger one`;
    }
    return perCall === null ? left : Math.min(perCall, left);
  }

  /**
   * Keeps `entry` and forgets the least recently used idle conversations past MAX_CONVERSATIONS. A busy one is never
   * forgotten (a call is answering in it), so with more busy at once the store holds more, until they are idle.
   */
  #remember(id: string, entry: Entry): void {
    this.#conversations.set(id, entry);
    const over = this.#conversations.size - MAX_CONVERSATIONS;
    if (over <= 0) return;
    const idle = [...this.#conversations].filter(([, e]) => !e.busy).sort((a, b) => a[1].usedAt - b[1].usedAt);
    for (const [key] of idle.slice(0, over)) this.#conversations.delete(key);
  }

  /** An ask or a follow-up: one run on the entry's conversation, served as the answer schema. */
  async #answer(
    id: string,
    entry: Entry,
    question: string,
    maxTurns: number,
    budgetUsd: number | null,
    ctl: CallControl,
  ): Promise<CallOutcome> {
    entry.busy = true;
    entry.usedAt = Date.now();
    const controller = linkedAbort(ctl.signal);
    try {
      // A fresh ledger per call: the budget the loop enforces is this call's, the conversation is shared.
      const ledger = new UsageLedger(this.#spent);
      const open = async (_config: Config, opts: SessionOptions): Promise<Session> => gatedSession({ ...entry.session, ledger }, opts);
      const saved = { id, dir: null, writer: null, notice: null, warning: null };
      const config: Config = { ...this.#config, maxTurns, maxBudgetUsd: budgetUsd };
      const sinks = (): EventSink[] => (ctl.progress ? [ctl.progress] : []);
      const outcome = await runQuestion({ question, open, saved, env: this.#io.env, front: 'mcp' }, config, { sinks }, controller.signal);
      return await this.#answerResult(id, question, outcome);
    } finally {
      entry.busy = false;
      controller.dispose();
    }
  }

  /** The answer schema of a run's outcome: its stop worded for MCP, the proof, usage and checked citations. */
  async #answerResult(id: string, question: string, outcome: RunOutcome): Promise<CallOutcome> {
    const { done, result } = outcome;
    if (done.stop === 'aborted') return { ok: false, message: 'cancelled' };
    // No "before" means no proof either way: null, not the CLI's fail-closed false (the call itself did nothing wrong).
    const unproven = { verified: null, detail: 'the repository state could not be recorded before the call' };
    const readonly = outcome.snapshotError === null ? outcome.readonly : unproven;
    const stopped = done.stop === 'end_turn' ? undefined : stopMessage(done, 'mcp');
    const changed = readonly.verified === false ? `the repository changed during the call: ${readonly.detail ?? ''}` : undefined;
    // Other programs' edits meanwhile (an editor, a build) are information: the answer stands.
    const others = result.concurrent_changes ? concurrentLine(result) : undefined;
    const notes = [stopped, changed, others].filter((n): n is string => n !== undefined);
    if (done.text === '' && done.stop !== 'end_turn') return { ok: false, message: notes.join('; ') || done.stop };
    const { text, truncated, note } = fitAnswer(done.text, 'answer_markdown');
    if (note) notes.push(note);
    this.#log(`${question.slice(0, 60)} → ${done.stop}, ${outcome.requests} requests, ${formatCostUsd(result.cost_known ? result.total_cost_usd : null)}`);
    // The run checked the whole answer's citations; a cut answer is checked as it is served.
    const checked = truncated ? null : outcome.citations;
    const citations = checked !== null ? checked.map(citationRecord) : await citationsOf(text, this.#config.root);
    const structured = {
      answer_markdown: text,
      citations,
      session_id: id,
      truncated,
      stop_reason: done.stop,
      readonly_verified: readonly.verified,
      sandbox: outcome.sandbox,
      notes,
      usage: {
        input: result.usage.input_tokens,
        cache_write: result.usage.cache_creation_input_tokens,
        cache_read: result.usage.cache_read_input_tokens,
        output: result.usage.output_tokens,
        requests: outcome.requests,
        cost_usd: result.cost_known ? result.total_cost_usd : null,
      },
    };
    return { ok: true, structured: fitResult(structured, ANSWER_FIT) };
  }

  /**
   * An audit is the run `spelunk audit --output-format json` makes, in-process: the same RunOutcome, served as its
   * result object (with the stop worded for MCP), the verdict's exit code and the fail_on it was judged by.
   */
  async #audit(question: string, failOn: Severity, spec: string | null, budgetUsd: number | null, ctl: CallControl): Promise<CallOutcome> {
    // `--diff`'s rules (a revision never starts with "-"; git must resolve it): a refusal is the caller's to fix.
    const refusal = (error: unknown): string => {
      if (error instanceof UsageError) return error.message.replace(/--diff /g, 'diff ');
      throw error;
    };
    let diff: DiffSource | null = null;
    try {
      diff = spec === null ? null : parseDiffSpec(spec);
    } catch (error) {
      return { ok: false, message: refusal(error) };
    }
    const audit = {
      failOn,
      sarif: null,
      sarifCategory: null,
      sarifOnError: 'none',
      diff,
      scope: 'line',
      baseline: null,
      updateBaseline: false,
    } as const;
    const config: Config = { ...this.#config, outputFormat: 'json', quiet: true, audit, maxBudgetUsd: budgetUsd };
    const controller = linkedAbort(ctl.signal);
    try {
      const sinks = (): EventSink[] => (ctl.progress ? [ctl.progress] : []);
      // The audit's own session, its ledger under the server's, like an ask's.
      const open = async (c: Config, opts: SessionOptions): Promise<Session> => ({ ...(await openSession(c, opts)), ledger: new UsageLedger(this.#spent) });
      const request = { question, open, env: this.#io.env, front: 'mcp' } as const;
      const ran = await runQuestion(request, config, { sinks }, controller.signal).catch(refusal);
      if (typeof ran === 'string') return { ok: false, message: ran };
      const { result } = ran;
      if (ctl.signal.aborted) return { ok: false, message: 'cancelled' };
      this.#log(`audit ${question.slice(0, 60)} → ${result.audit?.verdict ?? result.subtype}, ${formatCostUsd(result.cost_known ? result.total_cost_usd : null)}`);
      const { text, truncated, note } = fitAnswer(result.result, 'result');
      const warnings = note ? [...result.warnings, note] : result.warnings;
      const served = { ...result, result: text, truncated, warnings, fail_on: failOn, exit_code: ran.exitCode };
      return { ok: true, structured: fitResult(served, AUDIT_FIT) };
    } finally {
      controller.dispose();
    }
  }

  async #locate(question: string, k: number, signal: AbortSignal): Promise<CallOutcome> {
    const found = await locate(this.#config.root, question, { k, timeoutMs: this.#config.toolTimeoutMs, signal, symbols: await this.#symbols(), index: this.#index, historyCache: this.#historyCache });
    const result = await redactLocate(found, this.#config.allowSecrets === true);
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
