import { cacheMissLine } from '../agent/cache-watch.js';
import type { AgentEvent, StopKind } from '../agent/events.js';
import { STOPS } from '../exit-codes.js';
import type { OutStream } from '../io.js';
import { createPalette, type Palette } from './color.js';
import { formatUsageLine, type UsageLedger } from './usage.js';
import { escapeControls } from '../escape.js';

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
}

/** What --quiet hides: everything on stderr that is not how the question ended. */
const ACTIVITY: ReadonlySet<AgentEvent['type']> = new Set(['request_start', 'thinking', 'tool_start', 'tool_end', 'usage', 'tools_waited', 'warning', 'retry']);

/** Consumes agent events for a person: the answer on stdout, everything else on stderr. */
export interface TextRenderer {
  handle(event: AgentEvent): void;
  /** Stops the activity indicator and ends any open line; safe to call more than once. */
  close(): void;
}

const SPINNER_FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'] as const;
const SPINNER_INTERVAL_MS = 80;
const CLEAR_LINE = '\r\x1b[K';
/** A tool call line longer than this (model-chosen arguments) is cut with `…`. */
const MAX_LABEL_CHARS = 400;
/** The reminder of which call a late summary belongs to. */
const MAX_REMINDER_CHARS = 60;
const VERBOSE_INDENT = '    ';


/** Creates the live text renderer (one per session or per question; it tracks question boundaries itself). */
// Long on purpose: a factory whose closures share the renderer state (open line, spinner, question boundaries).
export function createTextRenderer(opts: TextRendererOptions): TextRenderer {
  const { stdout, stderr, ledger } = opts;
  const p = createPalette(opts.color);
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

  const writeAnswer = (chunk: string): void => {
    const text = brokeAnswerLine && chunk.startsWith('\n') ? chunk.slice(1) : chunk;
    brokeAnswerLine = false;
    if (text === '') return;
    if (sharedTerminal) closeStderrLine();
    // On a terminal, escape sequences echoed from repository content must not drive the terminal.
    stdout.write(stdout.isTTY ? sanitizeBlock(text) : text);
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
    if (stdoutOpen) stdout.write('\n');
    stdoutOpen = false;
    closeStderrLine();
    const from = questionStart ?? ledger.rows().length;
    if (ledger.rows().length > from && !opts.quiet) errLine(p.dim(ledger.questionTotalLine(from)));
    if (event.stop !== 'end_turn') {
      const message = oneLine(event.message ?? STOPS[event.stop].view);
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
      return;
    }
    switch (event.type) {
      case 'request_start':
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
        const label = truncate(oneLine(event.display ? `${event.name} ${event.display}` : event.name), MAX_LABEL_CHARS);
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

  const close = (): void => {
    spinner.stop();
    closeStderrLine();
    if (stdoutOpen) stdout.write('\n');
    stdoutOpen = false;
  };

  return { handle, close };
}

interface Spinner {
  /** Starts drawing (first frame at once); no-op when disabled or already running. */
  start(): void;
  /** Erases the current frame; a running spinner redraws on its next tick. */
  clear(): void;
  /** Erases the frame and stops the timer. */
  stop(): void;
}

function createSpinner(stream: OutStream, p: Palette, enabled: boolean): Spinner {
  let timer: NodeJS.Timeout | null = null;
  let frame = 0;
  let shown = false;
  const draw = (): void => {
    stream.write(`\r${p.cyan(SPINNER_FRAMES[frame % SPINNER_FRAMES.length] ?? '')} ${p.dim('thinking…')}`);
    frame += 1;
    shown = true;
  };
  const clear = (): void => {
    if (!shown) return;
    stream.write(CLEAR_LINE);
    shown = false;
  };
  return {
    start() {
      if (!enabled || timer) return;
      draw();
      // unref: an indicator must never keep the process alive after the work is done.
      timer = setInterval(draw, SPINNER_INTERVAL_MS);
      timer.unref();
    },
    clear,
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
      clear();
    },
  };
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
