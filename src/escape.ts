/**
 * Characters never shown raw, on a terminal or in a prompt: every control (C0 and C1: ESC starts every terminal escape
 * sequence; a newline in a file name would forge a line; DEL), every format character (Unicode's Cf: the bidi
 * controls and marks, U+061C among them, zero-width characters, the soft hyphen, BOM, the interlinear annotation
 * marks, the tag characters U+E0000-E007F), every default-ignorable code point (characters a terminal draws as
 * nothing: fillers, variation selectors, the unassigned U+2065, U+FFF0-FFF8, U+E0080-E0FFF), and the line and
 * paragraph separators. Taken from Unicode's own properties rather than a list of ranges, so a class is covered
 * whole. The one escaping policy of the program: model text, tool output, file names and commands all pass through
 * here before a person or a prompt sees them.
 *
 * ZWJ (U+200D) stays escaped although emoji sequences use it: joined emoji render as their parts with `\u200d` between,
 * and a joiner cannot hide text. One exception, see SELECTORS: a lone variation selector after a visible character.
 */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}]/gu;
/**
 * U+FE00-FE0F choose a glyph's presentation (U+FE0F asks for the emoji one: ⚠️, ❤️); models write them in answers. One
 * directly after a visible character is shown raw. A selector at the start, after another invisible character, or in
 * a run (hidden data is smuggled as runs of selectors, here or in U+E0100-E01EF, which is always escaped) is escaped.
 */
const SELECTORS = /^[\ufe00-\ufe0f\u{e0100}-\u{e01ef}]$/u;
const SINGLE_UNSAFE = new RegExp(`^${UNSAFE.source}$`, 'u');
const NAMED = new Map([['\n', '\\n'], ['\t', '\\t'], ['\r', '\\r']]);

/** `s` with every unsafe character except those in `keep` shown as a visible escape: `\n`, `\x1b`, `\u202e`, `\u{e0041}`. */
export function escapeControls(s: string, keep = ''): string {
  return s.replace(UNSAFE, (c: string, offset: number) => {
    if (keep.includes(c) || (c.length === 1 && c >= '\ufe00' && c <= '\ufe0f' && selectorShown(s, offset))) return c;
    const code = c.codePointAt(0)!;
    if (code > 0xffff) return `\\u{${code.toString(16)}}`;
    return NAMED.get(c) ?? (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
  });
}

/**
 * Text that must stay on one line (a label, a path, a title, a quoted line): newlines become `↵`, tabs spaces, every
 * other unsafe character a visible escape. The one such helper: terminal lines, the prompt and the citation details
 * all use it, so a newline in a file name reads the same everywhere.
 */
export function oneLine(s: string): string {
  return escapeControls(s.replace(/\r?\n/g, '↵').replace(/\t/g, ' '));
}

/** True for the selector at `offset` when it follows a visible character and no other selector follows it. */
function selectorShown(s: string, offset: number): boolean {
  if (offset === 0) return false;
  const pair = offset >= 2 && /^[\ud800-\udbff][\udc00-\udfff]$/.test(s.slice(offset - 2, offset));
  const before = String.fromCodePoint(s.codePointAt(pair ? offset - 2 : offset - 1)!);
  if (SINGLE_UNSAFE.test(before)) return false;
  const next = s.codePointAt(offset + 1);
  return next === undefined || !SELECTORS.test(String.fromCodePoint(next));
}
