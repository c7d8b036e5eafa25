import { createHash, randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Message } from '../agent/model.js';
import type { Conversation } from '../agent/conversation.js';
import { citedFiles } from '../citations/extract.js';
import { UsageError } from '../errors.js';
import { runGit } from '../sandbox/git.js';
import { isInside, realPrefix } from '../sandbox/paths.js';
import { stateHome } from '../state-home.js';
import { escapeControls } from '../escape.js';
import { checkRecord, isBad, SESSION_ID, type HeaderRecord, type TurnRecord } from './session-records.js';

/** A session file that is not what spelunk writes (damaged, or edited): one line, and the file is not used. */
export class DamagedSession extends UsageError {
  override name = 'DamagedSession';
}

/** Sessions kept per repository; the oldest beyond this are deleted when a new one starts. */
export const MAX_SESSIONS_PER_REPO = 50;
/** Sessions not touched for this long are deleted when a new one starts. */
const MAX_SESSION_AGE_DAYS = 30;
/** A session file larger than this is not loaded (a resume would not fit the context window anyway). */
const MAX_SESSION_BYTES = 64 * 1024 * 1024;
/** Cited files named in the resume line, at most. */
const MAX_CITED_SHOWN = 5;
/** What a listing shows of a saved session. */
interface SessionSummary {
  id: string;
  file: string;
  mtimeMs: number;
  firstQuestion: string;
  questions: number;
  costUsd: number | null;
}

/** A saved conversation, ready to continue. */
export interface LoadedSession {
  id: string;
  messages: Message[];
  last: TurnRecord | null;
}

/**
 * `$XDG_STATE_HOME/spelunk/sessions/<repo-hash>` (else ~/.local/state/…); null when there is no absolute state
 * directory or it would be inside `root`.
 */
export function sessionsDir(env: Readonly<Record<string, string | undefined>>, root: string): string | null {
  const home = stateHome(env);
  if (home === null) return null;
  const state = realPrefix(home);
  const dir = path.join(state, 'spelunk', 'sessions', createHash('sha256').update(root).digest('hex').slice(0, 16));
  // Never inside the repository: the saved answers would show up in its listing, and in the read-only proof.
  return isInside(root, dir) ? null : dir;
}

/** The repository's saved sessions, newest first. */
export async function listSessions(dir: string): Promise<SessionSummary[]> {
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const found: SessionSummary[] = [];
  for (const name of names) {
    const id = name.endsWith('.jsonl') ? name.slice(0, -'.jsonl'.length) : '';
    if (!SESSION_ID.test(id)) continue;
    const file = path.join(dir, name);
    const stat = await fs.stat(file).catch(() => null);
    if (!stat?.isFile()) continue;
    found.push({ id, file, mtimeMs: stat.mtimeMs, firstQuestion: '', questions: 0, costUsd: 0 });
  }
  return found.sort((a, b) => b.mtimeMs - a.mtimeMs);
}

/** Fills in the first question, the question count and the cost of `summary` (reads the file). */
export async function describeSession(summary: SessionSummary): Promise<SessionSummary> {
  const records = (await readRecords(summary.file)).filter((r): r is TurnRecord => r.type === 'turn');
  const turns = records.filter((r) => r.partial !== true);
  const costs = turns.map((t) => t.cost_usd);
  return {
    ...summary,
    firstQuestion: records[0]?.question ?? '',
    questions: turns.length,
    costUsd: costs.some((c) => c === null) ? null : costs.reduce<number>((sum, c) => sum + (c ?? 0), 0),
  };
}

/** The session `which` names: 'latest', or a session id or a unique prefix of one. Throws UsageError otherwise. */
export async function findSession(dir: string | null, which: string, root: string): Promise<SessionSummary> {
  const all = dir ? await listSessions(dir) : [];
  if (which === 'latest') {
    if (all[0]) return all[0];
    throw new UsageError(
      `no saved session for ${root} to continue; ask a question first (sessions are saved unless --no-session-persistence)`,
    );
  }
  const matches = all.filter((s) => s.id.startsWith(which.toLowerCase()));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) {
    throw new UsageError(`no saved session "${which}" for ${root}; /resume in the REPL lists them, or use -c for the latest`);
  }
  throw new UsageError(
    `"${which}" matches ${matches.length} sessions (${matches.slice(0, 3).map((s) => s.id.slice(0, 8)).join(', ')}${matches.length > 3 ? ', …' : ''}); give more of the id`,
  );
}

/** Reads a saved session back into messages. */
export async function loadSession(summary: SessionSummary): Promise<LoadedSession> {
  const messages: Message[] = [];
  let last: TurnRecord | null = null;
  let lastStep: TurnRecord | null = null;
  for (const record of await readRecords(summary.file)) {
    if (record.type !== 'turn') continue;
    messages.splice(Math.min(record.base, messages.length), Infinity, ...record.messages);
    if (record.partial === true) lastStep = record;
    else last = record;
  }
  // A session cut mid-question has only steps after its last full question: they carry no HEAD or cache state.
  last ??= lastStep;
  return { id: summary.id, messages, last };
}

/**
 * The one line said on resume when the repository or the preamble changed since the session was saved. HEAD is
 * compared only when both sides were read: `now.head` undefined means git gave up or was refused now, and a saved
 * `head` of null is what a save writes when the read-only proof's HEAD was unknown then (resume.ts `saveQuestion`).
 * A slow git is not a moved HEAD.
 */
export async function resumeNotice(
  loaded: LoadedSession,
  now: { root: string; head: string | null | undefined; preambleHash: string; model: string },
): Promise<string | null> {
  const last = loaded.last;
  if (!last) return null;
  const changes: string[] = [];
  if (last.partial !== true && last.head !== null && now.head !== undefined && last.head !== now.head) {
    changes.push(
      `HEAD moved (${short(last.head)} → ${short(now.head)})${await changedCitations(loaded.messages, now.root, last.head, now.head)}`,
    );
  }
  if (last.preamble_hash !== now.preambleHash) {
    changes.push('the preamble changed (AGENTS.md, the listing or the tools), so the first request re-writes the cache');
  }
  if (last.model !== now.model) changes.push(`the model changed (${escapeControls(last.model)} → ${escapeControls(now.model)})`);
  return changes.length === 0 ? null : `resumed session ${loaded.id.slice(0, 8)}: ${changes.join('; ')}`;
}

/**
 * Appends a session's records: after each model request of a question (`partial`, so a crash mid-question loses no
 * completed request) and when the question ends. Records are taken when `flush` is called and written in that order.
 */
export class SessionWriter {
  readonly id: string;
  readonly #file: string;
  readonly #root: string;
  #flushed: { count: number; lastLength: number } = { count: 0, lastLength: 0 };
  #headerDue: boolean;
  #writes: Promise<string | null> = Promise.resolve(null);

  constructor(dir: string, root: string, resumed: LoadedSession | null) {
    this.id = resumed?.id ?? randomUUID();
    this.#file = path.join(dir, `${this.id}.jsonl`);
    this.#root = root;
    this.#headerDue = resumed === null;
    if (resumed) this.#flushed = { count: resumed.messages.length, lastLength: resumed.messages.at(-1)?.content.length ?? 0 };
  }

  /** Appends what the conversation gained since the last flush; resolves to an error message instead of throwing. */
  flush(conversation: Conversation, turn: Omit<TurnRecord, 'type' | 'at' | 'base' | 'messages'>): Promise<string | null> {
    const messages = conversation.messages;
    const { count, lastLength } = this.#flushed;
    const lastGrew = count > 0 && messages[count - 1] !== undefined && messages[count - 1]!.content.length !== lastLength;
    const base = Math.min(lastGrew ? count - 1 : count, messages.length);
    const record: TurnRecord = { type: 'turn', at: new Date().toISOString(), base, messages: messages.slice(base), ...turn };
    const first = this.#headerDue;
    const lines = first ? [JSON.stringify(this.#header()), JSON.stringify(record)] : [JSON.stringify(record)];
    this.#headerDue = false;
    this.#flushed = { count: messages.length, lastLength: messages.at(-1)?.content.length ?? 0 };
    this.#writes = this.#writes.then(async (earlier) => {
      try {
        await fs.mkdir(path.dirname(this.#file), { recursive: true, mode: 0o700 });
        if (first) await pruneSessions(path.dirname(this.#file));
        await fs.appendFile(this.#file, `${lines.join('\n')}\n`, { mode: 0o600 });
        return earlier;
      } catch (error) {
        return (
          earlier ??
          `could not save the session to ${this.#file} (${(error as Error).message}); use --no-session-persistence to stop trying`
        );
      }
    });
    return this.#writes;
  }

  #header(): HeaderRecord {
    return { type: 'session', version: 1, session_id: this.id, root: this.#root, created_at: new Date().toISOString() };
  }
}

/** Deletes sessions beyond MAX_SESSIONS_PER_REPO (oldest first) and those older than MAX_SESSION_AGE_DAYS. */
export async function pruneSessions(dir: string, now = Date.now()): Promise<number> {
  const all = await listSessions(dir);
  const cutoff = now - MAX_SESSION_AGE_DAYS * 24 * 3600 * 1000;
  // Room for the session about to be written.
  const doomed = all.filter((s, i) => i >= MAX_SESSIONS_PER_REPO - 1 || s.mtimeMs < cutoff);
  await Promise.all(doomed.map((s) => fs.rm(s.file, { force: true }).catch(() => undefined)));
  return doomed.length;
}

/** A stable hash of what the model sees before the messages (system blocks and tool definitions). */
export function preambleHash(system: unknown, tools: unknown): string {
  return createHash('sha256').update(JSON.stringify({ system, tools })).digest('hex').slice(0, 16);
}

/**
 * The file's records, each checked field by field (session-records.ts). A line that is not JSON is one cut by a crash
 * mid-write and is skipped (everything before it is complete); a record that parses but is not what spelunk writes
 * makes the whole file unusable: DamagedSession, whose message names the session and the fault, never stored text.
 */
async function readRecords(file: string): Promise<Array<HeaderRecord | TurnRecord>> {
  const stat = await fs.stat(file);
  const name = path.basename(file, '.jsonl').slice(0, 8);
  if (stat.size > MAX_SESSION_BYTES) {
    throw new DamagedSession(
      `the saved session ${name} is over ${MAX_SESSION_BYTES / 1024 / 1024} MB; it is not used (start a new session)`,
    );
  }
  const records: Array<HeaderRecord | TurnRecord> = [];
  for (const line of (await fs.readFile(file, 'utf8')).split('\n')) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    const record = checkRecord(value);
    if (isBad(record)) throw new DamagedSession(`the saved session ${name} is damaged or was edited (${record.bad}); it is not used`);
    records.push(record);
  }
  return records;
}

/** `, cited files changed: src/a.ts, src/b.ts` for the path:line files of the answers that differ between the commits. */
async function changedCitations(messages: Message[], root: string, from: string | null, to: string | null): Promise<string> {
  if (!from || !to) return '';
  const cited = new Set<string>();
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const block of message.content) {
      if (block.type !== 'text') continue;
      // The answer's citations by the verifier's own rules (citations/extract.ts), so a resume names what was cited.
      for (const file of citedFiles(block.text)) cited.add(file);
    }
  }
  if (cited.size === 0) return '';
  // Checked object ids (session-records.ts), and after --end-of-options all the same: a revision is never an option.
  const diff = await runGit(root, [
    'diff',
    '--name-only',
    '--no-renames',
    '--end-of-options',
    from,
    to,
    '--',
    ...[...cited].map((f) => `:(literal)${f}`),
  ]);
  if (!diff.ok) return '';
  const changed = diff.stdout.split('\n').filter((l) => l !== '');
  if (changed.length === 0) return ', no cited file changed';
  const more = changed.length > MAX_CITED_SHOWN ? ` and ${changed.length - MAX_CITED_SHOWN} more` : '';
  return `, cited files changed: ${changed.slice(0, MAX_CITED_SHOWN).map((f) => escapeControls(f)).join(', ')}${more}`;
}

function short(head: string | null): string {
  return head ? head.slice(0, 7) : 'none';
}
