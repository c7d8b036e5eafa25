/**
 * Characters never shown raw, on a terminal or in a prompt: C0 and C1 controls (ESC starts every terminal escape
 * sequence; a newline in a file name would forge a line), DEL, and the invisible or reordering ones (zero-width
 * characters, line and paragraph separators, bidi controls, BOM). The one escaping policy of the program: model text,
 * tool output, file names and commands all pass through here before a person or a prompt sees them.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g;
const NAMED = new Map([['\n', '\\n'], ['\t', '\\t'], ['\r', '\\r']]);

/** `s` with every unsafe character except those in `keep` shown as a visible escape: `\n`, `\x1b`, `\u202e`. */
export function escapeControls(s: string, keep = ''): string {
  return s.replace(UNSAFE, (c) => {
    if (keep.includes(c)) return c;
    const code = c.charCodeAt(0);
    return NAMED.get(c) ?? (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
  });
}
