import { lex } from '../sandbox/policy/lexer.js';

/**
 * The filters a pipeline's later stages ask for, applied by spelunk to the first command's output (no program runs):
 * head, tail, wc -l/-c/-w, sort (-r -u -n), uniq (-c), cut -d C -f LIST, grep with a plain pattern (-i -v -c -n -E -F),
 * cat, less and more. Each is exact for what it accepts; anything else is not a filter and the caller says so.
 */

export type Filter =
  | { kind: 'head'; lines: number }
  | { kind: 'tail'; lines: number; from?: number }
  | { kind: 'wc'; count: 'l' | 'c' | 'w' }
  | { kind: 'sort'; reverse: boolean; unique: boolean; numeric: boolean }
  | { kind: 'uniq'; count: boolean }
  | { kind: 'cut'; delimiter: string; fields: Array<[number, number]> }
  | { kind: 'grep'; test: (line: string) => boolean; invert: boolean; count: boolean; numbers: boolean }
  | { kind: 'identity' };

/** The filter a stage stands for, or why it is not one (the stage is then not applied). */
export function parseFilter(stage: string): { ok: true; filter: Filter } | { ok: false; reason: string } {
  const lexed = lex(stage);
  if (!lexed.ok) return { ok: false, reason: lexed.reason };
  const [program, ...args] = lexed.words.map((w) => w.text);
  const filter = program === undefined ? null : FILTERS[program]?.(args) ?? null;
  if (filter !== null) return { ok: true, filter };
  return { ok: false, reason: `${program ?? 'the stage'} ${args.join(' ')}`.trim() };
}

const FILTERS: Readonly<Record<string, (args: string[]) => Filter | null>> = {
  head: (args) => count(args, (lines) => ({ kind: 'head', lines })),
  tail: (args) => {
    const plus = args.length === 2 && args[0] === '-n' && /^\+\d+$/.test(args[1] as string) ? Number((args[1] as string).slice(1)) : null;
    return plus !== null ? { kind: 'tail', lines: Infinity, from: plus } : count(args, (lines) => ({ kind: 'tail', lines }));
  },
  wc: (args) =>
    args.length === 1 && /^-[lcw]$/.test(args[0] as string) ? { kind: 'wc', count: (args[0] as string)[1] as 'l' | 'c' | 'w' } : null,
  sort: (args) => {
    const letters = args.join('').replaceAll('-', '');
    // -nu compares numbers only, which byte order does not reproduce: not a filter.
    if (!args.every((a) => /^-[run]+$/.test(a)) || (letters.includes('n') && letters.includes('u'))) return null;
    return { kind: 'sort', reverse: letters.includes('r'), unique: letters.includes('u'), numeric: letters.includes('n') };
  },
  uniq: (args) =>
    args.length === 0 ? { kind: 'uniq', count: false } : args.length === 1 && args[0] === '-c' ? { kind: 'uniq', count: true } : null,
  cut: cutFilter,
  grep: grepFilter,
  cat: (args) => (args.length === 0 ? { kind: 'identity' } : null),
  less: (args) => (args.length === 0 ? { kind: 'identity' } : null),
  more: (args) => (args.length === 0 ? { kind: 'identity' } : null),
};

/** `-n N`, `-nN`, `-N`, `--lines=N` or nothing (10). */
function count(args: readonly string[], make: (n: number) => Filter): Filter | null {
  if (args.length === 0) return make(10);
  const joined = args.join(' ');
  const match = /^(?:-n ?|--lines=|-)(\d{1,9})$/.exec(joined);
  return match === null ? null : make(Number(match[1]));
}

function cutFilter(args: readonly string[]): Filter | null {
  let delimiter = '\t';
  let list: string | null = null;
  for (let i = 0; i < args.length; i += 1) {
    const a = args[i] as string;
    const value = (flag: string): string | null => (a === flag ? (args[++i] ?? null) : a.startsWith(flag) ? a.slice(flag.length) : null);
    const d = value('-d');
    const f = d === null ? value('-f') : null;
    if (d !== null && d.length === 1) delimiter = d;
    else if (f !== null) list = f;
    else return null;
  }
  if (list === null || !/^\d+(?:-\d*)?(?:,\d+(?:-\d*)?)*$/.test(list)) return null;
  const fields = list.split(',').map((part): [number, number] => {
    const [from, to] = part.split('-');
    return [Number(from), to === undefined ? Number(from) : to === '' ? Infinity : Number(to)];
  });
  return { kind: 'cut', delimiter, fields };
}

/**
 * grep with a pattern spelunk can match in linear time, without a regex engine (a backtracking regex on a 10 MB
 * output would run in spelunk's own process, beyond any child's time limit): literal text, `.` for any character,
 * `.*` gaps, `^` and `$` at the ends, and with -E top-level `|` alternatives. Anything else is not a filter.
 */
function grepFilter(args: readonly string[]): Filter | null {
  const flags = new Set<string>();
  const operands: string[] = [];
  for (const a of args) {
    if (/^-[ivcnEF]+$/.test(a)) for (const ch of a.slice(1)) flags.add(ch);
    else if (a.startsWith('-')) return null;
    else operands.push(a);
  }
  const pattern = operands[0];
  if (operands.length !== 1 || pattern === undefined || pattern === '') return null;
  const fold = flags.has('i');
  const alternatives = flags.has('F') ? [{ start: false, end: false, segments: [pattern] }] : compile(pattern, flags.has('E'));
  if (alternatives === null) return null;
  const prepared = alternatives.map((alt) => ({ ...alt, segments: alt.segments.map((seg) => (fold ? seg.toLowerCase() : seg)) }));
  const literal = flags.has('F');
  const test = (line: string): boolean => prepared.some((alt) => matches(fold ? line.toLowerCase() : line, alt, literal));
  return { kind: 'grep', test, invert: flags.has('v'), count: flags.has('c'), numbers: flags.has('n') };
}

/** A pattern alternative: literal segments (`.` is any character unless literal) separated by `.*` gaps. */
interface Alternative {
  start: boolean;
  end: boolean;
  segments: string[];
}

/** The character standing for "any character" inside a segment (the pattern's `.`); a literal `.` stays `.`. */
const ANY = '\u0000';

function compile(pattern: string, extended: boolean): Alternative[] | null {
  const parts = extended ? pattern.split('|') : [pattern];
  const out: Alternative[] = [];
  for (const part of parts) {
    const alt: Alternative = { start: false, end: false, segments: [''] };
    for (let i = 0; i < part.length; i += 1) {
      const c = part[i] as string;
      const last = alt.segments.length - 1;
      if (c === '^' && i === 0) alt.start = true;
      else if (c === '$' && i === part.length - 1) alt.end = true;
      else if (c === '.' && part[i + 1] === '*') {
        alt.segments.push('');
        i += 1;
      } else if (c === '.') alt.segments[last] += ANY;
      else if (c === '\\' && /[.*[\]^$\\/|+?(){}]/.test(part[i + 1] ?? '')) alt.segments[last] += part[++i] as string;
      else if (/[A-Za-z0-9_ \-/:=,@#%'"!<>~&;]/.test(c) || c.charCodeAt(0) > 127) alt.segments[last] += c;
      else if (!extended && '|+?(){}'.includes(c)) alt.segments[last] += c;
      else return null;
    }
    if (alt.segments.some((seg) => seg.includes(ANY) && seg.length > 64)) return null;
    out.push(alt);
  }
  return out;
}

/** Leftmost matching of each segment in turn: exact for literal segments separated by `.*`. */
function matches(line: string, alt: Alternative, literal: boolean): boolean {
  const segs = alt.segments;
  let at = 0;
  for (let k = 0; k < segs.length; k += 1) {
    const seg = segs[k] as string;
    const lastSeg = k === segs.length - 1;
    if (lastSeg && alt.end) {
      const from = line.length - seg.length;
      if (from < at || (k === 0 && alt.start && from !== 0)) return false;
      return segmentAt(line, seg, from, literal);
    }
    const found = k === 0 && alt.start ? (segmentAt(line, seg, 0, literal) ? 0 : -1) : find(line, seg, at, literal);
    if (found < 0) return false;
    at = found + seg.length;
  }
  return true;
}

function find(line: string, seg: string, from: number, literal: boolean): number {
  if (literal || !seg.includes(ANY)) return line.indexOf(seg, from);
  for (let i = from; i + seg.length <= line.length; i += 1) if (segmentAt(line, seg, i, literal)) return i;
  return -1;
}

function segmentAt(line: string, seg: string, at: number, literal: boolean): boolean {
  if (at < 0 || at + seg.length > line.length) return false;
  for (let j = 0; j < seg.length; j += 1) {
    const c = seg[j] as string;
    if (c !== line[at + j] && (literal || c !== ANY)) return false;
  }
  return true;
}

/** Applies the filters in order to a program's output text. */
export function applyFilters(text: string, filters: readonly Filter[]): string {
  let lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
  for (const filter of filters) {
    lines = applyOne(lines, filter);
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

function applyOne(lines: string[], filter: Filter): string[] {
  switch (filter.kind) {
    case 'head':
      return lines.slice(0, filter.lines);
    case 'tail':
      return filter.from !== undefined ? lines.slice(filter.from - 1) : filter.lines === 0 ? [] : lines.slice(-filter.lines);
    case 'wc': {
      const joined = lines.length === 0 ? '' : `${lines.join('\n')}\n`;
      const n =
        filter.count === 'l' ? lines.length : filter.count === 'c' ? Buffer.byteLength(joined) : joined.split(/\s+/).filter(Boolean).length;
      return [String(n)];
    }
    case 'sort':
      return sortLines(lines, filter);
    case 'uniq':
      return uniq(lines, filter.count);
    case 'cut':
      return lines.map((line) => cutLine(line, filter));
    case 'grep': {
      const kept = lines.flatMap((line, i) => (filter.test(line) !== filter.invert ? [filter.numbers ? `${i + 1}:${line}` : line] : []));
      return filter.count ? [String(kept.length)] : kept;
    }
    case 'identity':
      return lines;
  }
}

/** Byte order (LC_ALL=C.UTF-8), -n by the leading number with byte order to break ties, as GNU sort does. */
function sortLines(lines: readonly string[], filter: Extract<Filter, { kind: 'sort' }>): string[] {
  const number = (line: string): number => Number(/^\s*(-?\d*\.?\d+)/.exec(line)?.[1] ?? 0);
  const compare = (a: string, b: string): number =>
    (filter.numeric ? number(a) - number(b) : 0) || Buffer.compare(Buffer.from(a), Buffer.from(b));
  const sorted = [...lines].sort((a, b) => (filter.reverse ? compare(b, a) : compare(a, b)));
  return filter.unique ? sorted.filter((line, i) => i === 0 || compare(sorted[i - 1] as string, line) !== 0) : sorted;
}

function uniq(lines: readonly string[], counted: boolean): string[] {
  const out: Array<[string, number]> = [];
  for (const line of lines) {
    const last = out.at(-1);
    if (last !== undefined && last[0] === line) last[1] += 1;
    else out.push([line, 1]);
  }
  return out.map(([line, n]) => (counted ? `${String(n).padStart(7)} ${line}` : line));
}

function cutLine(line: string, filter: Extract<Filter, { kind: 'cut' }>): string {
  if (!line.includes(filter.delimiter)) return line;
  const parts = line.split(filter.delimiter);
  return parts.filter((_, i) => filter.fields.some(([from, to]) => i + 1 >= from && i + 1 <= to)).join(filter.delimiter);
}
