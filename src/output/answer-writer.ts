import { answerStands, type AgentEvent } from '../agent/events.js';
import type { OutStream } from '../io.js';
import { blockSplitter } from './markdown.js';
import type { OrderedWrites } from './ordered-writes.js';
import { sanitizeBlock, type TerminalLines } from './terminal-lines.js';

/** What the answer writer needs beyond the shared lines. */
interface AnswerWriterOptions {
  /** The unwrapped stdout: rendered blocks are deferred to it through `queue`. */
  stdout: OutStream;
  queue: OrderedWrites;
  quiet: boolean;
  render: Promise<((markdown: string) => string) | null> | null;
  decorate: ((markdown: string, rendered: string) => Promise<string>) | null;
}

/** The answer on stdout: live (plain or rendered block by block) on a terminal, held until final elsewhere. */
interface AnswerWriter {
  /** A chunk of the model's text. */
  text(chunk: string): void;
  /** A new request: any text of the previous one is gone. */
  resetTurn(): void;
  /** The turn's text ended at a tool call: held text was commentary (to stderr, dimmed). */
  endTurn(): void;
  /** Draws the last rendered block of the request's text now (so the usage line comes after it). */
  flushBlock(): void;
  /** --quiet at a tool call or request: commentary is dropped, never shown and never left to run into the answer. */
  dropTurn(): void;
  /** The question ended: hold the final answer (or say why it was not written) and end the answer line. */
  finish(event: Extract<AgentEvent, { type: 'done' }>): void;
  /** Writes the held final answer, once. */
  writeHeld(): void;
  /** Ends an answer line left open. */
  endLine(): void;
}

export function createAnswerWriter(lines: TerminalLines, opts: AnswerWriterOptions): AnswerWriter {
  const { p } = lines;
  const render = opts.stdout.isTTY === true ? opts.render : null;
  const markdown = render ? blockSplitter() : null;
  // Off a terminal stdout gets only the final answer: a turn's text is held until it is known to be the last.
  const holdAnswer = opts.stdout.isTTY !== true;
  let turnText = '';
  let held: string | null = null;

  const writeRendered = render ? blockWriter(lines, opts, render) : () => {};
  const flushBlock = (): void => {
    if (markdown) writeRendered(markdown.end());
  };
  const commentary = (): string => p.dim(sanitizeBlock(turnText.replace(/^\n+|\n+$/g, '')));

  const text = (chunk: string): void => {
    if (holdAnswer) {
      turnText += chunk;
      return;
    }
    if (markdown) {
      lines.spinner.clear();
      writeRendered(markdown.push(chunk));
      return;
    }
    const plain = lines.brokeAnswerLine && chunk.startsWith('\n') ? chunk.slice(1) : chunk;
    lines.brokeAnswerLine = false;
    if (plain === '') return;
    if (lines.sharedTerminal) lines.closeStderrLine();
    // Only a terminal gets live text (elsewhere the answer is held): escape sequences echoed from repository content
    // must not drive it, --no-render or not.
    lines.stdout.write(sanitizeBlock(plain));
    lines.stdoutOpen = !plain.endsWith('\n');
    lines.lastLineTag = null;
  };

  return {
    text,
    flushBlock,
    resetTurn: () => void (turnText = ''),
    endTurn() {
      flushBlock();
      if (holdAnswer && turnText.trim() !== '') lines.errLine(commentary());
      turnText = '';
    },
    dropTurn() {
      flushBlock();
      turnText = '';
    },
    finish(event) {
      flushBlock();
      if (holdAnswer && answerStands(event)) held = event.text;
      else if (holdAnswer && turnText.trim() !== '' && !opts.quiet) {
        lines.errLine(commentary());
        lines.errLine(p.yellow(`(the answer above was cut (${event.stop}), so it was not written to stdout)`));
      }
      turnText = '';
      if (lines.stdoutOpen) lines.stdout.write('\n');
      lines.stdoutOpen = false;
    },
    writeHeld() {
      if (held === null) return;
      // Escaped off a terminal too: `spelunk q > answer.md` then `cat answer.md` must not run the model's sequences.
      const safe = sanitizeBlock(held);
      if (safe !== '') lines.stdout.write(safe.endsWith('\n') ? safe : `${safe}\n`);
      held = null;
    },
    endLine() {
      if (lines.stdoutOpen) lines.stdout.write('\n');
      lines.stdoutOpen = false;
    },
  };
}

/** Writes one rendered markdown block to stdout, in order, once the renderer (and the citation check) is ready. */
function blockWriter(
  lines: TerminalLines,
  opts: AnswerWriterOptions,
  render: Promise<((markdown: string) => string) | null>,
): (block: string) => void {
  return (block) => {
    if (block === '') return;
    if (lines.sharedTerminal) lines.closeStderrLine();
    const decorate = opts.decorate;
    const raw = sanitizeBlock(block);
    // A renderer that failed to load leaves the raw (escaped) markdown, never a lost block.
    const rendered = render.then((fn) => (fn ? fn(block) : raw), () => raw);
    opts.queue.defer(opts.stdout, decorate ? rendered.then((r) => decorate(block, r).catch(() => r)) : rendered);
    lines.stdoutOpen = false;
    lines.lastLineTag = null;
  };
}
