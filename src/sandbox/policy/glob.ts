import { promises as fs } from 'node:fs';
import path from 'node:path';
import { isInside } from '../paths.js';
import type { Word } from './lexer.js';

/** Most paths one glob may expand to; beyond it the model is asked to narrow the pattern. */
export const MAX_GLOB_MATCHES = 1000;

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
      const matcher = toRegExp(segment);
      if (matcher === null) return { ok: false, reason: `the glob ${word.text} is not a valid pattern; quote it if it is not meant as a glob` };
      const dotOk = segment.text.startsWith('.');
      for (const name of listed) {
        if (name.startsWith('.') && !dotOk) continue;
        if (matcher.test(name)) next.push(join(candidate, name));
      }
      if (next.length > MAX_GLOB_MATCHES) return tooMany(word.text);
    }
    candidates = next;
  }
  const existing: string[] = [];
  for (const candidate of candidates) {
    // path.join keeps a trailing slash, so `*/` only matches directories, as in bash.
    if (await exists(path.isAbsolute(candidate) ? candidate : path.join(root, candidate))) existing.push(candidate);
  }
  if (existing.length === 0) return { ok: true, paths: [word.text], matched: false };
  existing.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  // A file named `--pre=sh` or `+5f` must stay a file name: expanded names never start with - or +.
  return { ok: true, paths: existing.map((p) => (p.startsWith('-') || p.startsWith('+') ? `./${p}` : p)), matched: true };
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
  // `a//b` is `a/b`; a trailing empty segment stays, so `src/*/` matches directories only, as in bash.
  return segments.filter((s, k) => s.text !== '' || k === segments.length - 1);
}

function join(base: string, name: string): string {
  if (base === '') return name;
  return base.endsWith('/') ? base + name : `${base}/${name}`;
}

/** Lists a directory only after its real path is confirmed inside the root: names outside are never revealed. */
async function listInside(root: string, dir: string, pattern: string): Promise<string[] | string> {
  const abs = path.resolve(root, dir === '' ? '.' : dir);
  let real: string;
  try {
    real = await fs.realpath(abs);
  } catch {
    return [];
  }
  if (!isInside(root, real)) return `the glob ${pattern} reaches outside the repository root; globs are expanded inside it only`;
  try {
    return await fs.readdir(real);
  } catch {
    return [];
  }
}

async function exists(abs: string): Promise<boolean> {
  try {
    await fs.lstat(abs);
    return true;
  } catch {
    return false;
  }
}

/** Bash pattern → RegExp for one path segment: `*`, `?` and `[...]` only where unquoted. */
function toRegExp(segment: Segment): RegExp | null {
  let source = '';
  const { text, glob } = segment;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i] as string;
    if (!glob[i]) {
      source += escape(c);
      continue;
    }
    if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else {
      const close = bracketEnd(text, i);
      if (close < 0) {
        source += escape(c);
        continue;
      }
      source += bracket(text.slice(i + 1, close));
      i = close;
    }
  }
  try {
    return new RegExp(`^${source}$`, 'su');
  } catch {
    return null;
  }
}

function bracketEnd(text: string, open: number): number {
  let i = open + 1;
  if (text[i] === '!' || text[i] === '^') i += 1;
  if (text[i] === ']') i += 1;
  const close = text.indexOf(']', i);
  return close;
}

function bracket(body: string): string {
  const negate = body.startsWith('!') || body.startsWith('^');
  const chars = negate ? body.slice(1) : body;
  let out = '';
  for (let i = 0; i < chars.length; i += 1) {
    const c = chars[i] as string;
    if (c === '-') out += i > 0 && i < chars.length - 1 ? '-' : '\\-';
    else out += escape(c);
  }
  return `[${negate ? '^' : ''}${out}]`;
}

function escape(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}

function tooMany(pattern: string): Expanded {
  return { ok: false, reason: `the glob ${pattern} matches more than ${MAX_GLOB_MATCHES} paths; narrow it, or search the directory with rg / find` };
}
