import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';
import { EFFORTS, effortProblem, isEffort } from '../agent/effort.js';
import { EXIT } from '../exit-codes.js';
import type { Io } from '../io.js';
import { renderContext } from './context.js';
import type { TextRenderer } from '../output/text.js';
import { shouldUseColor } from '../output/color.js';
import { usageTable } from '../output/usage.js';
import { openSession, type Session, type SessionOptions } from './session.js';
import { continueLine } from './session-list.js';
import { lazySymbols } from '../symbols/layer.js';
import { largeGate } from './question.js';
import { linkSaved, newSession, renderSessionList, switchTo, type SavedLink } from './resume.js';
import { findSession, loadSession } from './saved.js';
import { VERSION } from '../version.js';
import { escapeControls } from '../escape.js';
import { stateHome } from '../state-home.js';
import { openReplInput, type ReplInput } from './repl-input.js';
import { gatedSession, runQuestion, type RunHooks } from './run-question.js';
import { liveTextRenderer, loadTextView, REPL_FIX_WORDS, showPhase } from './text-view.js';
import { concurrentLine } from './concurrent.js';

/** History lines kept on disk and offered with the arrow keys. */
const HISTORY_LINES = 1000;

const HELP = `Ask anything about the repository; spelunk explores it read-only and cites path:line.
  /usage    token and cost table for this session
  /context  what the preamble holds (instructions file, listing, token estimates)
  /sources  the last answer's citations again, each checked against the repository
  /clear    start a new conversation (same preamble)
  /resume   list this repository's saved sessions; /resume <id> continues one
  /effort   show the effort setting; /effort low|medium|high|max changes it for the next questions
  /exit     quit (also Ctrl+D, or Ctrl+C twice on an empty prompt)
Ctrl+C during an answer cancels it. A multi-line paste is one question.`;

/** What every line of the REPL works with: the session it asks in, its input, its view and its saved link. */
interface ReplContext {
  io: Io;
  session: Session;
  color: boolean;
  /** /effort replaces the config for the questions after it. */
  state: { config: Config };
  link: { current: SavedLink };
  renderer: TextRenderer;
  input: ReplInput;
}

/** The interactive loop: one session, many questions, Ctrl+C cancels a turn, the usage table on exit. */
export async function runRepl(
  config: Config,
  io: Io,
  firstQuestion: string | null,
  opts: { allowLargeQuestion?: boolean } = {},
): Promise<number> {
  const view = loadTextView(config, io);
  const session = await openSession(config, { symbols: lazySymbols(io.env) });
  const link: { current: SavedLink } = { current: await linkSaved(config, io.env, session) };
  const color = shouldUseColor(io.stderr, io.env, config.color);
  const renderer = liveTextRenderer(config, io, session, color, { view });
  const historyFile = historyPath(io.env);
  const history = await loadHistory(historyFile);
  const input = openReplInput(io, { history, historySize: HISTORY_LINES, firstQuestion });
  const ctx: ReplContext = { io, session, color, state: { config }, link, renderer, input };
  io.stderr.write(`spelunk ${VERSION} · ${path.basename(config.root)} · ${config.model} · /help for commands\n`);
  for (const warning of session.warnings) io.stderr.write(`warning: ${warning}\n`);
  if (link.current.warning) io.stderr.write(`warning: ${link.current.warning}\n`);
  if (config.session.resume !== null) io.stderr.write(`${link.current.notice ?? `resumed session ${link.current.id.slice(0, 8)}`}\n`);
  if (firstQuestion === null) input.prompt();

  // A pasted question over the size limit, waiting for the `y` that sends it.
  let heldLarge: string | null = null;
  let pastFirst = false;
  try {
    for (let next = await input.next(); next !== null; next = await input.next()) {
      const line = next.trim();
      await appendHistory(historyFile, line);
      // The command line's question is first in the queue and was already let through there (asked, or the flag).
      const allowed = opts.allowLargeQuestion === true || (firstQuestion !== null && !pastFirst);
      const gate = largeGate(line, heldLarge, { model: ctx.state.config.model, terminal: io.stdin.isTTY === true, allowed });
      pastFirst = true;
      heldLarge = gate.held;
      if (gate.say) io.stderr.write(`${gate.say}\n`);
      if (gate.question !== null && (await answerLine(gate.question, ctx))) break;
      // The Sources block and rendered blocks may still be on their way: the prompt comes after them.
      await renderer.settled();
      // Every interrupt so far has been answered (a cancelled turn has unwound): the next ones count afresh.
      io.settled?.();
      // Ctrl+D (or the end of piped input) still answers what was already typed; SIGTERM does not wait.
      if (!input.closed) input.prompt();
    }
  } finally {
    renderer.close();
    await renderer.settled();
    input.close();
  }
  if (session.ledger.rows().length > 0) io.stderr.write(`\n${usageTable(session.ledger, { color })}\n`);
  // What Claude Code says on exit too: the saved conversation is only useful if the user knows how to get back to it.
  if (session.ledger.rows().length > 0 && link.current.writer) io.stderr.write(`${continueLine(config.root, io.cwd, link.current.id)}\n`);
  return input.terminated ? EXIT.interrupted : EXIT.ok;
}

/** One line let through: a slash command or a question. Returns true when the REPL should exit. */
async function answerLine(line: string, ctx: ReplContext): Promise<boolean> {
  if (line.startsWith('/resume')) {
    await resumeCommand(line, { io: ctx.io, session: ctx.session, config: ctx.state.config, link: ctx.link });
    return false;
  }
  if (line.startsWith('/')) return runCommand(line, ctx);
  await askInRepl(line, ctx);
  return false;
}

/**
 * One question through the run service, on the REPL's conversation and saved session; the text view is its only
 * consumer. The REPL never had a run time limit (--timeout is for one-shot runs), so none is set here.
 */
async function askInRepl(question: string, ctx: ReplContext): Promise<void> {
  const { io, session, renderer } = ctx;
  const turn = new AbortController();
  ctx.input.running(turn);
  const open = async (_config: Config, opts: SessionOptions): Promise<Session> => gatedSession(session, opts);
  const hooks: RunHooks = {
    sinks: () => [renderer],
    // The REPL showed the session's warnings when it started; a question's own are left out, as before.
    phase: (phase) => showPhase(renderer, phase, REPL_FIX_WORDS),
  };
  const config = { ...ctx.state.config, timeoutMs: null };
  const request = { question, open, saved: ctx.link.current, env: io.env, front: 'cli' } as const;
  const outcome = await runQuestion(request, config, hooks, turn.signal).finally(() => ctx.input.running(null));
  if (outcome.saveWarning) io.stderr.write(`warning: ${outcome.saveWarning}\n`);
  if (outcome.readonly.verified === false && outcome.snapshotError === null) {
    io.stderr.write(`warning: the repository changed during the answer (${outcome.readonly.detail ?? ''})\n`);
  }
  if (outcome.result.concurrent_changes) io.stderr.write(`warning: ${escapeControls(concurrentLine(outcome.result))}\n`);
}

/** Runs a slash command; returns true when the REPL should exit. */
function runCommand(line: string, ctx: ReplContext): boolean {
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
      ctx.link.current = { ...ctx.link.current, ...newSession(ctx.state.config, ctx.link.current.dir) };
      io.stderr.write('new conversation (the preamble is unchanged, so it is still cached)\n');
      return false;
    case '/sources':
      if (ctx.state.config.verifyCitations === 'off') io.stderr.write('citations are not checked (--verify-citations off)\n');
      else if (!ctx.renderer.showSources()) io.stderr.write('no citations in the last answer\n');
      return false;
    case '/context':
      io.stderr.write(`${renderContext(session, ctx.state.config)}\n`);
      return false;
    case '/effort':
      io.stderr.write(`${effortCommand(line.slice(command!.length).trim(), ctx.state)}\n`);
      return false;
    default:
      io.stderr.write(`unknown command ${command}; /help lists the commands\n`);
      return false;
  }
}

/** `/resume` lists the saved sessions; `/resume <id|prefix>` replaces the conversation with that one. */
async function resumeCommand(line: string, ctx: { io: Io; session: Session; config: Config; link: { current: SavedLink } }): Promise<void> {
  const which = line.slice('/resume'.length).trim();
  const { io, link } = ctx;
  if (which === '') {
    io.stderr.write(`${await renderSessionList(link.current.dir, link.current.id)}\n`);
    return;
  }
  try {
    const loaded = await loadSession(await findSession(link.current.dir, which, ctx.config.root));
    link.current = { ...(await switchTo(loaded, ctx.config, ctx.session, link.current.dir)), warning: link.current.warning };
    io.stderr.write(`${link.current.notice ?? `resumed session ${loaded.id.slice(0, 8)}`} (${loaded.messages.length} messages)\n`);
  } catch (error) {
    io.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  }
}

/** `/effort` shows the setting; `/effort <level>` checks it against the model and sets it. Returns the line to print. */
function effortCommand(arg: string, state: { config: Config }): string {
  const { model, thinking, effort } = state.config;
  if (arg === '') return `effort ${effort ?? `not sent (${model} uses its own default)`}; /effort ${EFFORTS.join('|')} changes it`;
  if (!isEffort(arg)) return `unknown effort "${arg}"; use /effort ${EFFORTS.join('|')}`;
  const problem = effortProblem(model, arg, thinking);
  if (problem) return problem.replace('--effort', '/effort');
  state.config = { ...state.config, effort: arg };
  return `effort ${arg} from the next question on`;
}

/** `$XDG_STATE_HOME/spelunk/history`, else `~/.local/state/spelunk/history`. */
function historyPath(env: Readonly<Record<string, string | undefined>>): string | null {
  const base = stateHome(env);
  return base === null ? null : path.join(base, 'spelunk', 'history');
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
