import { parse as shellParse } from 'shell-quote';

/** Longest command accepted, in UTF-8 bytes. */
export const MAX_COMMAND_BYTES = 8 * 1024;
/** Most words (program included) accepted before glob expansion. */
export const MAX_WORDS = 256;

/** One shell word after quote removal; `glob[i]` is true where text[i] is an unquoted `*`, `?` or `[`. */
export interface Word {
  text: string;
  glob: readonly boolean[];
}

type Lexed = { ok: true; words: Word[] } | { ok: false; reason: string };

/** Characters a shell gives meaning to; a look-alike that normalises (NFKC) to one of them is refused. */
const SHELL_SIGNIFICANT = new Set([...'|&;<>()$`\\"\' \t*?[]{}~#=!'.split(''), '\n', '\r']);

/** Operator spellings, longest first, so `&&` is named as `&&` and not as `&`. */
const OPERATORS = ['&>>', '<<<', '<<-', '||', '&&', ';;', ';&', '|&', '>>', '>|', '>&', '<&', '<>', '<<', '<(', '>(', '&>',
  '|', '&', ';', '<', '>', '(', ')'];

/**
 * Splits a command into words the way bash would, refusing everything that would make bash do more than quote
 * removal: operators, expansions of every kind, comments and the character tricks shell-quote does not check.
 * The result is cross-checked against shell-quote (given a marker env so `$…` can never become a secret); any
 * disagreement between the two parsers is refused rather than guessed at.
 */
export function lex(input: string): Lexed {
  const command = input.endsWith('\n') ? input.slice(0, -1) : input;
  const raw = rawReason(command);
  if (raw !== null) return { ok: false, reason: raw };
  const scanned = scan(command);
  if (!scanned.ok) return scanned;
  if (scanned.words.length === 0) {
    return { ok: false, reason: 'the command is empty; give a program and its arguments, e.g. rg -n "pattern" src' };
  }
  if (scanned.words.length > MAX_WORDS) {
    return { ok: false, reason: `the command has ${scanned.words.length} arguments; the limit is ${MAX_WORDS} — search a directory or use a -g glob instead of listing files` };
  }
  const check = crossCheck(escapeDollars(command, scanned.dollars), scanned.words);
  if (check !== null) return { ok: false, reason: check };
  return { ok: true, words: scanned.words };
}

/** Checks on the raw string for things no shell parser reports: control, invisible and look-alike characters. */
function rawReason(command: string): string | null {
  // Stryker disable next-line StringLiteral: Buffer.byteLength reads an empty encoding name as its default, UTF-8
  const bytes = Buffer.byteLength(command, 'utf8');
  if (bytes > MAX_COMMAND_BYTES) {
    return `the command is ${bytes} bytes; the limit is ${MAX_COMMAND_BYTES} — shorten it (search a directory or use a -g glob instead of listing files)`;
  }
  const single = singleQuoted(command);
  let at = 0;
  for (const ch of command) {
    const reason = charReason(ch, single[at] === true);
    if (reason !== null) return reason;
    at += ch.length;
  }
  return null;
}

/** Bidi controls reorder what a person sees (Trojan Source): refused even inside quotes. */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/**
 * Which UTF-16 units lie inside single quotes, where bash gives no character a meaning: there a full-width
 * parenthesis, a no-break space or a zero-width joiner in an emoji is just text to search for.
 */
function singleQuoted(s: string): boolean[] {
  // Stryker disable next-line ArrayDeclaration: index 0 is never inside quotes, and only `true` is read as inside
  const inside: boolean[] = [];
  // Stryker disable next-line StringLiteral: only 'single' and 'double' are compared, so any other start means none
  let mode: 'none' | 'single' | 'double' = 'none';
  for (let i = 0; i < s.length; i += 1) {
    const c = s[i];
    if (mode === 'single') {
      if (c === "'") mode = 'none';
      else inside[i] = true;
      continue;
    }
    if (c === '\\') {
      i += 1;
      continue;
    }
    if (mode === 'double') {
      if (c === '"') mode = 'none';
      continue;
    }
    if (c === "'") mode = 'single';
    else if (c === '"') mode = 'double';
  }
  return inside;
}

function charReason(ch: string, inSingleQuotes: boolean): string | null {
  const code = ch.codePointAt(0) ?? 0;
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  if (ch === '\n') return 'newlines are not supported: send one command per call';
  if (ch === '\r') return 'carriage returns are not supported: send one command per call on a single line';
  if (ch === '\0') return 'the command contains a NUL byte; remove it';
  if (ch === '\t') return null;
  if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return `control character ${hex} is not allowed; use plain printable text`;
  if (code < 0x80) return null;
  if (/\p{Cs}/u.test(ch)) return `unpaired surrogate ${hex} is not allowed; use valid Unicode text`;
  if (BIDI.test(ch)) return `bidi control character ${hex} is not allowed (it reorders what a person sees); retype the command in plain text`;
  if (inSingleQuotes && (/[\p{Cf}\p{Zs}]/u.test(ch) || ch.normalize('NFKC') !== ch)) return null;
  if (/\p{Cf}/u.test(ch)) {
    return `invisible Unicode format character ${hex} (zero-width or bidi control) is not allowed; retype the command in plain text`;
  }
  if (/[\p{Zs}\p{Zl}\p{Zp}]/u.test(ch)) return `non-ASCII whitespace ${hex} is not allowed; separate arguments with plain spaces`;
  const normal = ch.normalize('NFKC');
  if (normal !== ch && [...normal].some((c) => SHELL_SIGNIFICANT.has(c))) {
    return `character ${ch} (${hex}) looks like the shell character "${normal}" and is not allowed; use the ASCII character inside single quotes if you meant it literally`;
  }
  return null;
}

type Scanned = { ok: true; words: Word[]; dollars: number[] } | { ok: false; reason: string };

/** A bash-compatible word splitter that refuses instead of expanding. */
function scan(s: string): Scanned {
  const words: Word[] = [];
  const dollars: number[] = [];
  let text = '';
  let glob: boolean[] = [];
  let inWord = false;
  const push = (chars: string, isGlob: boolean): void => {
    text += chars;
    for (let k = 0; k < chars.length; k += 1) glob.push(isGlob);
    inWord = true;
  };
  let i = 0;
  while (i < s.length) {
    const c = s[i] as string;
    if (c === ' ' || c === '\t') {
      if (inWord) words.push({ text, glob });
      text = '';
      glob = [];
      inWord = false;
      i += 1;
      continue;
    }
    if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end < 0) return { ok: false, reason: 'unbalanced single quote; close every quote' };
      push(s.slice(i + 1, end), false);
      inWord = true;
      i = end + 1;
      continue;
    }
    if (c === '"') {
      const dq = scanDoubleQuoted(s, i + 1, dollars);
      if (!dq.ok) return dq;
      push(dq.text, false);
      inWord = true;
      i = dq.end + 1;
      continue;
    }
    if (c === '\\') {
      if (i + 1 >= s.length) return { ok: false, reason: 'a trailing backslash is not supported; remove it or quote the argument' };
      push(s[i + 1] as string, false);
      i += 2;
      continue;
    }
    const unquoted = unquotedReason(s, i, inWord);
    if (unquoted !== null) return { ok: false, reason: unquoted };
    push(c, c === '*' || c === '?' || c === '[');
    i += 1;
  }
  if (inWord) words.push({ text, glob });
  return { ok: true, words, dollars };
}

/**
 * Characters after which bash keeps a `$` as a literal `$` (no name, digit, special parameter, `{`, `(`, `[`, or
 * quote follows): `"helper$"`, `"a$|b"`. Anything else after `$` would expand and is refused.
 */
const LITERAL_AFTER_DOLLAR = new Set(['"', ' ', '\t', '/', '.', ',', ':', ';', ')', ']', '}', '|', '%', '^', '=', '+', '~']);

/**
 * Reads a double-quoted string starting after its `"`; `$` and backticks still expand there, so they are refused,
 * except a `$` bash keeps literally. Where those are (`dollars`) lets the cross-check tell shell-quote the same.
 */
function scanDoubleQuoted(
  s: string,
  start: number,
  dollars: number[],
): { ok: true; text: string; end: number } | { ok: false; reason: string } {
  let text = '';
  for (let i = start; i < s.length; i += 1) {
    const c = s[i] as string;
    if (c === '"') return { ok: true, text, end: i };
    if (c === '\\') {
      const next = s[i + 1];
      if (next === undefined) break;
      text += next === '$' || next === '"' || next === '\\' || next === '`' ? next : c + next;
      i += 1;
      continue;
    }
    if (c === '$' && LITERAL_AFTER_DOLLAR.has(s[i + 1] ?? '')) {
      dollars.push(i);
      text += c;
      continue;
    }
    if (c === '$') return { ok: false, reason: dollarReason(s, i, true) };
    if (c === '`') {
      return {
        ok: false,
        reason: 'command substitution with backticks is not supported (inside double quotes too); run the inner command separately',
      };
    }
    text += c;
  }
  return { ok: false, reason: 'unbalanced double quote; close every quote' };
}

/** Why an unquoted, unescaped character cannot be passed through, or null when it is an ordinary word character. */
function unquotedReason(s: string, i: number, inWord: boolean): string | null {
  const c = s[i] as string;
  if ('|&;<>()'.includes(c)) return operatorReason(OPERATORS.find((op) => s.startsWith(op, i)) ?? c);
  if (c === '$') return dollarReason(s, i, false);
  if (c === '`') return 'command substitution with backticks is not supported; run the inner command separately';
  if (c === '#') return 'comments (#) are not supported; if # is part of a pattern, put the argument in single quotes';
  if (c === '{' || c === '}') return 'brace expansion ({a,b}) is not supported; quote braces that belong to a pattern, or run one command per alternative';
  if (c === '~' && !inWord) return 'tilde expansion (~) is not supported; paths are relative to the repository root';
  return null;
}

function dollarReason(s: string, i: number, inDoubleQuotes: boolean): string {
  // Stryker disable next-line StringLiteral: the fallback is only compared with ( { [ ' ", which no other string equals either
  const next = s[i + 1] ?? '';
  const where = inDoubleQuotes ? ' (it expands inside double quotes too)' : '';
  const fix = "; put patterns containing $ in single quotes, e.g. rg 'foo$'";
  if (next === '(') return `command substitution $(…) is not supported${where}; run the inner command separately`;
  if (next === '{') return `parameter expansion \${…} is not supported${where}${fix}`;
  if (next === '[') return `arithmetic expansion $[…] is not supported${where}${fix}`;
  if (next === "'") return `ANSI-C quoting $'…' is not supported; type the characters inside single quotes instead`;
  if (next === '"') return `locale quoting $"…" is not supported; use plain single quotes`;
  return `variable expansion ($) is not supported${where}: the environment is not available${fix}`;
}

function operatorReason(op: string): string {
  if (op === '|' || op === '|&') {
    return 'pipes (|) are not supported; run the commands separately and read each output (rg/grep have -c, -l, -m and -o for counting and limiting)';
  }
  if (op === '&') return 'background jobs (&) are not supported; run the command in the foreground';
  if (['||', '&&', ';', ';;', ';&'].includes(op)) return `command chaining (${op}) is not supported; run one command per call`;
  if (op === '<(' || op === '>(') return `process substitution ${op}…) is not supported; run the inner command separately`;
  if (op === '(' || op === ')') {
    return "subshells and grouping with ( ) are not supported; for find's grouping quote the parentheses: find . '(' -name a -o -name b ')'";
  }
  return `redirection (${op}) is not supported: nothing may be written or read from elsewhere, and output comes back to you directly; pass files as arguments`;
}

/** The command with a backslash before each `$` that bash keeps literally: shell-quote reads every `$` as an expansion. */
function escapeDollars(command: string, dollars: readonly number[]): string {
  let out = '';
  let from = 0;
  for (const at of dollars) {
    out += `${command.slice(from, at)}\\`;
    from = at;
  }
  return out + command.slice(from);
}

/** Marker returned for every `$name`, so shell-quote surfaces expansions as objects instead of looking up values. */
const EXPANSION = Object.freeze({ expansion: true });

function crossCheck(command: string, words: readonly Word[]): string | null {
  let entries: ReturnType<typeof shellParse<typeof EXPANSION>>;
  try {
    entries = shellParse(command, () => EXPANSION);
  } catch (error) {
    return `the command could not be parsed (${(error as Error).message}); simplify the quoting, preferring single quotes`;
  }
  const texts: string[] = [];
  for (const entry of entries) {
    if (typeof entry === 'string') texts.push(entry);
    else if ('expansion' in entry) return 'variable expansion ($) is not supported; put patterns containing $ in single quotes';
    else if ('comment' in entry) return 'comments (#) are not supported; put patterns containing # in single quotes';
    else if (entry.op === 'glob') texts.push(entry.pattern);
    else return operatorReason(entry.op);
  }
  // Stryker disable next-line OptionalChaining: the length check before it keeps k within words
  const same = texts.length === words.length && texts.every((t, k) => t === words[k]?.text);
  if (same) return null;
  return 'the command\'s quoting is ambiguous (two shell parsers disagree on its words); simplify it, preferring single quotes around patterns';
}
