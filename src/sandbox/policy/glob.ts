import { promises as fs } from 'node:fs';
import { confineSync } from '../paths.js';
import type { Word } from './lexer.js';

/** Most paths one glob may expand to; beyond it the model is asked to narrow the pattern. */
export const MAX_GLOB_MATCHES = 1000;
/** Most unquoted `*`, `?` and `[` in one word: more says nothing a shorter pattern does not. */
export const MAX_GLOB_WILDCARDS = 32;

export type Expanded = { ok: true; paths: string[]; matched: boolean } | { ok: false; reason: string };

interface Segment {
  text: string;
  glob: readonly boolean[];
}

/**
 * Expands an unquoted glob the way bash does with default options (no dotglob, no nullglob, no globstar), except
 * that no directory outside the root is ever listed. With no match the literal word comes back, as in bash.
 * Results are sorted bytewise, as bash sorts them under LC_ALL=C.
 */
export async function expandGlob(root: string, word: Word): Promise<Expanded> {
  if (!word.glob.some(Boolean)) return { ok: true, paths: [word.text], matched: false };
  const wildcards = word.glob.filter(Boolean).length;
  if (wildcards > MAX_GLOB_WILDCARDS) {
    return { ok: false, reason: `the glob ${word.text} has ${wildcards} wildcard characters; at most ${MAX_GLOB_WILDCARDS} are expanded — use a shorter pattern, or search with rg -g` };
  }
  const segments = split(word);
  const absolute = word.text.startsWith('/');
  let candidates: string[] = [absolute ? '/' : ''];
  for (const segment of segments) {
    if (!segment.glob.some(Boolean)) {
      candidates = candidates.map((c) => join(c, segment.text));
      continue;
    }
    const next: string[] = [];
    for (const candidate of candidates) {
      const listed = await listInside(root, candidate, word.text);
      if (typeof listed === 'string') return { ok: false, reason: listed };
      const tokens = compile(segment);
      const dotOk = segment.text.startsWith('.');
      for (const name of listed) {
        if (name.startsWith('.') && !dotOk) continue;
        if (globMatch(tokens, name)) next.push(join(candidate, name));
      }
      if (next.length > MAX_GLOB_MATCHES) return tooMany(word.text);
    }
    candidates = next;
  }
  const existing = candidates.filter((candidate) => matches(root, candidate));
  if (existing.length === 0) return { ok: true, paths: [word.text], matched: false };
  existing.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  // Names that look like flags (`--pre=sh`, `+5f`) get their `./` where every path is handed over (policy.ts).
  return { ok: true, paths: existing, matched: true };
}

function split(word: Word): Segment[] {
  const { text, glob } = word;
  const segments: Segment[] = [];
  let start = text.startsWith('/') ? 1 : 0;
  for (let i = start; i <= text.length; i += 1) {
    if (i < text.length && text[i] !== '/') continue;
    segments.push({ text: text.slice(start, i), glob: glob.slice(start, i) });
    start = i + 1;
  }
  return segments;
}

// `a//b` joins as `a/b`: an empty name only adds the slash, once; a trailing one keeps `src/*/` to directories, as in bash.
function join(base: string, name: string): string {
  if (base === '') return name;
  return base.endsWith('/') ? base + name : `${base}/${name}`;
}

/**
 * Lists a directory only after confine() has walked it inside the root: names outside are never revealed, and a
 * directory outside is refused without asking whether it exists (realpath on it would tell `/etc/*` from
 * `/no-such-dir/*`, and a link to /etc from a dangling one).
 */
async function listInside(root: string, dir: string, pattern: string): Promise<string[] | string> {
  // Stryker disable next-line ObjectLiteral,BooleanLiteral: a missing directory lists nothing whether confine says exists: false or refuses it
  const confined = confineSync(root, dir, { mustExist: false });
  if (!confined.ok && confined.outside) return `the glob ${pattern} reaches outside the repository root; globs are expanded inside it only`;
  // Stryker disable next-line LogicalOperator: readdir of a missing directory throws too, and the catch below lists nothing
  if (!confined.ok || !confined.exists) return [];
  try {
    return await fs.readdir(confined.abs);
  } catch {
    return [];
  }
}

/**
 * Whether a candidate path is a match. One that leaves the root counts as a match whether or not it exists (the
 * caller skips or refuses it), so a literal part after a glob (passwd after links/e*) never tells what exists
 * outside. Inside, it must exist; confine refuses a file followed by a slash, so a glob ending in a slash matches
 * directories only, as in bash.
 */
function matches(root: string, candidate: string): boolean {
  // Stryker disable next-line ObjectLiteral,BooleanLiteral: a missing candidate is no match whether confine says exists: false or refuses it (outside stays unset)
  const confined = confineSync(root, candidate, { mustExist: false });
  return confined.ok ? confined.exists : confined.outside === true;
}

type Token =
  | { kind: 'star' }
  | { kind: 'one' }
  | { kind: 'char'; ch: string }
  | { kind: 'class'; negate: boolean; chars: Set<string>; ranges: Array<[number, number]> };

/** Bash pattern → tokens for one path segment: `*`, `?` and `[...]` only where unquoted; anything else literal. */
function compile(segment: Segment): Token[] {
  const tokens: Token[] = [];
  const chars = [...segment.text];
  // The glob mask is per UTF-16 unit; walk code points and keep the unit index beside them.
  let unit = 0;
  for (let i = 0; i < chars.length; i += 1) {
    const c = chars[i] as string;
    const special = segment.glob[unit] === true;
    unit += c.length;
    if (!special) tokens.push({ kind: 'char', ch: c });
    else if (c === '*') {
      if (tokens.at(-1)?.kind !== 'star') tokens.push({ kind: 'star' });
    } else if (c === '?') tokens.push({ kind: 'one' });
    else {
      const parsed = parseClass(chars, i);
      if (parsed === null) {
        tokens.push({ kind: 'char', ch: c });
        continue;
      }
      tokens.push(parsed.token);
      for (let k = i + 1; k <= parsed.end; k += 1) unit += (chars[k] as string).length;
      i = parsed.end;
    }
  }
  return tokens;
}

/** `[...]` starting at `open`: `!`/`^` negates, a leading `]` is literal, `a-z` is a range; null when unclosed. */
function parseClass(chars: readonly string[], open: number): { token: Token; end: number } | null {
  let i = open + 1;
  const negate = chars[i] === '!' || chars[i] === '^';
  if (negate) i += 1;
  const first = i;
  const set = new Set<string>();
  // Stryker disable next-line ArrayDeclaration: a seeded entry that is no pair of numbers compares false with every code point
  const ranges: Array<[number, number]> = [];
  for (; i < chars.length; i += 1) {
    const c = chars[i] as string;
    if (c === ']' && i > first) return { token: { kind: 'class', negate, chars: set, ranges }, end: i };
    const to = chars[i + 2];
    if (chars[i + 1] === '-' && to !== undefined && to !== ']') {
      ranges.push([c.codePointAt(0) as number, to.codePointAt(0) as number]);
      i += 2;
      continue;
    }
    set.add(c);
  }
  return null;
}

function matchesOne(token: Exclude<Token, { kind: 'star' }>, ch: string): boolean {
  if (token.kind === 'one') return true;
  if (token.kind === 'char') return token.ch === ch;
  const code = ch.codePointAt(0) as number;
  const inside = token.chars.has(ch) || token.ranges.some(([lo, hi]) => lo <= code && code <= hi);
  return inside !== token.negate;
}

/**
 * Whether `name` matches the tokens. Linear in practice and O(pattern × name) at worst: on a mismatch only the most
 * recent `*` is retried one character further (a later star subsumes every earlier one), so no pattern can make it
 * backtrack exponentially the way a RegExp built from `[^/]*` runs did (`ls ****…Z` took 27-100 s per name).
 */
export function globMatch(tokens: readonly Token[], name: string): boolean {
  const text = [...name];
  let p = 0;
  let n = 0;
  let starAt = -1;
  let resumeAt = 0;
  while (n < text.length) {
    const token = tokens[p];
    if (token !== undefined && token.kind === 'star') {
      starAt = p;
      p += 1;
      resumeAt = n;
      continue;
    }
    if (token !== undefined && matchesOne(token, text[n] as string)) {
      p += 1;
      n += 1;
      continue;
    }
    if (starAt < 0) return false;
    p = starAt + 1;
    resumeAt += 1;
    n = resumeAt;
  }
  while (tokens[p]?.kind === 'star') p += 1;
  return p === tokens.length;
}

/** Compiles one segment of a glob word (exported for the matcher's tests). */
export function compileSegment(text: string, glob: readonly boolean[] = Array.from({ length: text.length }, () => true)): Token[] {
  return compile({ text, glob });
}

function tooMany(pattern: string): Expanded {
  return { ok: false, reason: `the glob ${pattern} matches more than ${MAX_GLOB_MATCHES} paths; narrow it, or search the directory with rg / find` };
}
