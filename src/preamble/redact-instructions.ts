import type { ProjectInstructions } from './agents-md.js';
import type { Redactor } from '../secrets/redactor.js';

/**
 * The instructions files with their secrets left out, before the system prompt is built from them. A file without
 * any candidate is passed through untouched; the scan runs only when there is an instructions file at all.
 */
export async function redactInstructions(loaded: ProjectInstructions, redactor: Redactor): Promise<ProjectInstructions> {
  if (!redactor.enabled) return loaded;
  const own = loaded.text === null || loaded.file === null ? null : (await redactor.redact(loaded.text, { kind: 'text', path: loaded.file })).text;
  const ancestors = loaded.ancestors
    ? await Promise.all(loaded.ancestors.map(async (a) => ({ ...a, text: (await redactor.redact(a.text, { kind: 'text', path: a.path })).text })))
    : undefined;
  return { ...loaded, text: own, ...(ancestors ? { ancestors } : {}) };
}
