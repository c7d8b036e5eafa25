import { randomUUID } from 'node:crypto';
import type { AgentEvent, StopKind, Usage } from '../agent/events.js';
import { verdictExitCode } from '../audit/verdict.js';
import type { AuditReport, Severity } from '../audit/report.js';
import { EXIT, STOPS, stopMessage, type ExitCode, type FrontEnd, type ResultSubtype } from '../exit-codes.js';
import { ModelUsageTotals, modelUsageOf, type ModelUsageRecord } from './model-usage.js';
import type { UsageLedger } from './usage.js';
import type { CitationStatus } from '../citations/verify.js';
import type { SandboxKind } from '../sandbox/kernel.js';

/**
 * Version of the result object and stream events (schema/*.schema.json); bumped only for breaking changes (README
 * "Changelog"). 2: stream-json speaks Claude Code's event shapes (`assistant` and `user` carry API messages). 3: the
 * budget stop is `error_max_budget_usd`, as Claude Code names it.
 */
export const SCHEMA_VERSION = 3;

interface TokenUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

/** One distinct citation of the answer as checked against the repository (issue 9; additive to schema version 1). */
interface CitationRecord {
  path: string;
  start_line: number | null;
  end_line: number | null;
  status: CitationStatus;
  excerpt: string | null;
}

interface ToolCallRecord {
  name: string;
  input: unknown;
  is_error: boolean;
  duration_ms: number;
  /** Characters of the content sent back to the model. */
  output_chars: number;
}

/** A request that read less from the prompt cache than the previous one had cached, and what changed. */
interface CacheMissRecord {
  /** The model request (1-based, within this run) that missed. */
  turn: number;
  /** e.g. `AGENTS.md changed (+214 bytes)`. */
  changed: string;
  tokens: number;
  cost_usd: number | null;
  /** The API's own diagnosis (`diagnostics.cache_miss_reason.type`), when it gave one. */
  api_reason: string | null;
}

/** What other programs changed during a run (the read-only proof's changes that were not spelunk's, run/concurrent.ts). */
export interface ConcurrentChanges {
  /** Changed entries, relative to the root (a directory ends in `/`: entries were created, deleted or renamed in it). */
  paths: string[];
  /** Changed entries beyond those listed. */
  more: number;
  /** Gitignored entries (and git's own files under .git/), by the outermost ignored directory or file. */
  ignored: { path: string; entries: number }[];
}

/** The read-only proof as a run reports it (the part the result object shows). */
interface ReadOnlyOutcome {
  verified: boolean | null;
  detail: string | null;
  /** How "spelunk changed nothing" was proven, in one sentence (null: not proven). */
  how?: string | null;
  /** What other programs changed meanwhile (null: nothing). */
  concurrent?: ConcurrentChanges | null;
}

/** The one JSON object of `--output-format json`, and the last line of `stream-json` (schema/result.schema.json). */
export interface ResultObject {
  type: 'result';
  subtype: ResultSubtype;
  is_error: boolean;
  result: string;
  num_turns: number;
  duration_ms: number;
  duration_api_ms: number;
  session_id: string;
  /** Claude Code always writes a number here: 0 when a price is unknown, and then `cost_known` is false. */
  total_cost_usd: number;
  /** false when a request's model has no known price: total_cost_usd is then 0, not a cost. */
  cost_known: boolean;
  usage: TokenUsage;
  model: string;
  schema_version: number;
  tool_calls: ToolCallRecord[];
  warnings: string[];
  repo: { root: string; git_commit: string | null };
  /** true: spelunk is proven to have changed nothing; null when the check could not run (e.g. interrupted before it). */
  readonly_verified: boolean | null;
  /** How readonly_verified true was proven (null: it was not). */
  readonly_proof: string | null;
  /** What other programs changed in the repository during the run; absent when nothing did. */
  concurrent_changes?: ConcurrentChanges;
  /** Which sandbox the run's programs ran in: `kernel` (bubblewrap) or `tables` (the command tables alone). */
  sandbox: SandboxKind;
  stop_reason: StopKind;
  cache_misses: CacheMissRecord[];
  audit?: AuditReport;
  /** The answer's citations, checked; absent with --verify-citations off or when there was no answer to check. */
  citations?: CitationRecord[];
  /** Per model, as Claude Code reports it; spelunk runs one model per question, so usually one entry. */
  modelUsage: Record<string, ModelUsageRecord>;
  /** Claude Code's refused tool calls; spelunk has no permission prompts (its tools refuse by policy): always empty. */
  permission_denials: never[];
  /** On error results only: each error on its own, as Claude Code's `errors`. */
  errors?: string[];
  /** The same errors joined with "; " (spelunk's shape before `errors`, kept for existing scripts). */
  error?: { message: string };
  /** Unique per line, as on every Claude Code stream-json line. */
  uuid: string;
}

export interface BuildResultInput {
  stop: StopKind;
  /** One-line explanation of a stop other than end_turn (from the loop's done event). */
  stopMessage?: string | null;
  answer: string;
  turns: number;
  durationMs: number;
  durationApiMs: number;
  sessionId: string;
  costUsd: number | null;
  usage: TokenUsage;
  model: string;
  toolCalls: ToolCallRecord[];
  /** Defaults to none (results built outside a run). */
  cacheMisses?: CacheMissRecord[];
  warnings: string[];
  root: string;
  gitCommit: string | null;
  readonly: ReadOnlyOutcome;
  /** The sandbox the programs ran in (the session's). */
  sandbox: SandboxKind;
  /** Audit mode only: the report the model filed, or null when it never called report_findings. */
  audit?: { report: AuditReport | null };
  citations?: CitationRecord[] | null;
  /** A failure outside the loop's own stop kinds (an exception, a SARIF write error). */
  error?: string;
  /** Per-model totals; by default one entry for `model` built from `usage` and `costUsd`. */
  modelUsage?: Record<string, ModelUsageRecord>;
  /** Defaults to a random UUID (tests pass one to compare whole objects). */
  uuid?: string;
}

/** Assembles the result object; pure. */
export function buildResult(input: BuildResultInput): ResultObject {
  const warnings = [...input.warnings];
  const errors: string[] = [];
  if (input.error !== undefined) errors.push(input.error);
  if (input.stop !== 'end_turn') errors.push(input.stopMessage ?? STOPS[input.stop].message);
  if (input.readonly.verified === false) {
    errors.push(`the repository changed during the run: ${input.readonly.detail ?? 'unknown difference'}`);
  }
  const base = STOPS[input.stop].subtype;
  // "success" next to exit 1 would mislead a parser that checks only the subtype.
  const subtype = base === 'success' && errors.length > 0 ? 'error_during_execution' : base;
  const result: ResultObject = {
    type: 'result',
    subtype,
    is_error: subtype !== 'success',
    result: input.answer,
    num_turns: input.turns,
    duration_ms: Math.round(input.durationMs),
    duration_api_ms: Math.round(input.durationApiMs),
    session_id: input.sessionId,
    total_cost_usd: input.costUsd === null ? 0 : roundUsd(input.costUsd),
    cost_known: input.costUsd !== null,
    usage: { ...input.usage },
    model: input.model,
    schema_version: SCHEMA_VERSION,
    tool_calls: input.toolCalls,
    warnings,
    repo: { root: input.root, git_commit: input.gitCommit },
    readonly_verified: input.readonly.verified,
    readonly_proof: input.readonly.how ?? null,
    sandbox: input.sandbox,
    stop_reason: input.stop,
    cache_misses: input.cacheMisses ?? [],
    modelUsage: input.modelUsage ?? defaultModelUsage(input),
    permission_denials: [],
    uuid: input.uuid ?? randomUUID(),
  };
  if (input.audit !== undefined) result.audit = auditOf(input.audit.report, input.stop, warnings);
  if (input.citations) result.citations = input.citations;
  if (input.readonly.concurrent) result.concurrent_changes = input.readonly.concurrent;
  if (errors.length > 0) Object.assign(result, errorFields(errors));
  return result;
}

/**
 * The result with one more error from after the run (a SARIF or baseline write that failed): an error subtype,
 * `errors` gains the message, `error.message` is the join. A limit's subtype stays (it says more than the write).
 */
export function withError(result: ResultObject, message: string): ResultObject {
  const errors = [...(result.errors ?? []), message];
  const subtype = result.subtype === 'success' ? 'error_during_execution' : result.subtype;
  return { ...result, subtype, is_error: true, ...errorFields(errors) };
}

function errorFields(errors: string[]): Pick<ResultObject, 'errors' | 'error'> {
  return { errors, error: { message: errors.join('; ') } };
}

function defaultModelUsage(input: BuildResultInput): Record<string, ModelUsageRecord> {
  const u = input.usage;
  if (u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens + u.output_tokens === 0) return {};
  return { [input.model]: modelUsageOf(u, input.costUsd === null ? null : roundUsd(input.costUsd)) };
}

/**
 * The exit code a result object stands for: a failed read-only check wins (1), then how the run ended, then any
 * error outside the loop (a tool that failed inside spelunk, a SARIF write), then the audit verdict against `failOn`.
 * Derived from the object alone so the printed result and the exit code never disagree.
 */
export function exitCodeFor(result: ResultObject, failOn: Severity = 'high'): ExitCode {
  if (result.readonly_verified === false) return EXIT.failure;
  if (result.stop_reason !== 'end_turn') return STOPS[result.stop_reason].exit;
  if (result.error !== undefined) return EXIT.failure;
  if (result.audit !== undefined) return verdictExitCode(result.audit, failOn);
  return EXIT.ok;
}

/** Micro-dollar precision: enough for any budget, and no 0.30000000000000004 in a CI log. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}

function auditOf(report: AuditReport | null, stop: StopKind, warnings: string[]): AuditReport {
  if (report !== null) return report;
  const reason =
    stop === 'end_turn'
      ? 'the model ended without calling report_findings'
      : `the run ended (${stop}) before the model called report_findings`;
  warnings.push(`audit inconclusive: ${reason}`);
  return { verdict: 'inconclusive', summary: reason, findings: [] };
}

/** What the CLI knows only at the end of a run; the collector supplies the rest. */
type FinishInput = Omit<
  BuildResultInput,
  'stop' | 'stopMessage' | 'answer' | 'turns' | 'durationApiMs' | 'costUsd' | 'usage' | 'toolCalls' | 'cacheMisses' | 'warnings' | 'model'
> & {
  /** Used only when the loop never reported `done` (an exception, an interrupt before the loop wound down). */
  stop: StopKind;
  /** The configured model, used when no request reported one. */
  model: string;
  /** Warnings from outside the loop (config, report_findings), appended after the loop's. */
  warnings?: string[];
};

type DoneEvent = Extract<AgentEvent, { type: 'done' }>;

/** Folds the agent's events into the parts of the result object; feed it every event, then call `toResult`. */
export class ResultCollector {
  readonly #costOf: ((model: string, usage: Usage) => number | null) | undefined;
  readonly #toolCalls: ToolCallRecord[] = [];
  readonly #cacheMisses: CacheMissRecord[] = [];
  readonly #warnings: string[] = [];
  readonly #usage: TokenUsage = { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 };
  #apiMs = 0;
  #turns = 0;
  /** Requests of the questions already done (a follow-up question's turns count on from there). */
  #doneTurns = 0;
  #cost: number | null = 0;
  #model: string | null = null;
  #turnText = '';
  #done: DoneEvent | null = null;
  readonly #models = new ModelUsageTotals();
  readonly #front: FrontEnd;
  /** The run's ledger and its first row: money and per-model totals are read from it rather than counted again. */
  #ledger: { ledger: UsageLedger; from: number } | null = null;

  /**
   * `costOf` prices one request (per request, because some prices depend on the request's prompt size); `front`
   * words the stop in the result (the CLI's flags by default, MCP's parameters for its audit).
   */
  constructor(opts: { costOf?: (model: string, usage: Usage) => number | null; ledger?: UsageLedger; front?: FrontEnd } = {}) {
    this.#costOf = opts.costOf;
    this.#front = opts.front ?? 'cli';
    if (opts.ledger) this.#ledger = { ledger: opts.ledger, from: opts.ledger.rows().length };
    if (this.#costOf === undefined && !opts.ledger) this.#cost = null;
  }

  handle(event: AgentEvent): void {
    switch (event.type) {
      case 'request_start':
        this.#turns = Math.max(this.#turns, this.#doneTurns + event.turn);
        this.#turnText = '';
        return;
      case 'text':
        this.#turnText += event.text;
        return;
      case 'tool_end':
        this.#toolCalls.push({
          name: event.name,
          input: event.input,
          is_error: event.outcome.isError,
          duration_ms: Math.round(event.durationMs),
          output_chars: event.outcome.content.length,
        });
        return;
      case 'usage':
        this.#addUsage(event);
        return;
      case 'cache_miss':
        this.#cacheMisses.push({
          turn: event.turn,
          changed: event.miss.changed,
          tokens: event.miss.tokens,
          cost_usd: event.miss.costUsd === null ? null : roundUsd(event.miss.costUsd),
          api_reason: event.miss.apiReason,
        });
        return;
      case 'warning':
      case 'retry':
        this.#warnings.push(event.message);
        return;
      case 'done':
        this.#done = event;
        this.#doneTurns += event.turns;
        this.#turns = Math.max(this.#turns, this.#doneTurns);
        return;
      // The other events (first_token, tool_start, …) carry nothing the result object reports.
    }
  }

  /** Estimated cost so far (null when unknown); the CLI may show it live. */
  get costUsd(): number | null {
    return this.#ledger ? this.#ledger.ledger.summarySince(this.#ledger.from).costUsd : this.#cost;
  }

  toResult(input: FinishInput): ResultObject {
    const done = this.#done;
    return buildResult({
      ...input,
      stop: done?.stop ?? input.stop,
      stopMessage: done ? (stopMessage(done, this.#front) ?? null) : null,
      answer: done?.text ?? this.#turnText,
      turns: this.#turns,
      durationApiMs: this.#apiMs,
      costUsd: this.costUsd,
      usage: this.#usage,
      toolCalls: [...this.#toolCalls],
      cacheMisses: [...this.#cacheMisses],
      warnings: [...this.#warnings, ...(input.warnings ?? [])],
      model: this.#model ?? input.model,
      modelUsage: this.#modelTotals().records(roundUsd),
    });
  }

  /** Per-model totals: from the ledger's rows of this run when there is one, else as counted here. */
  #modelTotals(): ModelUsageTotals {
    if (!this.#ledger) return this.#models;
    const totals = new ModelUsageTotals();
    for (const { row, costUsd } of this.#ledger.ledger.pricedSince(this.#ledger.from)) totals.add(row.model, row.usage, costUsd);
    return totals;
  }

  #addUsage(event: Extract<AgentEvent, { type: 'usage' }>): void {
    this.#usage.input_tokens += event.usage.input_tokens;
    this.#usage.cache_creation_input_tokens += event.usage.cache_creation_input_tokens;
    this.#usage.cache_read_input_tokens += event.usage.cache_read_input_tokens;
    this.#usage.output_tokens += event.usage.output_tokens;
    this.#apiMs += event.durationMs;
    this.#turns = Math.max(this.#turns, this.#doneTurns + event.turn);
    this.#model = event.model;
    const cost = this.#costOf?.(event.model, event.usage) ?? null;
    this.#cost = this.#cost === null || cost === null ? null : this.#cost + cost;
    this.#models.add(event.model, event.usage, cost);
  }
}
