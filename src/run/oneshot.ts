import { ABORT_INTERRUPT } from '../agent/loop.js';
import type { ResultObject } from '../output/result.js';
import { createStreamJsonRenderer } from '../output/stream-json.js';
import type { Config } from '../config.js';
import type { Io } from '../io.js';
import type { EventSink } from './ask.js';
import type { TextRenderer } from '../output/text.js';
import { DEFAULT_AUDIT_COLUMNS, renderAudit } from '../output/audit.js';
import { shouldUseColor } from '../output/color.js';
import { estimateCostUsd, priceFor } from '../agent/pricing.js';
import { openSession, type Session } from './session.js';
import { continueLine } from './session-list.js';
import { UsageError } from '../errors.js';
import { VERSION } from '../version.js';
import { escapeControls } from '../escape.js';
import { describeSandbox } from '../sandbox/kernel.js';
import { runQuestion, type RunHooks } from './run-question.js';
import { CLI_FIX_WORDS, liveTextRenderer, loadTextView, showPhase } from './text-view.js';
import { concurrentLine } from './concurrent.js';
import { deepHint } from '../preamble/deep-hint.js';

/** How a run may end that a saved session can go on from (the work so far is in it). */
const CONTINUABLE: ReadonlySet<ResultObject['stop_reason']> = new Set([
  'api_error',
  'max_turns',
  'max_tokens',
  'max_budget',
  'timeout',
  'aborted',
]);

/**
 * One question, one answer, one exit code; in json modes exactly one result object (or NDJSON ending in one). The
 * run itself is runQuestion's (the audit's files and the exit code included); this front end makes its live views
 * and prints the outcome. `open` builds the session (tests wrap it to make a tool fail inside spelunk,
 * which no repository can do on purpose).
 */
export async function runOnce(config: Config, question: string, io: Io, open: typeof openSession = openSession): Promise<number> {
  if (config.maxBudgetUsd !== null && priceFor(config.model) === null) {
    throw new UsageError(`--max-budget-usd needs a known price, and ${config.model} has none; pick a listed model or drop the flag`);
  }
  // The markdown renderer (a separate chunk) loads only for a terminal, beside the session and the first request.
  const view = loadTextView(config, io);
  const color = shouldUseColor(io.stderr, io.env, config.color);
  const live: { text: TextRenderer | null; stream: StreamSink | undefined } = { text: null, stream: undefined };
  const hooks: RunHooks = {
    sinks(session, sessionId) {
      live.text = config.outputFormat === 'text' ? liveTextRenderer(config, io, session, color, { view }) : null;
      const sinks = live.text ? [live.text] : outputSinks(config, io, session, sessionId, color);
      live.stream = sinks.find((s): s is StreamSink => 'result' in s);
      return sinks;
    },
    async phase(phase) {
      if (phase.type === 'warning' && !config.quiet) io.stderr.write(`warning: ${phase.message}\n`);
      if (live.text) await showPhase(live.text, phase, CLI_FIX_WORDS(config.maxTurns));
    },
  };
  const controller = new AbortController();
  const onInterrupt = (): void => controller.abort(ABORT_INTERRUPT);
  io.signals.on('SIGINT', onInterrupt);
  io.signals.on('SIGTERM', onInterrupt);
  // The map's deeper walk may start from the directories it opened last time for this root (a guess, never its output).
  const openWithHint: typeof openSession = (c, opts) => open(c, { ...opts, deep: deepHint(config.root, io.env) });
  const request = { question, open: openWithHint, env: io.env, front: 'cli' as const };
  const outcome = await runQuestion(request, config, hooks, controller.signal).finally(() => {
    io.signals.off('SIGINT', onInterrupt);
    io.signals.off('SIGTERM', onInterrupt);
  });
  if (outcome.saveWarning && config.outputFormat === 'text') io.stderr.write(`warning: ${outcome.saveWarning}\n`);
  for (const message of outcome.citationWarnings) live.stream?.handle({ type: 'warning', message });
  for (const note of outcome.fileNotes) io.stderr.write(`spelunk: ${note}\n`);
  const { result } = outcome;
  live.text?.close();
  await live.text?.settled();
  writeOutcome(config, io, result, live.stream, outcome.auditWarnings);
  // A cut stream or a limit leaves the tool results so far in the saved session: -c picks them up, not a new run
  // (a run that failed before any tool ran has nothing to continue from: asking again is the same).
  const { saved } = outcome;
  const workSaved = result.tool_calls.length > 0;
  if (live.text && saved.writer && workSaved && !config.quiet && CONTINUABLE.has(result.stop_reason)) {
    io.stderr.write(`${continueLine(config.root, io.cwd, saved.id)}\n`);
  }
  return outcome.exitCode;
}

/** The stream-json renderer: a sink that also writes the final result object. */
type StreamSink = EventSink & { result(obj: ResultObject): void };

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
      apiKeySource: config.provider === undefined && config.credential !== 'authToken' ? 'ANTHROPIC_API_KEY' : 'none',
      sandbox: session.sandbox,
      sessionId,
      instructionFiles: session.instructionFiles,
      costOf: estimateCostUsd,
      partialMessages: config.includePartialMessages === true,
    });
    renderer.start();
    return [progress, renderer];
  }
  return [progress];
}

/**
 * Every format shows on stderr the warnings the loop did not already show (dropped findings), unless --quiet; text
 * mode prints the audit table on stdout, the json modes their result object.
 */
function writeOutcome(
  config: Config,
  io: Io,
  result: ResultObject,
  stream: { result(obj: ResultObject): void } | undefined,
  extraWarnings: string[],
): void {
  if (!config.quiet) for (const warning of extraWarnings) io.stderr.write(`warning: ${escapeControls(warning)}\n`);
  if (!config.quiet && result.concurrent_changes) io.stderr.write(`warning: ${escapeControls(concurrentLine(result))}\n`);
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
  if (result.audit) {
    const failOn = config.audit?.failOn ?? 'high';
    io.stdout.write(renderAudit(result.audit, { color: shouldUseColor(io.stdout, io.env, config.color), width: auditWidth, failOn }));
  }
  if (result.readonly_verified === false) {
    io.stderr.write(`spelunk: ${result.error?.message ?? 'the read-only check failed'} (sandbox: ${result.sandbox})\n`);
  } else if (result.readonly_verified === true && config.verbose && !config.quiet) {
    io.stderr.write(`read-only: repository unchanged · sandbox: ${describeSandbox(result.sandbox)}\n`);
  } else if (result.error && result.stop_reason === 'end_turn') {
    io.stderr.write(`spelunk: ${result.error.message}\n`);
  }
}
