import { escapeControls } from '../escape.js';
import type { OutStream } from '../io.js';
import type { Palette } from './color.js';
import { createSpinner, type Spinner } from './spinner.js';

/**
 * The line state the answer writer and the activity lines share: when stdout and stderr are one terminal, a line
 * one of them left open must be ended before the other writes, and the spinner's `\r` frame needs a line of its own.
 */
export interface TerminalLines {
  readonly stdout: OutStream;
  readonly stderr: OutStream;
  readonly p: Palette;
  readonly spinner: Spinner;
  /** Only when both streams share a terminal can the answer line and activity lines collide mid-line. */
  readonly sharedTerminal: boolean;
  stdoutOpen: boolean;
  /**
   * True after the renderer ended an answer line itself (so activity could be shown): that newline already stands
   * for the first newline of the next answer text.
   */
  brokeAnswerLine: boolean;
  stderrOpen: boolean;
  /** Which call the last stderr line belongs to (a tool call's summary names its call when another line came between). */
  lastLineTag: string | null;
  closeStdoutLine(): void;
  closeStderrLine(): void;
  /** One whole line on stderr, after ending whatever line is open. */
  errLine(line: string, tag?: string | null): void;
  /** Shows the activity indicator (when enabled) on a line of its own. */
  startWaiting(): void;
}

/** The shared line state over the (order-wrapped) streams; `spinner` only when stderr is a terminal. */
export function createTerminalLines(stdout: OutStream, stderr: OutStream, p: Palette, spinner: boolean): TerminalLines {
  const lines: TerminalLines = {
    stdout,
    stderr,
    p,
    spinner: createSpinner(stderr, p, spinner),
    sharedTerminal: stdout.isTTY === true && stderr.isTTY === true,
    stdoutOpen: false,
    brokeAnswerLine: false,
    stderrOpen: false,
    lastLineTag: null,
    closeStdoutLine() {
      if (!lines.stdoutOpen || !lines.sharedTerminal) return;
      stdout.write('\n');
      lines.stdoutOpen = false;
      lines.brokeAnswerLine = true;
    },
    closeStderrLine() {
      if (!lines.stderrOpen) return;
      stderr.write('\n');
      lines.stderrOpen = false;
    },
    errLine(line, tag = null) {
      lines.spinner.clear();
      lines.closeStdoutLine();
      lines.closeStderrLine();
      stderr.write(`${line}\n`);
      lines.lastLineTag = tag;
    },
    startWaiting() {
      if (!spinner) return;
      // The frame is drawn with `\r`: it needs a line of its own on the terminal.
      lines.closeStdoutLine();
      lines.closeStderrLine();
      lines.spinner.start();
    },
  };
  return lines;
}

/** Multi-line text safe for a terminal: keeps newlines and tabs, drops CR, escapes every other control character. */
export function sanitizeBlock(s: string): string {
  return escapeControls(s.replace(/\r/g, ''), '\n\t');
}
