import { escapeControls } from '../escape.js';
import { compareUtf8 } from './tree.js';

/** Members a stem needs before its names are written `stem{a,b,…}` rather than one by one. */
const STEM_MIN = 3;

/** The part of a name up to and including its first `.`, `-` or `_` (not at the start), or '' without one. */
export function stemOf(name: string): string {
  for (let i = 1; i < name.length; i++) {
    const c = name[i];
    if (c === '.' || c === '-' || c === '_') return name.slice(0, i + 1);
  }
  return '';
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
