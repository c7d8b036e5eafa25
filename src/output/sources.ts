import { formatCitation, type VerifiedCitation } from '../citations/verify.js';
import { oneLine } from '../escape.js';
import { createPalette } from './color.js';

export interface SourcesOptions {
  color: boolean;
  /** Columns to fit each line into (the terminal's width). */
  width: number;
  /** The hyperlink-wrapped form of a verified citation's label, or null for plain text. */
  link?: ((c: VerifiedCitation, label: string) => string) | null;
}

/** Fewer columns than this and the excerpt (or a ✗ line's problem) is dropped instead of squeezed. */
const MIN_EXCERPT_COLS = 12;
/** A label is never cut shorter than this (a terminal narrower than that wraps the line instead). */
const MIN_LABEL_COLS = 16;

/**
 * The text-mode "Sources" block for stderr: one line per distinct citation, ✓ with the first cited line or ✗ with
 * what is wrong. Empty for an answer without citations.
 */
export function formatSources(citations: readonly VerifiedCitation[], opts: SourcesOptions): string {
  if (citations.length === 0) return '';
  const p = createPalette(opts.color);
  // Each line fits the width: `  ✓ ` takes four columns; a label longer than the rest is cut, then the words after it.
  const labelRoom = Math.max(MIN_LABEL_COLS, opts.width - 4);
  const lines = citations.map((c) => {
    const label = fit(oneLine(formatCitation(c)), labelRoom);
    if (c.status !== 'ok') {
      const room = opts.width - label.length - 6;
      return room < MIN_EXCERPT_COLS ? `  ${p.red('✗')} ${label}` : `  ${p.red('✗')} ${label}  ${p.red(fit(problem(c), room))}`;
    }
    const shown = opts.link ? opts.link(c, label) : label;
    const room = opts.width - label.length - 6;
    const excerpt = c.excerpt === null || room < MIN_EXCERPT_COLS ? '' : `  ${p.dim(fit(oneLine(c.excerpt), room))}`;
    return `  ${p.green('✓')} ${shown}${excerpt}`;
  });
  return `${p.bold('Sources')}\n${lines.join('\n')}\n`;
}

/** What is wrong with a citation, in words: `line out of range (the file has 200 lines)`. */
function problem(c: VerifiedCitation): string {
  const words = c.status.replace(/_/g, ' ');
  return oneLine(c.detail ? `${words} (${c.detail})` : words);
}

function fit(s: string, cols: number): string {
  const chars = [...s];
  return chars.length <= cols ? s : `${chars.slice(0, cols - 1).join('')}…`;
}
