import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import type { AgentEvent } from '../agent/events.js';
import { ABORT_INTERRUPT, ABORT_TIMEOUT } from '../agent/loop.js';
import type { FindingsSink } from '../tools/report-findings.js';
import { fileLineReader, toSarif, writeSarif } from '../output/sarif.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { ResultCollector, type ResultObject } from '../output/result.js';
import { snapshotRepoState, verifyReadOnly } from '../sandbox/readonly.js';
import { createStreamJsonRenderer } from '../output/stream-json.js';
import type { Config } from '../config.js';
import type { Io } from '../io.js';
import { askOnce, liveTextRenderer, loadTextView, type EventSink } from './ask.js';
import { askCited } from './cited.js';
import { citationRecord, describeBad, type VerifiedCitation } from '../citations/verify.js';
import type { TextRenderer } from '../output/text.js';
import { renderAudit } from '../output/audit.js';
import { shouldUseColor } from '../output/color.js';
import { estimateCostUsd, priceFor } from '../agent/pricing.js';
import { openSession, type Session } from './session.js';
import { UsageError } from '../errors.js';
import { VERSION } from '../version.js';

/** Said once, after an audit answer that never called report_findings, while turns remain. */
const REPORT_NUDGE =
  'You have not called report_findings. Call it now with your verdict (pass, fail or inconclusive), a summary, and the findings whose locations you verified.';

/** One question, one answer, one exit code; in json modes exactly one result object (or NDJSON ending in one). */
// Long on purpose: the one place a run is orchestrated: snapshot, session, loop, proof, result and exit code, in order.
export async function runOnce(config: Config, question: string, io: Io): Promise<number> {
  if (config.maxBudgetUsd !== null && priceFor(config.model) === null) {
    throw new UsageError(`--max-budget-usd needs a known price, and ${config.model} has none; pick a listed model or drop the flag`);
  }
  const started = Date.now();
  const sessionId = randomUUID();
  const sink: FindingsSink | null = config.audit ? { report: null, warnings: [] } : null;
  // The read-only snapshot (the start time and HEAD: a few ms) must exist before any tool runs; it starts once the
  // session is open so its git calls do not compete with the preamble's walk, and the tools wait for it.
  let sessionOpen!: () => void;
  const snapshot = new Promise<void>((resolve) => (sessionOpen = resolve)).then(() => snapshotRepoState(config.root));
  snapshot.catch(() => {}); // awaited below, where a failure is reported
  // The markdown renderer (a separate chunk) loads only for a terminal, beside the session and the first request.
  const view = loadTextView(config, io);
  const session = await openSession(config, { audit: sink, toolsReady: snapshot });
  sessionOpen();
  const color = shouldUseColor(io.stderr, io.env, config.color);
  const early = [...session.warnings];
  if (config.outputFormat === 'text') for (const warning of early) io.stderr.write(`warning: ${warning}\n`);
  const snapshotWarning = snapshot.then(
    (before) => {
      if (before.warning && config.outputFormat === 'text') io.stderr.write(`warning: ${before.warning}\n`);
      return before.warning;
    },
    () => null,
  );
  const noteRead = (abs: string): void => void snapshot.then((before) => before.noteRead(abs), () => {});
  const collector = new ResultCollector({ costOf: estimateCostUsd });
  const infra = infrastructureCounter();
  const text = config.outputFormat === 'text' ? liveTextRenderer(config, io, session, color, view) : null;
  const sinks: EventSink[] = [collector, infra, ...(text ? [text] : outputSinks(config, io, session, sessionId))];
  const stream = sinks.find((s): s is EventSink & { result(obj: ResultObject): void } => 'result' in s);

  const controller = new AbortController();
  const onInterrupt = (): void => controller.abort(ABORT_INTERRUPT);
  io.signals.on('SIGINT', onInterrupt);
  io.signals.on('SIGTERM', onInterrupt);
  const timer = config.timeoutMs === null ? null : setTimeout(() => controller.abort(ABORT_TIMEOUT), config.timeoutMs);
  let failure: string | undefined;
  let citations: VerifiedCitation[] | null = null;
  try {
    const cited = await askCited(question, session, config, sinks, controller.signal, { onRead: noteRead, ...fixNotices(text, config) });
    citations = cited.citations;
    if (text) {
      await text.settled();
      text.finishAnswer(citations);
    }
    let done = cited.done;
    const remaining = config.maxTurns - cited.turns;
    if (sink && sink.report === null && done.stop === 'end_turn' && remaining > 0) {
      done = await askOnce(REPORT_NUDGE, session, { ...config, maxTurns: remaining }, sinks, controller.signal, noteRead);
    }
  } catch (error) {
    failure = `internal error: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    if (timer) clearTimeout(timer);
    io.signals.off('SIGINT', onInterrupt);
    io.signals.off('SIGTERM', onInterrupt);
  }

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
  const warnings = [...early, ...(beforeWarning ? [beforeWarning] : []), ...(sink?.warnings ?? []), ...citationWarnings];
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
  if (config.audit?.sarif) result = await sarifOutcome(config.audit.sarif, config, io, result);
  text?.close();
  await text?.settled();
  writeOutcome(config, io, result, stream, sink?.warnings ?? []);
  return exitCodeFor(result, config.audit?.failOn);
}

/**
 * Fails closed: a SARIF file is written (atomically) only for a verdict, exit 0 or 4. Any other end (an API failure, a
 * limit, an interruption, an inconclusive audit, a failed read-only check) removes a file left at that path by an
 * earlier run, because a code-scanning upload of it — or of an empty result — would read as a clean scan. Both
 * happen after the read-only check, so they never count as a change to the repository.
 */
async function sarifOutcome(file: string, config: Config, io: Io, result: ResultObject): Promise<ResultObject> {
  const exit = exitCodeFor(result, config.audit?.failOn);
  if ((exit !== EXIT.ok && exit !== EXIT.auditFailed) || !result.audit) {
    await fs.rm(file, { force: true }).catch(() => undefined);
    io.stderr.write(`spelunk: no SARIF written to ${file}: the audit reached no verdict (${result.subtype}); a stale file there was removed\n`);
    return result;
  }
  try {
    await writeSarif(file, toSarif({ report: result.audit, root: config.root, toolVersion: VERSION, readLines: fileLineReader(config.root) }));
    return result;
  } catch (error) {
    return { ...result, subtype: 'error_during_execution', is_error: true, error: { message: `could not write --sarif ${file}: ${(error as Error).message}` } };
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

/** The live consumers of the json formats: stream-json, or nothing (json prints at the end). */
function outputSinks(config: Config, io: Io, session: Session, sessionId: string): EventSink[] {
  if (config.outputFormat === 'json') return [ledgerSink(session)];
  if (config.outputFormat === 'stream-json') {
    const renderer = createStreamJsonRenderer(io.stdout, {
      model: config.model,
      cwd: config.root,
      tools: session.registry.names(),
      spelunkVersion: VERSION,
      sessionId,
      costOf: estimateCostUsd,
    });
    renderer.start();
    return [ledgerSink(session), renderer];
  }
  return [ledgerSink(session)];
}

/** Keeps the session ledger (used by --max-budget-usd) current when no text renderer does. */
function ledgerSink(session: Session): EventSink {
  return {
    handle(event) {
      if (event.type === 'usage') session.ledger.add({ turn: event.turn, model: event.model, usage: event.usage, durationMs: event.durationMs });
    },
  };
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

/** Text mode prints the audit table on stdout and the warnings the loop did not already show on stderr. */
function writeOutcome(config: Config, io: Io, result: ResultObject, stream: { result(obj: ResultObject): void } | undefined, extraWarnings: string[]): void {
  if (config.outputFormat === 'json') {
    io.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  if (stream) {
    stream.result(result);
    return;
  }
  if (result.audit) io.stdout.write(renderAudit(result.audit, { color: shouldUseColor(io.stdout, io.env, config.color) }));
  for (const warning of extraWarnings) io.stderr.write(`warning: ${warning}\n`);
  if (result.readonly_verified === false) io.stderr.write(`spelunk: the repository changed during the run (${result.error?.message ?? ''})\n`);
  else if (result.error && result.stop_reason === 'end_turn') io.stderr.write(`spelunk: ${result.error.message}\n`);
}
