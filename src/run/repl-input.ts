import readline from 'node:readline';
import { ABORT_INTERRUPT } from '../agent/loop.js';
import type { Io } from '../io.js';

/** Lines that arrive closer together than this are one pasted question, not several. */
const PASTE_WINDOW_MS = 30;

/**
 * The REPL's input: lines from a terminal (a multi-line paste is one question) or a pipe, queued while an answer
 * runs, and the Ctrl+C / Ctrl+D / SIGTERM rules. It decides nothing about questions; the REPL asks it for the next.
 */
export interface ReplInput {
  /** The next question or command (untrimmed), or null once input has ended or SIGTERM came. */
  next(): Promise<string | null>;
  /** Shows the prompt (a terminal only: piped input gets none, so stdout holds only the answers). */
  prompt(): void;
  /** The answer Ctrl+C cancels while it runs (null: none; then Ctrl+C clears the line or arms the exit). */
  running(turn: AbortController | null): void;
  /** Input has ended (Ctrl+D, the end of piped input, Ctrl+C twice, SIGTERM): what is queued is still answered. */
  readonly closed: boolean;
  /** SIGTERM came: nothing more is answered. */
  readonly terminated: boolean;
  /** Stops listening: the signal handlers are removed and readline is closed. */
  close(): void;
}

interface ReplInputOptions {
  history: string[];
  historySize: number;
  /** The command line's question, answered first (the REPL shows the first prompt only without one). */
  firstQuestion: string | null;
}

/** What the input's handlers share: the queue of lines, the Ctrl+C state, and the wake-up of a waiting `next`. */
interface InputState {
  queue: string[];
  closed: boolean;
  terminated: boolean;
  /** Ctrl+C on an empty prompt arms the exit; the next Ctrl+C exits, any line disarms it. */
  armedExit: boolean;
  turn: AbortController | null;
  wake: (() => void) | null;
}

type InputIo = Pick<Io, 'stdin' | 'stdout' | 'stderr' | 'signals'>;

/** Opens the REPL's input on `io.stdin`, with its prompt on stdout and its notices on stderr. */
export function openReplInput(io: InputIo, opts: ReplInputOptions): ReplInput {
  const terminal = io.stdin.isTTY === true;
  const rl = readline.createInterface({
    input: io.stdin,
    output: io.stdout as NodeJS.WritableStream,
    terminal,
    history: opts.history,
    historySize: opts.historySize,
    removeHistoryDuplicates: true,
    prompt: '› ',
  });
  const state: InputState = { queue: [], closed: false, terminated: false, armedExit: false, turn: null, wake: null };
  const prompt = (): void => {
    if (terminal) rl.prompt();
  };
  const detach = listen(rl, io, state, prompt);
  if (opts.firstQuestion !== null) state.queue.push(opts.firstQuestion);
  return {
    async next() {
      for (;;) {
        if (state.terminated) return null;
        const line = state.queue.shift();
        if (line !== undefined) return line;
        if (state.closed) return null;
        await new Promise<void>((resolve) => (state.wake = resolve));
      }
    },
    prompt,
    running(turn) {
      state.turn = turn;
    },
    get closed() {
      return state.closed;
    },
    get terminated() {
      return state.terminated;
    },
    close() {
      detach();
      rl.close();
    },
  };
}

/** Wires readline and the process signals to `state`; returns what removes the signal handlers. */
function listen(rl: readline.Interface, io: InputIo, state: InputState, prompt: () => void): () => void {
  const terminal = io.stdin.isTTY === true;
  const notify = (): void => {
    state.wake?.();
    state.wake = null;
  };
  const end = (): void => {
    state.closed = true;
    rl.close();
    notify();
  };
  // Ctrl+C cancels a running answer; else it clears the typed line; on an empty prompt, twice exits.
  const interrupt = (): void => {
    if (state.turn) return void state.turn.abort(ABORT_INTERRUPT);
    if (rl.line !== '') {
      rl.write(null, { ctrl: true, name: 'u' });
      state.armedExit = false;
      return;
    }
    if (state.armedExit) return end();
    state.armedExit = true;
    io.stderr.write('\n(press Ctrl+C again or Ctrl+D to exit)\n');
    prompt();
  };
  const terminate = (): void => {
    state.terminated = true;
    state.turn?.abort(ABORT_INTERRUPT);
    end();
  };
  const paste = { lines: [] as string[], timer: null as NodeJS.Timeout | null };
  rl.on('SIGINT', interrupt);
  io.signals.on('SIGINT', interrupt);
  io.signals.on('SIGTERM', terminate);
  rl.on('close', () => {
    state.closed = true;
    notify();
  });
  rl.on('line', (line) => {
    state.armedExit = false;
    if (!terminal) {
      if (line.trim() !== '') state.queue.push(line);
      return notify();
    }
    paste.lines.push(line);
    if (paste.timer) clearTimeout(paste.timer);
    paste.timer = setTimeout(() => {
      const text = paste.lines.join('\n');
      paste.lines = [];
      if (text.trim() !== '') state.queue.push(text);
      else if (!state.turn) prompt();
      notify();
    }, PASTE_WINDOW_MS);
  });
  return () => {
    io.signals.off('SIGINT', interrupt);
    io.signals.off('SIGTERM', terminate);
  };
}
