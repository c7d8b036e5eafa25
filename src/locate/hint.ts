import { escapeControls } from '../escape.js';
import { locate } from './locate.js';

/** Files the hint names: locate put a gold file in its top five for 71–88% of the change-derived questions. */
const HINT_FILES = 5;
/** The hint waits at most this long for locate; past it the question goes without one. */
const HINT_TIMEOUT_MS = 5_000;

/**
 * The first-turn hint: "likely relevant: a, b, …" from `spelunk locate` (no model), for the end of the first user
 * message, after the system prompt and tools, so the cached prefix stays byte-identical with and without it. Null
 * when locate found nothing or did not finish in time. Never throws.
 */
export async function firstTurnHint(root: string, question: string, signal?: AbortSignal): Promise<string | null> {
  try {
    const result = await locate(root, question, { k: HINT_FILES, timeoutMs: HINT_TIMEOUT_MS, ...(signal ? { signal } : {}) });
    const partial = result.notes.some((n) => n.includes('partial') || n.includes('could not run'));
    if (result.results.length === 0 || partial) return null;
    const paths = result.results.map((r) => escapeControls(r.path)).join(', ');
    return `(spelunk, no model: files likely relevant by a keyword search — read them before relying on them: ${paths})`;
  } catch {
    return null;
  }
}

/** The question with the hint appended as its last paragraph, or the question alone. */
export async function withHint(question: string, root: string, signal?: AbortSignal): Promise<string> {
  const hint = await firstTurnHint(root, question, signal);
  return hint === null ? question : `${question}\n\n${hint}`;
}
