import { randomUUID } from 'node:crypto';
import type { Config } from '../config.js';
import { gitCommitIfKnown } from '../sandbox/readonly.js';
import { formatSessionList } from './session-list.js';
import {
  DamagedSession,
  findSession,
  loadSession,
  preambleHash,
  resumeNotice,
  sessionsDir,
  SessionWriter,
  type LoadedSession,
} from './saved.js';
import type { Session } from './session.js';
import { stateHome } from '../state-home.js';
import type { EventSink } from './ask.js';

/**
 * HEAD for the resume notice: only informative (a HEAD not read is not compared), so it gets the smallest share of a
 * run's 2 s of git (see HEAD_TIMEOUT_MS in sandbox/readonly.ts); config.headTimeoutMs replaces it (tests). The save
 * asks git nothing: it records the HEAD the read-only proof read at the end of the question.
 */
const SESSION_HEAD_TIMEOUT_MS = 200;

/** A run's link to its saved session: the id the JSON output carries, and where completed questions are appended. */
export interface SavedLink {
  id: string;
  dir: string | null;
  writer: SessionWriter | null;
  /** The one line to show on resume (HEAD or the preamble changed), or null. */
  notice: string | null;
  /** Why nothing is saved although it should be (no absolute state directory, or it is inside the repository). */
  warning: string | null;
}

/** Continues the session config.session.resume names (into session.conversation), and prepares the writer. */
export async function linkSaved(config: Config, env: Readonly<Record<string, string | undefined>>, session: Session): Promise<SavedLink> {
  const dir = sessionsDir(env, config.root);
  const warning = config.session.persist && dir === null ? unsavedReason(env) : null;
  if (config.session.resume === null) return { ...newSession(config, dir), dir, warning };
  const found = await findSession(dir, config.session.resume, config.root);
  const loaded = await loadSession(found).catch((error: unknown) => {
    if (error instanceof DamagedSession) return error;
    throw error;
  });
  // A damaged or edited file is said in one line and not used: the run goes on as a new session.
  if (loaded instanceof DamagedSession) {
    return { ...newSession(config, dir), dir, warning: [loaded.message, warning].filter(Boolean).join('; ') };
  }
  return { ...(await switchTo(loaded, config, session, dir)), warning };
}

function unsavedReason(env: Readonly<Record<string, string | undefined>>): string {
  return stateHome(env) === null
    ? 'sessions are not saved: neither $XDG_STATE_HOME nor $HOME is an absolute path'
    : 'sessions are not saved: the state directory ($XDG_STATE_HOME or ~/.local/state) is inside the repository';
}

/** Replaces the conversation with `loaded` and returns the link that appends to it. */
export async function switchTo(
  loaded: LoadedSession,
  config: Config,
  session: Session,
  dir: string | null,
): Promise<Omit<SavedLink, 'warning'>> {
  session.conversation.clear();
  session.conversation.messages.push(...loaded.messages);
  session.conversation.cacheWatch.seed(loaded.last?.cache ?? null);
  const notice = await resumeNotice(loaded, {
    root: config.root,
    head: await gitCommitIfKnown(config.root, config.headTimeoutMs ?? SESSION_HEAD_TIMEOUT_MS),
    preambleHash: hashOf(session),
    model: config.model,
  });
  const writer = config.session.persist && dir ? new SessionWriter(dir, config.root, loaded) : null;
  return { id: loaded.id, dir, writer, notice };
}

/**
 * Saves the question so far after each model request that ran tools (at the next request's start the conversation
 * holds that request's answer and the tool results, and ends on a user message, so it can be continued).
 */
export function stepSaver(link: SavedLink, session: Session, config: Config, question: string): EventSink {
  return {
    handle(event) {
      if (event.type !== 'request_start' || event.turn < 2 || !link.writer) return;
      void link.writer.flush(session.conversation, {
        question,
        model: config.model,
        head: null,
        preamble_hash: hashOf(session),
        cost_usd: 0,
        partial: true,
      });
    },
  };
}

/**
 * Appends the question just completed, with `head` as the read-only proof read it at the end (a HEAD git gave up on,
 * or that was never read, is saved as none, which a resume does not compare); returns a warning instead of throwing.
 */
export async function saveQuestion(
  link: SavedLink,
  session: Session,
  config: Config,
  ended: { question: string; costUsd: number | null; head: string | null | undefined },
): Promise<string | null> {
  if (!link.writer) return null;
  return link.writer.flush(session.conversation, {
    question: ended.question,
    model: config.model,
    head: ended.head ?? null,
    preamble_hash: hashOf(session),
    cost_usd: ended.costUsd,
    cache: session.conversation.cacheWatch.state(),
  });
}

function hashOf(session: Session): string {
  return preambleHash(session.system, session.registry.definitions());
}

/** `/resume` without an argument: the repository's recent sessions (time, first question, cost), newest first. */
export function renderSessionList(dir: string | null, currentId: string): Promise<string> {
  return formatSessionList(dir, currentId, '/resume <id> continues one (a prefix is enough); * is this session');
}

/** A fresh saved session in `dir` (after /clear). */
export function newSession(config: Config, dir: string | null): Pick<SavedLink, 'id' | 'writer' | 'notice'> {
  const writer = config.session.persist && dir ? new SessionWriter(dir, config.root, null) : null;
  return { id: writer?.id ?? randomUUID(), writer, notice: null };
}
