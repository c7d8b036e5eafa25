import type { AgentEvent } from '../agent/events.js';
import type { OutStream } from '../io.js';
import type { VerifiedCitation } from '../citations/verify.js';
import { createActivityLines } from './activity-lines.js';
import { createAnswerWriter } from './answer-writer.js';
import { createPalette } from './color.js';
import { orderedWrites, type OrderedWrites } from './ordered-writes.js';
import { formatSources, type SourcesOptions } from './sources.js';
import { createTerminalLines, type TerminalLines } from './terminal-lines.js';
import { oneLine } from '../escape.js';
import type { UsageLedger } from './usage.js';


/** What the text renderer needs; `spinner` should be true only when stderr is a TTY. */
export interface TextRendererOptions {
  stdout: OutStream;
  stderr: OutStream;
  color: boolean;
  verbose: boolean;
  showThinking: boolean;
  spinner: boolean;
  ledger: UsageLedger;
  /** --quiet: no activity, thinking, usage or warning lines (and no spinner); how a run ended is still said. */
  quiet?: boolean;
  /**
   * On a terminal with rendering on: renders one markdown block. A promise, because the renderer loads while the
   * first request is already under way; blocks that complete before it is ready wait for it, in order.
   */
  render?: Promise<((markdown: string) => string) | null> | null;
  /** Adds hyperlinks to a rendered block for its verified citations (async: it checks them first). */
  decorate?: ((markdown: string, rendered: string) => Promise<string>) | null;
  /** Hyperlinks for the Sources block on stderr (null: plain text). */
  sourcesLink?: Promise<SourcesOptions['link'] | null> | null;
}

/** What --quiet hides: everything on stderr that is not how the question ended. */
const ACTIVITY: ReadonlySet<AgentEvent['type']> = new Set([
  'request_start', 'thinking', 'tool_start', 'tool_end', 'usage', 'cache_miss', 'tools_waited', 'warning', 'retry',
]);

/** The events that end a wait: the indicator goes before anything they write (thinking decides for itself). */
const ENDS_WAITING: ReadonlySet<AgentEvent['type']> = new Set([
  'request_start', 'first_token', 'text', 'tool_start', 'tool_end', 'usage', 'tools_waited', 'done',
]);

/** Consumes agent events for a person: the answer on stdout, everything else on stderr. */
export interface TextRenderer {
  handle(event: AgentEvent): void;
  /**
   * Writes the held final answer (stdout not a terminal: only the last turn's text goes there, once the answer is
   * final) and then the Sources block on stderr for `citations` (none: no block).
   */
  finishAnswer(citations: readonly VerifiedCitation[] | null): void;
  /** The Sources block of the last answer again (the REPL's /sources); false when there is none. */
  showSources(): boolean;
  /** A notice on stderr, in the order of the events around it. */
  note(message: string): void;
  /** Stops the activity indicator and ends any open line; safe to call more than once. */
  close(): void;
  /** Resolves once every write (some wait for a block's citations to be checked) has reached its stream. */
  settled(): Promise<void>;
}

/** Width of the Sources block when stderr is not a terminal. */
const DEFAULT_SOURCES_WIDTH = 120;

/**
 * Creates the live text renderer (one per session or per question; it tracks question boundaries itself): the answer
 * writer (stdout), the activity lines (stderr) and the spinner share one line state, and this routes events to them.
 */
export function createTextRenderer(opts: TextRendererOptions): TextRenderer {
  const queue = orderedWrites();
  const p = createPalette(opts.color);
  const lines = createTerminalLines(queue.wrap(opts.stdout), queue.wrap(opts.stderr), p, opts.spinner);
  const quiet = opts.quiet === true;
  const render = opts.render ?? null;
  const answer = createAnswerWriter(lines, { stdout: opts.stdout, queue, quiet, render, decorate: opts.decorate ?? null });
  const activity = createActivityLines(lines, opts);
  const { spinner } = lines;
  let lastSources: readonly VerifiedCitation[] = [];
  let questionStart: number | null = null;

  const handleQuietly = (event: AgentEvent): void => {
    if (event.type === 'tool_start' || event.type === 'request_start') answer.dropTurn();
  };

  const handle = (event: AgentEvent): void => {
    questionStart ??= opts.ledger.rows().length;
    if (quiet && ACTIVITY.has(event.type)) return handleQuietly(event);
    if (ENDS_WAITING.has(event.type)) spinner.stop();
    switch (event.type) {
      case 'request_start':
        answer.resetTurn();
        return lines.startWaiting();
      case 'first_token':
        return;
      case 'text':
        return answer.text(event.text);
      case 'thinking':
        return activity.thinking(event);
      case 'tool_start':
        answer.endTurn();
        return activity.toolStart(event);
      case 'usage':
        // The request's text is complete: its last block is drawn now, so the usage line comes after the answer.
        answer.flushBlock();
        return activity.line(event);
      case 'done':
        answer.finish(event);
        activity.finish(event, questionStart ?? opts.ledger.rows().length, quiet);
        questionStart = null;
        return;
      default:
        return activity.line(event);
    }
  };

  const sourcesBlock = sourcesWriter(lines, opts, queue);
  const showSources = (): boolean => sourcesBlock(lastSources);

  return {
    handle,
    showSources,
    finishAnswer(citations) {
      answer.writeHeld();
      lastSources = citations ?? [];
      // --quiet: the answer alone (the REPL's /sources still shows the block on request).
      if (!quiet) showSources();
    },
    note: (message) => lines.errLine(p.yellow(oneLine(message))),
    close() {
      spinner.stop();
      lines.closeStderrLine();
      answer.writeHeld();
      answer.endLine();
    },
    settled: queue.settled,
  };
}

/** Writes the Sources block for `sources` on stderr (false when there are none). */
function sourcesWriter(lines: TerminalLines, opts: TextRendererOptions, queue: OrderedWrites) {
  return (sources: readonly VerifiedCitation[]): boolean => {
    // A pseudo-terminal without a window size reports 0 columns: that is "unknown", not "no room".
    const width = opts.stderr.columns || DEFAULT_SOURCES_WIDTH;
    if (sources.length === 0) return false;
    lines.spinner.clear();
    lines.closeStdoutLine();
    lines.closeStderrLine();
    const link = (opts.sourcesLink ?? Promise.resolve(null)).catch(() => null);
    queue.defer(opts.stderr, link.then((l) => formatSources(sources, { color: opts.color, width, link: l })));
    lines.lastLineTag = null;
    return true;
  };
}
