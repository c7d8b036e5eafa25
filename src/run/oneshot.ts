import type { AgentEvent } from '../agent/events.js';
import { ABORT_INTERRUPT, ABORT_TIMEOUT } from '../agent/loop.js';
import type { FindingsSink } from '../audit/report.js';
import { sarifCategory, toSarif, toSarifFailure, writeSarif, type SarifLog } from '../output/sarif.js';
import { fileLineReader, findingFingerprints } from '../audit/fingerprint.js';
import { EXIT } from '../exit-codes.js';
import { exitCodeFor, ResultCollector, withError, type ResultObject } from '../output/result.js';
import { snapshotRepoState, verifyReadOnly } from '../sandbox/readonly.js';
import { createStreamJsonRenderer } from '../output/stream-json.js';
import type { Config } from '../config.js';
import type { Io } from '../io.js';
import { askOnce, liveTextRenderer, loadTextView, type EventSink } from './ask.js';
import { askCited } from './cited.js';
import { citationRecord, describeBad, type VerifiedCitation } from '../citations/verify.js';
import type { TextRenderer } from '../output/text.js';
import { DEFAULT_AUDIT_COLUMNS, renderAudit } from '../output/audit.js';
import { OutputPathRefused, removeOutputFile } from '../sandbox/safe-write.js';
import { planReview } from '../audit/review-files.js';
import { reviewOutcome } from './review-outcome.js';
import { shouldUseColor } from '../output/color.js';
import { estimateCostUsd, priceFor } from '../agent/pricing.js';
import { openSession, type Session } from './session.js';
import { linkSaved, saveQuestion, stepSaver } from './resume.js';
import { continueLine } from './session-list.js';
import { UsageError } from '../errors.js';
import { VERSION } from '../version.js';
import { escapeControls } from '../escape.js';
import { diffPreface, loadDiff, type DiffScope } from '../audit/diff.js';
import { applyScope, readBaseline, writeBaseline } from '../audit/scope.js';
import { describeSandbox } from '../sandbox/kernel.js';
import { deepHint } from '../preamble/deep-hint.js';

/** How a run may end that a saved session can go on from (the work so far is in it). */
const CONTINUABLE: ReadonlySet<ResultObject['stop_reason']> = new Set(['api_error', 'max_turns', 'max_tokens', 'max_budget', 'timeout', 'aborted']);

/** Said once, after an audit answer that never called report_findings, while turns remain. */
const REPORT_NUDGE =
  'You have not called report_findings. Call it now with your verdict (pass, fail or inconclusive), a summary, and the findings whose locations you verified.';

/**
 * One question, one answer, one exit code; in json modes exactly one result object (or NDJSON ending in one).
 * `extraSinks` also see every event (the MCP server's progress reports). `open` builds the session (tests wrap it to
 * make a tool fail inside spelunk, which no repository can do on purpose).
 */
// Long on purpose: the one place a run is orchestrated: snapshot, session, loop, proof, result and exit code, in order.
export async function runOnce(
  config: Config,
  question: string,
  io: Io,
  extraSinks: readonly EventSink[] = [],
  open: typeof openSession = openSession,
): Promise<number> {
  if (config.maxBudgetUsd !== null && priceFor(config.model) === null) {
    throw new UsageError(`--max-budget-usd needs a known price, and ${config.model} has none; pick a listed model or drop the flag`);
  }
  const started = Date.now();
  // The change and the baseline are read before anything else: a bad revision or file is a usage error (exit 2).
  const change = config.audit?.diff ? await loadDiff(config.audit.diff, config.root) : null;
  const baseline = config.audit?.baseline ? await readBaseline(config.audit.baseline, config.root, config.audit.updateBaseline) : null;
  const sink: FindingsSink | null = config.audit ? { report: null, warnings: [] } : null;
  // The read-only snapshot (the start time and HEAD: a few ms) must exist before any tool runs; it starts once the
  // session is open so its git calls do not compete with the preamble's walk, and the tools wait for it.
  let sessionOpen!: () => void;
  const snapshot = new Promise<void>((resolve) => (sessionOpen = resolve)).then(() => snapshotRepoState(config.root));
  snapshot.catch(() => {}); // awaited below, where a failure is reported
  // The markdown renderer (a separate chunk) loads only for a terminal, beside the session and the first request.
  const view = loadTextView(config, io);
  const session = await open(config, { audit: sink, toolsReady: snapshot, deep: deepHint(config.root, io.env) });
  // Before the snapshot starts: an unknown --resume id is a usage error, and nothing has run yet.
  const saved = await linkSaved(config, io.env, session);
  const sessionId = saved.id;
  // After the usage checks, before the snapshot and the first request: a run killed from here on leaves no stale file.
  const staleRemoved = config.audit?.sarif ? await removeStaleSarif(config.audit.sarif, config.root) : false;
  const review = config.audit?.reviewOutput ? await planReview(config.audit.reviewOutput, config.audit.previousReview ?? null, config.root) : null;
  sessionOpen();
  const color = shouldUseColor(io.stderr, io.env, config.color);
  const early = [...session.warnings, ...(saved.notice ? [saved.notice] : []), ...(saved.warning ? [saved.warning] : []), ...(review?.warning ? [review.warning] : [])];
  if (!config.quiet) for (const warning of early) io.stderr.write(`warning: ${warning}\n`);
  const snapshotWarning = snapshot.then(
    (before) => {
      if (before.warning && !config.quiet) io.stderr.write(`warning: ${before.warning}\n`);
      return before.warning;
    },
    () => null,
  );
  const noteRead = (abs: string): void => void snapshot.then((before) => before.noteRead(abs), () => {});
  const collector = new ResultCollector({ costOf: estimateCostUsd });
  const infra = infrastructureCounter();
  const text = config.outputFormat === 'text' ? liveTextRenderer(config, io, session, color, { view }) : null;
  const sinks: EventSink[] = [collector, infra, ...(text ? [text] : outputSinks(config, io, session, sessionId, color)), stepSaver(saved, session, config, question), ...extraSinks];
  const stream = sinks.find((s): s is EventSink & { result(obj: ResultObject): void } => 'result' in s);

  const controller = new AbortController();
  const onInterrupt = (): void => controller.abort(ABORT_INTERRUPT);
  io.signals.on('SIGINT', onInterrupt);
  io.signals.on('SIGTERM', onInterrupt);
  const timer = config.timeoutMs === null ? null : setTimeout(() => controller.abort(ABORT_TIMEOUT), config.timeoutMs);
  let failure: string | undefined;
  let citations: VerifiedCitation[] | null = null;
  try {
    // The change goes in the first user message, after the cached preamble (tools and system stay byte-stable).
    const first = change && config.audit ? `${diffPreface(change, config.audit.scope)}\n\n${question}` : question;
    const cited = await askCited(first, session, config, sinks, controller.signal, { onRead: noteRead, ...fixNotices(text, config) });
    citations = cited.citations;
    if (text) {
      await text.settled();
      text.finishAnswer(citations);
    }
    let done = cited.done;
    if (sink && sink.report === null && done.stop === 'end_turn' && cited.turns < config.maxTurns) {
      done = await askOnce(REPORT_NUDGE, session, config, sinks, controller.signal, noteRead, cited.turns);
    }
  } catch (error) {
    failure = `internal error: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    if (timer) clearTimeout(timer);
    io.signals.off('SIGINT', onInterrupt);
    io.signals.off('SIGTERM', onInterrupt);
  }

  const saveWarning = await saveQuestion(saved, session, config, question, collector.costUsd);
  if (saveWarning && config.outputFormat === 'text') io.stderr.write(`warning: ${saveWarning}\n`);
  // Fail closed: without a "before" there is no proof, and the result says why instead of the run crashing.
  const before = await snapshot.catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
  const readonly =
    typeof before === 'string'
      ? { verified: false, detail: `the repository state could not be recorded before the tools ran (${before})` }
      : await verifyReadOnly(before);
  const beforeWarning = await snapshotWarning;
  // Text mode shows bad citations in the Sources block; the json modes get one warning each.
  const citationWarnings = text ? [] : (citations ?? []).filter((c) => c.status !== 'ok').map((c) => `citation ${describeBad(c)}`);
  for (const message of citationWarnings) stream?.handle({ type: 'warning', message });
  const warnings = [...early, ...(beforeWarning ? [beforeWarning] : []), ...(saveWarning ? [saveWarning] : []), ...(sink?.warnings ?? []), ...citationWarnings];
  if (infra.count > 0) {
    failure ??= `${infra.count} tool call(s) failed inside spelunk (a program could not run), so the answer may be incomplete`;
  }
  let result = collector.toResult({
    stop: 'api_error',
    model: config.model,
    durationMs: Date.now() - started,
    sessionId,
    root: config.root,
    gitCommit: typeof before === 'string' ? null : before.head,
    readonly,
    warnings,
    ...(sink ? { audit: { report: sink.report } } : {}),
    citations: citations?.map(citationRecord) ?? null,
    ...(failure ? { error: failure } : {}),
  });
  result = await scopedOutcome(config, result, change, baseline);
  if (config.audit?.sarif) result = await sarifOutcome(config.audit.sarif, config, question, io, result, staleRemoved);
  if (review && change) result = await reviewOutcome(review, config, question, io, result, change);
  text?.close();
  await text?.settled();
  writeOutcome(config, io, result, stream, sink?.warnings ?? []);
  // A cut stream or a limit leaves the tool results so far in the saved session: -c picks them up, not a new run
  // (a run that failed before any tool ran has nothing to continue from: asking again is the same).
  const workSaved = result.tool_calls.length > 0;
  if (text && saved.writer && workSaved && !config.quiet && CONTINUABLE.has(result.stop_reason)) io.stderr.write(`${continueLine(config.root, io.cwd, saved.id)}\n`);
  return exitCodeFor(result, config.audit?.failOn);
}

/**
 * Fails closed: a SARIF file is written (atomically) only for a verdict, exit 0 or 4. Any other end (an API failure, a
 * limit, an interruption, an inconclusive audit, a failed read-only check) leaves no file at that path — one an
 * earlier run left there was removed before the first request, because a code-scanning upload of it — or of an empty
 * result — would read as a clean scan; with --sarif-on-error=notification a log that reports the failure is written
 * instead. Writing happens after the read-only check, so it never counts as a change to the repository.
 */
async function sarifOutcome(file: string, config: Config, question: string, io: Io, result: ResultObject, staleRemoved: boolean): Promise<ResultObject> {
  const exit = exitCodeFor(result, config.audit?.failOn);
  const common = { root: config.root, toolVersion: VERSION, automationId: sarifCategory(question, config.audit?.sarifCategory ?? null) };
  const verdict = (exit === EXIT.ok || exit === EXIT.auditFailed) && result.audit !== undefined;
  // An inconclusive audit ends as a "success" run; name it by what went wrong for the reader of the file.
  const reason = exit === EXIT.auditInconclusive ? 'inconclusive' : result.subtype;
  if (!verdict && config.audit?.sarifOnError !== 'notification') {
    const stale = staleRemoved ? '; a stale file there was removed' : '';
    io.stderr.write(`spelunk: no SARIF written to ${file}: the audit reached no verdict (${reason})${stale}\n`);
    return result;
  }
  const summary = result.audit?.summary ? `: ${result.audit.summary}` : '';
  const message = result.error?.message ?? `the audit reached no verdict (${reason})${summary}`;
  const log: SarifLog = verdict
    ? toSarif({ ...common, question, report: result.audit!, readLines: fileLineReader(config.root) })
    : toSarifFailure({ ...common, reason, message });
  try {
    await writeSarif(file, log, config.root);
    if (!verdict) io.stderr.write(`spelunk: the audit reached no verdict (${reason}); ${file} reports the failure (executionSuccessful: false)\n`);
    return result;
  } catch (error) {
    return withError(result, `could not write --sarif ${file}: ${(error as Error).message}`);
  }
}

/**
 * Removes a file an earlier run left at the --sarif path, before the first request, so a run that crashes or is killed
 * never leaves a SARIF that is not its own; true when there was one. A file that cannot be removed (a directory, no
 * permission) is a usage error: the run could not keep the path honest, so it does not start.
 */
async function removeStaleSarif(file: string, root: string): Promise<boolean> {
  try {
    return await removeOutputFile(file, root);
  } catch (error) {
    if (error instanceof OutputPathRefused && error.code === undefined) throw new UsageError(`--sarif ${file}: ${error.message}`);
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`--sarif ${file}: cannot remove what is there before the audit (${code ?? (error as Error).message}); remove it or pick another path`);
  }
}

/**
 * Classifies each finding against the change and the operator's baseline (kept, marked, counted: never dropped);
 * with --update-baseline, writes this run's findings as the new baseline and treats them as accepted.
 */
async function scopedOutcome(config: Config, result: ResultObject, change: DiffScope | null, baseline: Set<string> | null): Promise<ResultObject> {
  const audit = config.audit;
  if (!result.audit || !audit || (change === null && baseline === null)) return result;
  const readLines = fileLineReader(config.root);
  const accepted = audit.updateBaseline ? new Set(findingFingerprints(result.audit.findings, readLines)) : baseline;
  const report = applyScope(result.audit, { ...(change ? { files: change.files, scope: audit.scope } : {}), ...(accepted ? { baseline: accepted } : {}), readLines });
  if (!audit.updateBaseline || audit.baseline === null || result.stop_reason !== 'end_turn') return { ...result, audit: report };
  try {
    await writeBaseline(audit.baseline, report, readLines, config.root);
    return { ...result, audit: report };
  } catch (error) {
    return withError({ ...result, audit: report }, `could not write --baseline ${audit.baseline}: ${(error as Error).message}`);
  }
}

/** What the text view says about the `fix` turn, on stderr. */
function fixNotices(text: TextRenderer | null, config: Config): { onFixing?: (bad: readonly VerifiedCitation[]) => void; onNoRoom?: () => void } {
  if (!text) return {};
  return {
    onFixing: (bad) => text.note(`${bad.length} citation(s) did not check out; asking the model for a corrected answer (--verify-citations fix)`),
    onNoRoom: () => text.note(`no turn left for --verify-citations fix (--max-turns ${config.maxTurns}); the citations are reported as they are`),
  };
}

/**
 * The live consumers of the json formats: the text view for stderr only (progress; it also keeps the session ledger
 * that --max-budget-usd reads), plus stream-json's stdout renderer.
 */
function outputSinks(config: Config, io: Io, session: Session, sessionId: string, color: boolean): EventSink[] {
  const progress = liveTextRenderer(config, io, session, color, { activityOnly: true });
  if (config.outputFormat === 'json') return [progress];
  if (config.outputFormat === 'stream-json') {
    const renderer = createStreamJsonRenderer(io.stdout, {
      model: config.model,
      cwd: config.root,
      tools: session.registry.names(),
      spelunkVersion: VERSION,
      sessionId,
      instructionFiles: session.instructionFiles,
      costOf: estimateCostUsd,
    });
    renderer.start();
    return [progress, renderer];
  }
  return [progress];
}

/** Counts tool calls that failed inside spelunk: such a run must not exit 0 (issue: honest exit codes). */
function infrastructureCounter(): EventSink & { count: number } {
  const counter = {
    count: 0,
    handle(event: AgentEvent) {
      if (event.type === 'tool_end' && event.outcome.infrastructure) counter.count++;
    },
  };
  return counter;
}

/**
 * Every format shows on stderr the warnings the loop did not already show (dropped findings), unless --quiet; text
 * mode prints the audit table on stdout, the json modes their result object.
 */
function writeOutcome(config: Config, io: Io, result: ResultObject, stream: { result(obj: ResultObject): void } | undefined, extraWarnings: string[]): void {
  if (!config.quiet) for (const warning of extraWarnings) io.stderr.write(`warning: ${escapeControls(warning)}\n`);
  if (config.outputFormat === 'json') {
    io.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  if (stream) {
    stream.result(result);
    return;
  }
  // A terminal's width lays the findings out; a pipe gets them unwrapped (see renderAudit).
  const auditWidth = io.stdout.isTTY === true ? io.stdout.columns || DEFAULT_AUDIT_COLUMNS : null;
  if (result.audit) io.stdout.write(renderAudit(result.audit, { color: shouldUseColor(io.stdout, io.env, config.color), width: auditWidth }));
  if (result.readonly_verified === false) io.stderr.write(`spelunk: the repository changed during the run (${result.error?.message ?? ''}; sandbox: ${result.sandbox})\n`);
  else if (result.readonly_verified === true && config.verbose && !config.quiet) io.stderr.write(`read-only: repository unchanged · sandbox: ${describeSandbox(result.sandbox)}\n`);
  else if (result.error && result.stop_reason === 'end_turn') io.stderr.write(`spelunk: ${result.error.message}\n`);
}
