import { cacheMissLine } from '../agent/cache-watch.js';
import { answerStands, type AgentEvent, type StopKind } from '../agent/events.js';
import { STOPS, stopMessage } from '../exit-codes.js';
import type { OutStream } from '../io.js';
import { createPalette } from './color.js';
import { orderedWrites } from './ordered-writes.js';
import { createSpinner } from './spinner.js';
import { formatUsageLine, type UsageLedger } from './usage.js';
import { escapeControls } from '../escape.js';
import type { VerifiedCitation } from '../citations/verify.js';
import { blockSplitter } from './markdown.js';
import { formatSources, type SourcesOptions } from './sources.js';

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
const ACTIVITY: ReadonlySet<AgentEvent['type']> = new Set(['request_start', 'thinking', 'tool_start', 'tool_end', 'usage', 'cache_miss', 'tools_waited', 'warning', 'retry']);

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

/** A tool call line longer than this (model-chosen arguments) is cut with `…`. */
const MAX_LABEL_CHARS = 400;
/** The reminder of which call a late summary belongs to. */
const MAX_REMINDER_CHARS = 60;
const VERBOSE_INDENT = '    ';
/** Width of the Sources block when stderr is not a terminal. */
const DEFAULT_SOURCES_WIDTH = 120;


/** Creates the live text renderer (one per session or per question; it tracks question boundaries itself). */
// Long on purpose: a factory whose closures share the renderer state (open line, spinner, question boundaries).
export function createTextRenderer(opts: TextRendererOptions): TextRenderer {
  const { ledger } = opts;
  const queue = orderedWrites();
  const stdout = queue.wrap(opts.stdout);
  const stderr = queue.wrap(opts.stderr);
  const p = createPalette(opts.color);
  const render = opts.stdout.isTTY === true ? (opts.render ?? null) : null;
  const markdown = render ? blockSplitter() : null;
  // Off a terminal stdout gets only the final answer: a turn's text is held until it is known to be the last.
  const holdAnswer = opts.stdout.isTTY !== true;
  let turnText = '';
  let held: string | null = null;
  let lastSources: readonly VerifiedCitation[] = [];
  // Only when both streams share a terminal can the answer line and activity lines collide mid-line.
  const sharedTerminal = stdout.isTTY === true && stderr.isTTY === true;
  const spinner = createSpinner(stderr, p, opts.spinner);
  const calls = new Map<string, string>();
  let stdoutOpen = false;
  // True after the renderer ended an answer line itself (so activity could be shown): that newline already stands
  // for the first newline of the next answer text.
  let brokeAnswerLine = false;
  let stderrOpen = false;
  let questionStart: number | null = null;
  let lastLineTag: string | null = null;

  const closeStdoutLine = (): void => {
    if (!stdoutOpen || !sharedTerminal) return;
    stdout.write('\n');
    stdoutOpen = false;
    brokeAnswerLine = true;
  };

  const closeStderrLine = (): void => {
    if (!stderrOpen) return;
    stderr.write('\n');
    stderrOpen = false;
  };

  const errLine = (line: string, tag: string | null = null): void => {
    spinner.clear();
    closeStdoutLine();
    closeStderrLine();
    stderr.write(`${line}\n`);
    lastLineTag = tag;
  };

  const startWaiting = (): void => {
    if (!opts.spinner) return;
    // The frame is drawn with `\r`: it needs a line of its own on the terminal.
    closeStdoutLine();
    closeStderrLine();
    spinner.start();
  };

  const writeRendered = (block: string): void => {
    if (block === '') return;
    if (sharedTerminal) closeStderrLine();
    const decorate = opts.decorate;
    const raw = sanitizeBlock(block);
    // A renderer that failed to load leaves the raw (escaped) markdown, never a lost block.
    const rendered = render!.then((fn) => (fn ? fn(block) : raw), () => raw);
    queue.defer(opts.stdout, decorate ? rendered.then((r) => decorate(block, r).catch(() => r)) : rendered);
    stdoutOpen = false;
    lastLineTag = null;
  };

  /** The end of a turn's text: commentary (held text goes to stderr) or the last lines of a rendered answer. */
  const endTurnText = (): void => {
    if (markdown) writeRendered(markdown.end());
    if (!holdAnswer || turnText.trim() === '') {
      turnText = '';
      return;
    }
    errLine(p.dim(sanitizeBlock(turnText.replace(/^\n+|\n+$/g, ''))));
    turnText = '';
  };

  const writeAnswer = (chunk: string): void => {
    if (holdAnswer) {
      turnText += chunk;
      return;
    }
    if (markdown) {
      spinner.clear();
      writeRendered(markdown.push(chunk));
      return;
    }
    const text = brokeAnswerLine && chunk.startsWith('\n') ? chunk.slice(1) : chunk;
    brokeAnswerLine = false;
    if (text === '') return;
    if (sharedTerminal) closeStderrLine();
    // Only a terminal gets live text (elsewhere the answer is held): escape sequences echoed from repository content
    // must not drive it, --no-render or not.
    stdout.write(sanitizeBlock(text));
    stdoutOpen = !text.endsWith('\n');
    lastLineTag = null;
  };

  const writeThinking = (text: string): void => {
    if (text === '') return;
    closeStdoutLine();
    if (!stderrOpen) stderr.write(p.dim('✻ '));
    stderr.write(p.dim(sanitizeBlock(text)));
    stderrOpen = !text.endsWith('\n');
    lastLineTag = null;
  };

  const toolEnd = (event: Extract<AgentEvent, { type: 'tool_end' }>): void => {
    const label = calls.get(event.id) ?? event.name;
    const summary = oneLine(event.outcome.summary) || (event.outcome.isError ? 'error' : 'done');
    const text = event.outcome.isError ? p.red(summary) : `${summary} · ${formatDuration(event.durationMs)}`;
    // With concurrent calls a summary may land under another call's line: say which call it ends.
    const reminder = lastLineTag === toolTag(event.id) ? '' : p.dim(`  (${truncate(label, MAX_REMINDER_CHARS)})`);
    errLine(`  ⎿ ${text}${reminder}`);
    if (opts.verbose && event.outcome.content !== '') errLine(indent(sanitizeBlock(event.outcome.content)));
  };

  const finish = (event: Extract<AgentEvent, { type: 'done' }>): void => {
    spinner.stop();
    if (markdown) writeRendered(markdown.end());
    if (holdAnswer && answerStands(event)) held = event.text;
    else if (holdAnswer && turnText.trim() !== '' && !opts.quiet) {
      errLine(p.dim(sanitizeBlock(turnText.replace(/^\n+|\n+$/g, ''))));
      errLine(p.yellow(`(the answer above was cut (${event.stop}), so it was not written to stdout)`));
    }
    turnText = '';
    if (stdoutOpen) stdout.write('\n');
    stdoutOpen = false;
    closeStderrLine();
    const from = questionStart ?? ledger.rows().length;
    if (ledger.rows().length > from && !opts.quiet) errLine(p.dim(ledger.questionTotalLine(from)));
    if (event.stop !== 'end_turn') {
      const message = oneLine(stopMessage(event, 'cli') ?? STOPS[event.stop].view);
      errLine(isFailure(event.stop) ? p.red(message) : p.yellow(message));
    }
    questionStart = null;
    calls.clear();
  };

  const handle = (event: AgentEvent): void => {
    questionStart ??= ledger.rows().length;
    if (opts.quiet && ACTIVITY.has(event.type)) {
      // The ledger still counts (--max-budget-usd reads it); only the line is withheld.
      if (event.type === 'usage') ledger.add({ turn: event.turn, model: event.model, usage: event.usage, durationMs: event.durationMs, ...(event.interrupted ? { interrupted: true } : {}) });
      if (event.type === 'cache_miss') ledger.markMissed(event.miss.tokens);
      // A turn's text still ends at its first tool call or the next request: commentary is dropped, never shown
      // and never left to run into the answer.
      if (event.type === 'tool_start' || event.type === 'request_start') {
        if (markdown) writeRendered(markdown.end());
        turnText = '';
      }
      return;
    }
    switch (event.type) {
      case 'request_start':
        turnText = '';
        spinner.stop();
        startWaiting();
        return;
      case 'first_token':
        spinner.stop();
        return;
      case 'text':
        spinner.stop();
        writeAnswer(event.text);
        return;
      case 'thinking':
        if (!opts.showThinking) {
          // Hidden thinking is still waiting from the person's point of view: keep the indicator going.
          startWaiting();
          return;
        }
        spinner.stop();
        writeThinking(event.text);
        return;
      case 'tool_start': {
        spinner.stop();
        endTurnText();
        const label = truncate(oneLine(toolLabel(event.name, event.display)), MAX_LABEL_CHARS);
        calls.set(event.id, label);
        errLine(`${p.cyan('●')} ${label}`, toolTag(event.id));
        return;
      }
      case 'tool_end':
        spinner.stop();
        toolEnd(event);
        return;
      case 'usage':
        spinner.stop();
        // The request's text is complete: its last block is drawn now, so the usage line comes after the answer.
        if (markdown) writeRendered(markdown.end());
        ledger.add({ turn: event.turn, model: event.model, usage: event.usage, durationMs: event.durationMs, ...(event.interrupted ? { interrupted: true } : {}) });
        errLine(formatUsageLine(event.model, event.usage, { color: opts.color, interrupted: event.interrupted === true, effort: event.effort }));
        return;
      case 'cache_miss':
        ledger.markMissed(event.miss.tokens);
        errLine(p.yellow(oneLine(cacheMissLine(event.miss))));
        return;
      case 'tools_waited':
        spinner.stop();
        // Seconds even below one: the wait is a start-up cost, read next to the first request's time, not a tool time.
        errLine(p.dim(`  waited ${(event.durationMs / 1000).toFixed(1)} s for the read-only snapshot`));
        return;
      case 'warning':
        errLine(p.yellow(`warning: ${oneLine(event.message)}`));
        return;
      case 'retry':
        errLine(p.dim(oneLine(event.message)));
        return;
      case 'done':
        finish(event);
        return;
    }
  };

  const writeHeld = (): void => {
    if (held === null) return;
    // Escaped off a terminal too: `spelunk q > answer.md` then `cat answer.md` must not run the model's sequences.
    const safe = sanitizeBlock(held);
    if (safe !== '') stdout.write(safe.endsWith('\n') ? safe : `${safe}\n`);
    held = null;
  };

  const showSources = (): boolean => {
    // A pseudo-terminal without a window size reports 0 columns: that is "unknown", not "no room".
    const width = opts.stderr.columns || DEFAULT_SOURCES_WIDTH;
    if (lastSources.length === 0) return false;
    const sources = lastSources;
    spinner.clear();
    closeStdoutLine();
    closeStderrLine();
    const link = (opts.sourcesLink ?? Promise.resolve(null)).catch(() => null);
    queue.defer(opts.stderr, link.then((l) => formatSources(sources, { color: opts.color, width, link: l })));
    lastLineTag = null;
    return true;
  };

  const finishAnswer = (citations: readonly VerifiedCitation[] | null): void => {
    writeHeld();
    lastSources = citations ?? [];
    showSources();
  };

  const close = (): void => {
    spinner.stop();
    closeStderrLine();
    writeHeld();
    if (stdoutOpen) stdout.write('\n');
    stdoutOpen = false;
  };

  const note = (message: string): void => errLine(p.yellow(oneLine(message)));

  return { handle, finishAnswer, showSources, note, close, settled: queue.settled };
}

/** `bash ls src`, `read_file src/a.ts`; a display that already starts with the tool's name (`git log -3`) is not doubled. */
function toolLabel(name: string, display: string | undefined): string {
  if (!display) return name;
  return display === name || display.startsWith(`${name} `) ? display : `${name} ${display}`;
}

function toolTag(id: string): string {
  return `tool:${id}`;
}

function isFailure(stop: StopKind): boolean {
  return stop === 'api_error';
}

/** `12 ms` under a second, `1.2 s` from there. */
export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** Multi-line text safe for a terminal: keeps newlines and tabs, drops CR, escapes every other control character. */
function sanitizeBlock(s: string): string {
  return escapeControls(s.replace(/\r/g, ''), '\n\t');
}

/** One terminal line: newlines become `↵`, tabs spaces, other control characters visible escapes. */
function oneLine(s: string): string {
  return escapeControls(s.replace(/\r?\n/g, '↵').replace(/\t/g, ' '));
}

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

function indent(block: string): string {
  return block
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => `${VERBOSE_INDENT}${line}`)
    .join('\n');
}
