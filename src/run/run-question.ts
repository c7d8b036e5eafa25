import type { AgentEvent } from '../agent/events.js';
import { ABORT_TIMEOUT } from '../agent/loop.js';
import type { AuditReport, FindingsSink } from '../audit/report.js';
import { diffPreface, loadDiff, type DiffScope } from '../audit/diff.js';
import { readBaseline } from '../audit/scope.js';
import { addSecretFindings, redactChange } from './secret-findings.js';
import { citationRecord, describeBad, type VerifiedCitation } from '../citations/verify.js';
import type { Config } from '../config.js';
import type { FrontEnd } from '../exit-codes.js';
import type { Io } from '../io.js';
import { ResultCollector, exitCodeFor, type ResultObject } from '../output/result.js';
import type { ExitCode } from '../exit-codes.js';
import { movedEvidence, prepareAuditFiles, scopedOutcome, writeAuditFiles, type AuditFiles } from './audit-files.js';
import { snapshotRepoState, verifyReadOnly, type ProofOptions, type RepoState } from '../sandbox/readonly.js';
import type { SandboxKind } from '../sandbox/kernel.js';
import path from 'node:path';
import { askOnce, type EventSink } from './ask.js';
import { askCited, type CitationPhase } from './cited.js';
import { attribute, gitIgnored, toolWindows, type Attribution } from './concurrent.js';
import { linkSaved, saveQuestion, stepSaver, type SavedLink } from './resume.js';
import type { Session, SessionOptions } from './session.js';
import { lazySymbols } from '../symbols/layer.js';

/** Said once, after an audit answer that never called report_findings, while turns remain. */
const REPORT_NUDGE =
  'You have not called report_findings. Call it now with your verdict (pass, fail or inconclusive), a summary, and the findings whose locations you verified.';

type Done = Extract<AgentEvent, { type: 'done' }>;

/** What one question needs besides the config: the question, and where its session and saved record come from. */
export interface RunRequest {
  question: string;
  /**
   * Opens the session; `opts.toolsReady` is the read-only snapshot, which starts once the session is open (so its
   * git calls do not compete with the preamble's walk) and which every tool call waits for. The REPL and the MCP
   * server hand back the conversation they keep, gated on it.
   */
  open(config: Config, opts: SessionOptions): Promise<Session>;
  /** The saved-session link to append to (the REPL keeps one across questions); absent: linked here (-c, --resume). */
  saved?: SavedLink;
  /** The environment the saved sessions' directory is found from. */
  env: Io['env'];
  /** Whose words the result object's stop message uses: the CLI's flags or MCP's parameters. */
  front: FrontEnd;
}

/**
 * What the run tells its front end besides the loop's events, by name, in whatever order the run reaches them: a
 * warning as it arises (the session's, the saved session's, the previous review's, the snapshot's), the answer in
 * with its citations checked (null: not checked), and the citation fix turn starting or finding no turn left.
 */
export type RunPhase = { type: 'warning'; message: string } | { type: 'answered'; citations: VerifiedCitation[] | null } | CitationPhase;

/** How a front end watches a run; both are optional, neither decides anything about the run. */
export interface RunHooks {
  /**
   * Live consumers of the loop's events (the text view, stream-json, MCP progress). A factory, not a list, because
   * they are made from the session, which the run itself opens (the REPL's and MCP's are handed back to it).
   */
  sinks?(session: Session, sessionId: string): EventSink[];
  /**
   * Each named phase, awaited before the run goes on: the text view finishes drawing the answer (its Sources block)
   * before an audit's reminder turn or a citation fix turn prints anything.
   */
  phase?(phase: RunPhase): void | Promise<void>;
}

/** Everything a run produced, as data: each front end renders or serialises this and nothing else. */
export interface RunOutcome {
  /** How the question ended, as data (stop, limit, value): each front end words it (exit-codes.ts `stopMessage`). */
  done: Done;
  /** The answer's citations, checked against the repository (null: not checked, or no answer to check). */
  citations: VerifiedCitation[] | null;
  /**
   * The read-only proof: true spelunk changed nothing (`how` says how that was proven), false a change that could be
   * spelunk's or no proof, null never checked; `concurrent` lists what other programs changed meanwhile.
   */
  readonly: Attribution;
  /** Why the "before" state could not be recorded (then `readonly` fails closed), or null. */
  snapshotError: string | null;
  /** Audits: the report as scoped against the change and baseline (null: never filed). */
  audit: AuditReport | null;
  /** Warnings report_findings gave (dropped findings), shown once by the CLI at the end. */
  auditWarnings: string[];
  /**
   * Citations that did not check out, one line each; also in `result.warnings` (the json formats). The text view shows
   * them in its Sources block instead, stream-json as warning events: which is the front end's choice.
   */
  citationWarnings: string[];
  /** One line for each audit file (--sarif, --review-output) not written, or written as a failure report. */
  fileNotes: string[];
  /** The process exit code this outcome calls for (0 answered, 4 audit failed, …): front ends return it, MCP serves it. */
  exitCode: ExitCode;
  /** Why the finished question could not be saved, or null. */
  saveWarning: string | null;
  /** Model requests made (each billed one counts, a cancelled one too). */
  requests: number;
  sandbox: SandboxKind;
  session: Session;
  saved: SavedLink;
  /** The change an audit --diff was scoped to. */
  change: DiffScope | null;
  /** The result object of the json formats and the MCP audit, derived from all of the above, the audit files written. */
  result: ResultObject;
}

/**
 * `session` with its tools gated on this run's snapshot: how the REPL and the MCP server hand runQuestion the session
 * they keep across questions (the gate settles, never rejects: a failed snapshot is the run's to report).
 */
export function gatedSession(session: Session, opts: SessionOptions): Session {
  return { ...session, toolsReady: opts.toolsReady?.then(() => undefined, () => undefined) ?? null };
}

/** A run once its session is open: what the loop asks in, and what the proof and the result need afterwards. */
interface Started {
  session: Session;
  saved: SavedLink;
  change: DiffScope | null;
  baseline: Set<string> | null;
  findings: FindingsSink | null;
  /** The audit's output files, their paths cleared before the snapshot. */
  files: AuditFiles;
  /** The read-only "before" (HEAD and start time), taken once the session is open. */
  snapshot: Promise<RepoState>;
  /** The snapshot's warning once it is in (shown as it arrives), or null. */
  snapshotWarning: Promise<string | null>;
  /** Warnings of the start: the session's, the saved session's, the previous review's. */
  early: string[];
}

/** How the loop part of a run ended: its last `done` (null after an exception), the checked citations, any failure. */
interface Asked {
  done: Done | null;
  citations: VerifiedCitation[] | null;
  failure: string | undefined;
}

/**
 * One question from start to result, in order: the change and baseline (usage errors first), the session, the
 * read-only snapshot, the loop (with the citation check and fix, and an audit's reminder), the save, the proof, the
 * result, the audit's files and the exit code. It prints nothing: the hooks and the returned RunOutcome are all a
 * front end sees, and the outcome is final (no front end derives a result or an exit code from it). `signal` cancels it
 * (an interrupt); config.timeoutMs ends it as a timeout.
 */
export async function runQuestion(request: RunRequest, config: Config, hooks: RunHooks, signal: AbortSignal): Promise<RunOutcome> {
  const started = Date.now();
  const run = await startRun(request, config, hooks);
  // Usage is counted once, here, in the session's ledger: the budget, the result's cost and the MCP server's total read
  // it, and it is fed before any front end's sink, so a front end that renders nothing still has a working budget.
  const ledger = run.session.ledger;
  const collector = new ResultCollector({ ledger, front: request.front });
  const counts = runCounter();
  const windows = toolWindows();
  const live = hooks.sinks?.(run.session, run.saved.id) ?? [];
  const sinks = [ledger, collector, counts, windows, ...live, stepSaver(run.saved, run.session, config, request.question)];
  const asked = await askWithin(request, run, config, sinks, hooks, signal);
  // An audit reports every secret it can see (of the change, with --diff), whether or not the model looked for them.
  if (run.findings) await addSecretFindings(run.findings, config.root, run.change);

  const { before, readonly, saveWarning, beforeWarning } = await proveAndSave(run, config, request.question, collector.costUsd, windows);
  const citationWarnings = (asked.citations ?? []).filter((c) => c.status !== 'ok').map((c) => `citation ${describeBad(c)}`);
  const later = [beforeWarning, saveWarning].filter((w): w is string => w !== null);
  const warnings = [...run.early, ...later, ...(run.findings?.warnings ?? []), ...citationWarnings];
  const broken = `${counts.infrastructure} tool call(s) failed inside spelunk (a program could not run), so the answer may be incomplete`;
  const failure = asked.failure ?? (counts.infrastructure > 0 ? broken : undefined);
  const built = collector.toResult({
    stop: 'api_error',
    model: config.model,
    durationMs: Date.now() - started,
    sessionId: run.saved.id,
    root: config.root,
    gitCommit: typeof before === 'string' ? null : before.head,
    readonly,
    sandbox: run.session.sandbox,
    warnings,
    ...(run.findings ? { audit: { report: movedEvidence(run.findings.report, readonly.readChanged, warnings) } } : {}),
    citations: asked.citations?.map(citationRecord) ?? null,
    ...(failure ? { error: failure } : {}),
  });
  const scoped = await scopedOutcome(config, built, run.change, run.baseline);
  const { result, notes } = await writeAuditFiles(run.files, config, request.question, request.env, scoped, run.change);
  return {
    // After an exception the loop left no `done`: one made from the result.
    done: asked.done ?? { type: 'done', stop: result.stop_reason, text: result.result, turns: result.num_turns, ...(failure ? { error: failure } : {}) },
    citations: asked.citations,
    readonly,
    snapshotError: typeof before === 'string' ? before : null,
    audit: result.audit ?? null,
    auditWarnings: run.findings?.warnings ?? [],
    citationWarnings,
    fileNotes: notes,
    exitCode: exitCodeFor(result, config.audit?.failOn),
    saveWarning,
    requests: counts.requests,
    sandbox: result.sandbox,
    session: run.session,
    saved: run.saved,
    change: run.change,
    result,
  };
}

/**
 * After the loop: the read-only proof (fail closed: without a "before" there is no proof, and the result says why
 * instead of the run crashing), then the save, which records the HEAD the proof just read (no second query).
 */
async function proveAndSave(
  run: Started,
  config: Config,
  question: string,
  costUsd: number | null,
  windows: ReturnType<typeof toolWindows>,
): Promise<{ before: RepoState | string; readonly: Attribution; saveWarning: string | null; beforeWarning: string | null }> {
  const before: RepoState | string = await run.snapshot.catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
  const { head, readonly } = await proveReadOnly(before, config, windows.windows(), run.session.sandbox);
  const saveWarning = await saveQuestion(run.saved, run.session, config, { question, costUsd, head });
  return { before, readonly, saveWarning, beforeWarning: await run.snapshotWarning };
}

/**
 * Everything before the first request: the change and baseline (a bad revision or file is a usage error, exit 2,
 * before anything runs), the session, the saved-session link (an unknown --resume id is a usage error too), the
 * audit files' paths cleared, and then the snapshot. The snapshot (the start time and HEAD: a few ms) starts once the
 * session is open, so its git calls do not compete with the preamble's walk; the tools wait for it.
 */
async function startRun(request: RunRequest, config: Config, hooks: RunHooks): Promise<Started> {
  const change = config.audit?.diff ? await redactChange(await loadDiff(config.audit.diff, config.root), config.allowSecrets === true) : null;
  const baseline = config.audit?.baseline ? await readBaseline(config.audit.baseline, config.root, config.audit.updateBaseline) : null;
  const findings: FindingsSink | null = config.audit ? { report: null, warnings: [] } : null;
  let sessionOpen!: () => void;
  const snapshot = new Promise<void>((resolve) => (sessionOpen = resolve)).then(() => snapshotRepoState(config.root, proofOptions(config)));
  snapshot.catch(() => {}); // awaited at the end, where a failure is reported
  const session = await request.open(config, { audit: findings, toolsReady: snapshot, symbols: lazySymbols(request.env) });
  const saved = request.saved ?? (await linkSaved(config, request.env, session));
  const files = await prepareAuditFiles(config);
  const prepared = files.review?.warning ? [files.review.warning] : [];
  sessionOpen();
  const early = [...session.warnings, ...(saved.notice ? [saved.notice] : []), ...(saved.warning ? [saved.warning] : []), ...prepared];
  for (const message of early) await hooks.phase?.({ type: 'warning', message });
  const snapshotWarning = snapshot.then(
    async (before) => {
      if (before.warning) await hooks.phase?.({ type: 'warning', message: before.warning });
      return before.warning;
    },
    () => null,
  );
  return { session, saved, change, baseline, findings, files, snapshot, snapshotWarning, early };
}

/**
 * The loop part: the question (after an audit's change), its citations checked (and fixed, with `fix`), and an audit
 * that never filed its report reminded once while turns remain. An exception is a failure of the run, not a crash.
 */
async function askWithin(
  { question, front }: RunRequest,
  run: Started,
  config: Config,
  sinks: readonly EventSink[],
  hooks: RunHooks,
  signal: AbortSignal,
): Promise<Asked> {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(signal.reason);
  if (signal.aborted) onAbort();
  signal.addEventListener('abort', onAbort, { once: true });
  const timer = config.timeoutMs === null ? null : setTimeout(() => controller.abort(ABORT_TIMEOUT), config.timeoutMs);
  const noteRead = (abs: string): void => void run.snapshot.then((before) => before.noteRead(abs), () => {});
  const asked: Asked = { done: null, citations: null, failure: undefined };
  try {
    if (nothingToSearch(run.session)) {
      // An empty repository (or one whose every file is ignored) has nothing to search: said without a paid request.
      const text = `There is nothing to search here: ${config.root} has no files (it is empty, or everything in it is ignored). No model request was made.`;
      asked.done = { type: 'done', stop: 'end_turn', text, turns: 0 };
      for (const event of [{ type: 'text', text } as const, asked.done]) for (const sink of sinks) sink.handle(event);
      asked.citations = [];
      await hooks.phase?.({ type: 'answered', citations: [] });
      return asked;
    }
    // The change goes in the first user message, after the cached preamble (tools and system stay byte-stable).
    const first = run.change && config.audit ? `${diffPreface(run.change, config.audit.scope)}\n\n${question}` : question;
    const tell = (phase: CitationPhase): void | Promise<void> => hooks.phase?.(phase);
    const cited = await askCited(first, run.session, config, sinks, controller.signal, { front, onRead: noteRead, tell });
    asked.citations = cited.citations;
    asked.done = cited.done;
    await hooks.phase?.({ type: 'answered', citations: cited.citations });
    if (run.findings && run.findings.report === null && cited.done.stop === 'end_turn' && cited.turns < config.maxTurns) {
      asked.done = await askOnce(REPORT_NUDGE, run.session, config, sinks, controller.signal, { front, onRead: noteRead, turnsBefore: cited.turns });
    }
  } catch (error) {
    asked.failure = `internal error: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    if (timer) clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
  return asked;
}

/** True when the map found no file at all (not when it could not be made): there is nothing a tool could read. */
function nothingToSearch(session: Session): boolean {
  return session.listing.shown === 0 && session.listing.text.startsWith('(no files');
}

/**
 * The read-only proof, attributed (see concurrent.ts): the changes other programs made are information, and only one
 * that a tool call of spelunk could have made (or no proof at all) fails the run.
 */
async function proveReadOnly(
  before: RepoState | string,
  config: Config,
  windows: ReturnType<ReturnType<typeof toolWindows>['windows']>,
  sandbox: SandboxKind,
): Promise<{ head: string | null | undefined; readonly: Attribution }> {
  if (typeof before === 'string') {
    const detail = `the repository state could not be recorded before the tools ran (${before})`;
    return { head: undefined, readonly: { verified: false, detail, how: null, concurrent: null, readChanged: [] } };
  }
  const proof = await verifyReadOnly(before, proofOptions(config));
  const reads = [...before.reads.keys()].map((abs) => path.relative(config.root, abs));
  const readonly = await attribute(proof, { sandbox, windows, coarse: before.coarse, reads, ignored: gitIgnored(config.root) });
  return { head: proof.head, readonly };
}

/** The proof's HEAD budget: the default unless config.headTimeoutMs replaces it (tests, through main's options). */
function proofOptions(config: Config): ProofOptions {
  return config.headTimeoutMs === undefined ? {} : { headTimeoutMs: config.headTimeoutMs };
}

/**
 * Counts billed requests, and tool calls that failed inside spelunk: such a run must not exit 0 (a program that
 * could not run is not an answer).
 */
function runCounter(): EventSink & { requests: number; infrastructure: number } {
  const counter = {
    requests: 0,
    infrastructure: 0,
    handle(event: AgentEvent) {
      if (event.type === 'usage') counter.requests++;
      if (event.type === 'tool_end' && event.outcome.infrastructure) counter.infrastructure++;
    },
  };
  return counter;
}
