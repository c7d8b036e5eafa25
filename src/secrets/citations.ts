import type { Redactor } from './redactor.js';

/**
 * Citations with their excerpts redacted: an excerpt is the cited line as read from the file, shown in the Sources
 * block, written to the json result and quoted to the model in the fix turn, so "a GitHub token at `.env:3`" is
 * checked without its line leaving.
 */
export async function redactExcerpts<T extends { path: string; start_line: number | null; excerpt: string | null }>(
  citations: readonly T[],
  redactor: Redactor,
): Promise<T[]> {
  if (!redactor.enabled) return [...citations];
  return Promise.all(
    citations.map(async (c) => {
      if (c.excerpt === null) return c;
      const { text } = await redactor.redact(c.excerpt, { kind: 'text', path: c.path, firstLine: c.start_line ?? 1 });
      return text === c.excerpt ? c : { ...c, excerpt: text };
    }),
  );
}
