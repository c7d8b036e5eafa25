import { escapeControls } from '../escape.js';
import { formatCostUsd } from '../output/usage.js';
import type { Io } from '../io.js';
import { describeSession, listSessions, sessionsDir } from './saved.js';

/** Sessions a listing shows, newest first. */
const SESSIONS_LISTED = 10;
/** Characters of each session's first question a listing shows. */
const QUESTION_CHARS = 60;

/**
 * The rows of a session listing (`id  time  cost  questions  first question`), newest first, then `footer`; `current`
 * marks the session in use with `*`. Session files are untrusted: a question is shown escaped and on one line.
 */
export async function formatSessionList(dir: string | null, current: string | null, footer: string): Promise<string> {
  const all = dir ? await listSessions(dir) : [];
  if (all.length === 0) return 'no saved sessions for this repository yet';
  const rows = await Promise.all(all.slice(0, SESSIONS_LISTED).map((s) => describeSession(s).catch(() => s)));
  const lines = rows.map((s) => {
    const when = new Date(s.mtimeMs).toISOString().slice(0, 16).replace('T', ' ');
    const question = escapeControls(s.firstQuestion.replace(/\s+/g, ' ')).slice(0, QUESTION_CHARS);
    const mark = s.id === current ? '*' : ' ';
    return `${mark} ${s.id.slice(0, 8)}  ${when}  ${formatCostUsd(s.costUsd).padStart(9)}  ${String(s.questions).padStart(3)} q  ${question}`;
  });
  return `${lines.join('\n')}\n${footer}`;
}

/** `spelunk --resume` with no id: the recent sessions of the repository at `root` (real, from roots.ts), on stdout. */
export async function sessionListing(root: string, io: Pick<Io, 'cwd' | 'env'>): Promise<string> {
  const flag = continueFlags(root, io.cwd);
  const list = await formatSessionList(
    sessionsDir(io.env, root),
    null,
    `spelunk${flag} --resume <id> "question" continues one (a prefix of the id is enough); spelunk${flag} -c the latest`,
  );
  return `${list}\n`;
}

/**
 * The one line that says how to go on with a saved session (`continue: spelunk -c "…"`), naming the root when it is
 * not the directory the user is in, since sessions are kept per repository root.
 */
export function continueLine(root: string, cwd: string, id: string): string {
  const flag = continueFlags(root, cwd);
  return `continue: spelunk${flag} -c "…" (or spelunk${flag} --resume ${id.slice(0, 8)} "…")`;
}

function continueFlags(root: string, cwd: string): string {
  return root === cwd ? '' : ` -C ${/^[\w./-]+$/.test(root) ? root : JSON.stringify(root)}`;
}
