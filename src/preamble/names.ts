import { escapeControls } from '../escape.js';
import { compareUtf8, stemOf, tailOf } from './tree.js';

/** Members a stem needs before its names are written `stem{a,b,…}` rather than one by one. */
const STEM_MIN = 3;

/** The tail every name ends with (and is longer than), or ''. Linear in the total length. */
function sharedTail(names: readonly string[]): string {
  const tail = names.length < 2 ? '' : tailOf(names[0]!);
  return tail !== '' && names.every((n) => n.length > tail.length && n.endsWith(tail)) ? tail : '';
}

/**
 * The pattern every name follows, from a shared stem and a shared tail (`babel-*`, `*-module`, `x-*.md`), quoted
 * for the map, or null when there is none. Linear in the total length.
 */
export function sharedPattern(names: readonly string[]): string | null {
  if (names.length < 2) return null;
  const first = stemOf(names[0]!);
  const stem = first !== '' && names.every((n) => n.startsWith(first)) ? first : '';
  return patternOf(stem, sharedTail(names), Math.min(...names.map((n) => n.length)));
}

/** `stem*tail` from a shared stem and tail ('' for none) and the shortest name's length, or null. */
export function patternOf(stem: string, tail: string, shortest: number): string | null {
  // A stem and a tail that overlap in some name ("a-b" with stem "a-" and tail "-b") describe nothing: keep the stem.
  const both = tail !== '' && shortest >= stem.length + tail.length;
  if (stem === '' && !both) return null;
  return `${quote(stem)}*${both ? quote(tail) : ''}`;
}

/**
 * Names in brace form like `braceList`, with a tail they all share written once after the braces:
 * `{alpha,beta,gamma}-module`. Linear in the total length times NESTING_MAX.
 */
export function braceListAffix(names: readonly string[]): string {
  const tail = sharedTail(names);
  if (tail === '') return braceList(names);
  // Two or more distinct heads always come back as one brace part ("{a,b}" or "x-{a,b,c}"), so the tail can follow.
  return braceList(names.map((n) => n.slice(0, n.length - tail.length))) + quote(tail);
}

/** Levels of stems factored out (`plugin-{transform-{…}}`): deeper nesting reads worse than it saves. */
const NESTING_MAX = 3;

/**
 * Names in brace form, sorted bytewise, with shared stems factored out: `{babel-{cli,core},eslint,x}`. A newline or
 * other control character in a name is escaped, and `{`, `}` and `,` inside a name are backslash-escaped so a name
 * cannot forge the structure. Linear in the total length times NESTING_MAX.
 */
export function braceList(names: readonly string[]): string {
  const parts = factor([...names].sort(compareUtf8), NESTING_MAX);
  return parts.length === 1 ? parts[0]! : `{${parts.join(',')}}`;
}

/** The sorted names as brace-form parts, members of each stem shared by STEM_MIN or more factored out. */
function factor(sorted: readonly string[], depth: number): string[] {
  const byStem = new Map<string, string[]>();
  for (const name of sorted) {
    const stem = stemOf(name);
    const bucket = byStem.get(stem);
    if (bucket) bucket.push(name);
    else byStem.set(stem, [name]);
  }
  const parts: string[] = [];
  const done = new Set<string>();
  for (const name of sorted) {
    const stem = stemOf(name);
    const bucket = byStem.get(stem)!;
    if (depth === 0 || stem === '' || bucket.length < STEM_MIN) {
      parts.push(quote(name));
      continue;
    }
    if (done.has(stem)) continue;
    done.add(stem);
    const rest = factor(bucket.map((member) => member.slice(stem.length)), depth - 1);
    parts.push(`${quote(stem)}{${rest.join(',')}}`);
  }
  return parts;
}

/** A name as it appears in the map: control characters escaped, brace syntax escaped. */
export function quote(name: string): string {
  return escapeControls(name).replace(/[{},]/g, (c) => `\\${c}`);
}
