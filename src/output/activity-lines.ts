import { cacheMissLine } from '../agent/cache-watch.js';
import type { AgentEvent, StopKind } from '../agent/events.js';
import { STOPS, stopMessage } from '../exit-codes.js';
import { sanitizeBlock, type TerminalLines } from './terminal-lines.js';
import { oneLine } from '../escape.js';
import { formatUsageLine, type UsageLedger } from './usage.js';

/** A tool call line longer than this (model-chosen arguments) is cut with `…`. */
const MAX_LABEL_CHARS = 400;
/** The reminder of which call a late summary belongs to. */
const MAX_REMINDER_CHARS = 60;
const VERBOSE_INDENT = '    ';

type EventOf<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

/** What the activity lines need beyond the shared lines. */
interface ActivityOptions {
  color: boolean;
  verbose: boolean;
  showThinking: boolean;
  /** Read for the question's total line; the run service fills it. */
  ledger: UsageLedger;
}

/** The activity on stderr: thinking, tool calls and their summaries, usage, warnings and how a question ended. */
interface ActivityLines {
  thinking(event: EventOf<'thinking'>): void;
  toolStart(event: EventOf<'tool_start'>): void;
  /** A line for the other activity events (tool_end, usage, cache_miss, tools_waited, warning, retry); others: none. */
  line(event: AgentEvent): void;
  /** The question's total usage (rows since `from`, unless `quiet`) and how it ended when not by end_turn. */
  finish(event: EventOf<'done'>, from: number, quiet: boolean): void;
}

/** The first tools' wait for the start-of-run state is shown from this long on (or always with --verbose). */
const WAIT_SHOWN_MS = 1_000;

export function createActivityLines(lines: TerminalLines, opts: ActivityOptions): ActivityLines {
  const { p } = lines;
  const calls = new Map<string, string>();

  const toolEnd = (event: EventOf<'tool_end'>): void => {
    const label = calls.get(event.id) ?? event.name;
    const summary = oneLine(event.outcome.summary) || (event.outcome.isError ? 'error' : 'done');
    const text = event.outcome.isError ? p.red(summary) : `${summary} · ${formatDuration(event.durationMs)}`;
    // With concurrent calls a summary may land under another call's line: say which call it ends.
    const reminder = lines.lastLineTag === toolTag(event.id) ? '' : p.dim(`  (${truncate(label, MAX_REMINDER_CHARS)})`);
    lines.errLine(`  ⎿ ${text}${reminder}`);
    if (opts.verbose && event.outcome.content !== '') lines.errLine(indent(sanitizeBlock(event.outcome.content)));
  };

  const line: ActivityLines['line'] = (event) => {
    switch (event.type) {
      case 'tool_end':
        return toolEnd(event);
      case 'usage': {
        const options = { color: opts.color, interrupted: event.interrupted === true, effort: event.effort };
        return lines.errLine(formatUsageLine(event.model, event.usage, options));
      }
      case 'cache_miss':
        return lines.errLine(p.yellow(oneLine(cacheMissLine(event.miss))));
      case 'tools_waited':
        // A start-up cost, said in plain words and only when it is felt (a second or more) or asked for (--verbose): a
        // tenth of a second on every run was noise, and "read-only snapshot" is spelunk's own word for it.
        if (event.durationMs < WAIT_SHOWN_MS && !opts.verbose) return;
        return lines.errLine(p.dim(`  the first tool waited ${(event.durationMs / 1000).toFixed(1)} s while spelunk recorded the repository's state`));
      case 'warning':
        return lines.errLine(p.yellow(`warning: ${oneLine(event.message)}`));
      case 'retry':
        return lines.errLine(p.dim(oneLine(event.message)));
    }
  };

  return {
    line,
    thinking(event) {
      if (!opts.showThinking) {
        // Hidden thinking is still waiting from the person's point of view: keep the indicator going.
        lines.startWaiting();
        return;
      }
      lines.spinner.stop();
      if (event.text === '') return;
      lines.closeStdoutLine();
      if (!lines.stderrOpen) lines.stderr.write(p.dim('✻ '));
      lines.stderr.write(p.dim(sanitizeBlock(event.text)));
      lines.stderrOpen = !event.text.endsWith('\n');
      lines.lastLineTag = null;
    },
    toolStart(event) {
      const label = truncate(oneLine(toolLabel(event.name, event.display)), MAX_LABEL_CHARS);
      calls.set(event.id, label);
      lines.errLine(`${p.cyan('●')} ${label}`, toolTag(event.id));
    },
    finish(event, from, quiet) {
      lines.closeStderrLine();
      if (opts.ledger.rows().length > from && !quiet) lines.errLine(p.dim(opts.ledger.questionTotalLine(from)));
      if (event.stop !== 'end_turn') {
        const message = oneLine(stopMessage(event, 'cli') ?? STOPS[event.stop].view);
        lines.errLine(isFailure(event.stop) ? p.red(message) : p.yellow(message));
      }
      calls.clear();
    },
  };
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
function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
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
