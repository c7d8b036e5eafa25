import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { ABORT_INTERRUPT } from '../agent/loop.js';
import type { Config } from '../config.js';
import { EXIT } from '../exit-codes.js';
import type { Io } from '../io.js';
import { liveTextRenderer, loadTextView, renderContext } from './ask.js';
import { askCited } from './cited.js';
import type { TextRenderer } from '../output/text.js';
import { shouldUseColor } from '../output/color.js';
import { usageTable } from '../output/usage.js';
import { openSession } from './session.js';
import { VERSION } from '../version.js';

/** Lines that arrive closer together than this are one pasted question, not several. */
const PASTE_WINDOW_MS = 30;
/** History lines kept on disk and offered with the arrow keys. */
const HISTORY_LINES = 1000;

const HELP = `Ask anything about the repository; spelunk explores it read-only and cites path:line.
  /usage    token and cost table for this session
  /context  what the preamble holds (instructions file, listing, token estimates)
  /sources  the last answer's citations again, each checked against the repository
  /clear    start a new conversation (same preamble)
  /exit     quit (also Ctrl+D, or Ctrl+C twice on an empty prompt)
Ctrl+C during an answer cancels it. A multi-line paste is one question.`;

/** The interactive loop: one session, many questions, Ctrl+C cancels a turn, the usage table on exit. */
// Long on purpose: the REPL loop: its input queue, Ctrl+C state and session are shared by every branch.
export async function runRepl(config: Config, io: Io, firstQuestion: string | null): Promise<number> {
  const view = loadTextView(config, io);
  const session = await openSession(config);
  const color = shouldUseColor(io.stderr, io.env, config.color);
  const renderer = liveTextRenderer(config, io, session, color, view);
  const historyFile = historyPath(io.env);
  const history = await loadHistory(historyFile);
  const terminal = io.stdin.isTTY === true;
  const rl = readline.createInterface({
    input: io.stdin,
    output: io.stdout as NodeJS.WritableStream,
    terminal,
    history,
    historySize: HISTORY_LINES,
    removeHistoryDuplicates: true,
    prompt: '› ',
  });
  io.stderr.write(`spelunk ${VERSION} · ${path.basename(config.root)} · ${config.model} · /help for commands\n`);
  for (const warning of session.warnings) io.stderr.write(`warning: ${warning}\n`);

  // Piped input gets no prompt: stdout then holds only the answers.
  const prompt = (): void => {
    if (terminal) rl.prompt();
  };
  let turn: AbortController | null = null;
  let armedExit = false;
  let closed = false;
  let terminated = false;
  const queue: string[] = [];
  let pasteBuffer: string[] = [];
  let pasteTimer: NodeJS.Timeout | null = null;
  let wake: (() => void) | null = null;
  const notify = (): void => {
    wake?.();
    wake = null;
  };

  const interrupt = (): void => {
    if (turn) {
      turn.abort(ABORT_INTERRUPT);
      return;
    }
    if (rl.line !== '') {
      rl.write(null, { ctrl: true, name: 'u' });
      armedExit = false;
      return;
    }
    if (armedExit) {
      closed = true;
      rl.close();
      notify();
      return;
    }
    armedExit = true;
    io.stderr.write('\n(press Ctrl+C again or Ctrl+D to exit)\n');
    prompt();
  };
  const terminate = (): void => {
    terminated = true;
    turn?.abort(ABORT_INTERRUPT);
    closed = true;
    rl.close();
    notify();
  };
  rl.on('SIGINT', interrupt);
  io.signals.on('SIGINT', interrupt);
  io.signals.on('SIGTERM', terminate);
  rl.on('close', () => {
    closed = true;
    notify();
  });
  rl.on('line', (line) => {
    armedExit = false;
    if (!terminal) {
      if (line.trim() !== '') queue.push(line);
      notify();
      return;
    }
    pasteBuffer.push(line);
    if (pasteTimer) clearTimeout(pasteTimer);
    pasteTimer = setTimeout(() => {
      const text = pasteBuffer.join('\n');
      pasteBuffer = [];
      if (text.trim() !== '') queue.push(text);
      else if (!turn) prompt();
      notify();
    }, PASTE_WINDOW_MS);
  });

  if (firstQuestion !== null) queue.push(firstQuestion);
  else prompt();

  try {
    for (;;) {
      const next = queue.shift();
      if (next === undefined) {
        if (closed) break;
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      const question = next.trim();
      await appendHistory(historyFile, question);
      if (question.startsWith('/')) {
        if (runCommand(question, { io, session, color, config, renderer })) break;
      } else {
        turn = new AbortController();
        const onFixing = (): void => renderer.note('some citations did not check out; asking the model for a corrected answer');
        const cited = await askCited(question, session, config, [renderer], turn.signal, { onFixing });
        await renderer.settled();
        renderer.finishAnswer(cited.citations);
        turn = null;
      }
      // The Sources block and rendered blocks may still be on their way: the prompt comes after them.
      await renderer.settled();
      // Ctrl+D (or the end of piped input) still answers what was already typed; SIGTERM does not wait.
      if (terminated || (closed && queue.length === 0)) break;
      if (!closed) prompt();
    }
  } finally {
    io.signals.off('SIGINT', interrupt);
    io.signals.off('SIGTERM', terminate);
    renderer.close();
    await renderer.settled();
    rl.close();
  }
  if (session.ledger.rows().length > 0) io.stderr.write(`\n${usageTable(session.ledger, { color })}\n`);
  return terminated ? EXIT.interrupted : EXIT.ok;
}

/** Runs a slash command; returns true when the REPL should exit. */
function runCommand(
  line: string,
  ctx: { io: Io; session: Awaited<ReturnType<typeof openSession>>; color: boolean; config: Config; renderer: TextRenderer },
): boolean {
  const [command] = line.split(/\s+/, 1);
  const { io, session } = ctx;
  switch (command) {
    case '/exit':
    case '/quit':
      return true;
    case '/help':
      io.stderr.write(`${HELP}\n`);
      return false;
    case '/usage':
      io.stderr.write(session.ledger.rows().length === 0 ? 'no requests yet\n' : `${usageTable(session.ledger, { color: ctx.color })}\n`);
      return false;
    case '/clear':
      session.conversation.clear();
      io.stderr.write('new conversation (the preamble is unchanged, so it is still cached)\n');
      return false;
    case '/sources':
      if (ctx.config.verifyCitations === 'off') io.stderr.write('citations are not checked (--verify-citations off)\n');
      else if (!ctx.renderer.showSources()) io.stderr.write('no citations in the last answer\n');
      return false;
    case '/context':
      io.stderr.write(`${renderContext(session, ctx.config)}\n`);
      return false;
    default:
      io.stderr.write(`unknown command ${command}; /help lists the commands\n`);
      return false;
  }
}

/** `$XDG_STATE_HOME/spelunk/history`, else `~/.local/state/spelunk/history`. */
function historyPath(env: Readonly<Record<string, string | undefined>>): string | null {
  const base = env.XDG_STATE_HOME || (env.HOME ? path.join(env.HOME, '.local', 'state') : path.join(os.homedir(), '.local', 'state'));
  return base ? path.join(base, 'spelunk', 'history') : null;
}

async function loadHistory(file: string | null): Promise<string[]> {
  if (!file) return [];
  try {
    const lines = (await fs.readFile(file, 'utf8')).split('\n').filter((l) => l !== '');
    return lines.slice(-HISTORY_LINES).map(decodeHistory).reverse();
  } catch {
    return [];
  }
}

/** History is best-effort: a read-only home directory must not break the REPL. */
async function appendHistory(file: string | null, line: string): Promise<void> {
  if (!file) return;
  try {
    await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    await fs.appendFile(file, `${encodeHistory(line)}\n`, { mode: 0o600 });
  } catch {
    // ignored: see above
  }
}

/** Multi-line questions are stored on one line. */
function encodeHistory(line: string): string {
  return line.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function decodeHistory(line: string): string {
  return line.replace(/\\(\\|n)/g, (_m, c: string) => (c === 'n' ? '\n' : '\\'));
}
