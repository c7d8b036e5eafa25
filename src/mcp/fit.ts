import { groupDigits } from '../digits.js';
import { SEVERITIES } from '../audit/report.js';

/**
 * UTF-8 bytes one tool result may take: structuredContent's JSON plus its text copy (the same JSON), so each copy gets
 * half. 100 KB is ~25k tokens, the size MCP clients accept without truncating (Claude Code's default), whether a
 * client shows the model one copy or both.
 */
export const MAX_RESULT_BYTES = 100_000;
const MAX_JSON_BYTES = MAX_RESULT_BYTES / 2;
/** Characters of answer text one result may carry; lists and the rest of the result share what remains. */
export const MAX_ANSWER_CHARS = 32_000;
/** Characters a text inside a list item keeps once a result is over the limit (a finding's message, a tool's input). */
const MAX_ITEM_TEXT_CHARS = 2_000;
/** Shortest a text is cut to when the lists are empty and the result is still over (only multi-byte giants get here). */
const MIN_TEXT_CHARS = 200;

type Json = Record<string, unknown>;

/** A list of a result that may be shortened. */
interface ListCut {
  path: readonly string[];
  noun: string;
  /** Orders items by what to keep first (default: as listed); the kept items stay in their listed order. */
  keepFirst?: (a: any, b: any) => number;
}

/** How one tool's result is fitted: its lists, least valuable first, and where the note goes. */
interface FitPlan {
  lists: readonly ListCut[];
  /** How a caller gets what was left out. */
  rest: string;
  /** The result with the note added where the tool's schema has room for it, and `truncated: true`. */
  place(result: Json, note: string): Json;
}

/** Citations that did not check out are kept first: they are the ones a caller must not trust. */
const unverifiedFirst = (a: { status: string }, b: { status: string }): number => Number(a.status === 'ok') - Number(b.status === 'ok');
const mostSevereFirst = (a: { severity: string }, b: { severity: string }): number =>
  SEVERITIES.indexOf(b.severity as never) - SEVERITIES.indexOf(a.severity as never);

/** ask and ask_followup: the citations go first; the note joins `notes`. */
export const ANSWER_FIT: FitPlan = {
  lists: [
    { path: ['citations'], noun: 'citations', keepFirst: unverifiedFirst },
    { path: ['notes'], noun: 'notes' },
  ],
  rest: 'ask_followup with a narrower question (one file or one part of the answer) to get them',
  place: (result, note) => ({ ...result, truncated: true, notes: [...((result.notes as string[] | undefined) ?? []), note] }),
};

/** audit: the run's records go before its findings, and the least severe findings before the rest; the note joins `warnings`. */
export const AUDIT_FIT: FitPlan = {
  lists: [
    { path: ['tool_calls'], noun: 'tool_calls' },
    { path: ['cache_misses'], noun: 'cache_misses' },
    { path: ['citations'], noun: 'citations', keepFirst: unverifiedFirst },
    { path: ['warnings'], noun: 'warnings' },
    { path: ['audit', 'findings'], noun: 'findings', keepFirst: mostSevereFirst },
  ],
  rest: 'run `spelunk audit --output-format json` for the whole result, or audit a narrower question (one directory or one rule)',
  place: (result, note) => ({ ...result, truncated: true, warnings: [...((result.warnings as string[] | undefined) ?? []), note] }),
};

/**
 * The answer cut to MAX_ANSWER_CHARS, marked where it ends, and a note for the result's notes or warnings that names
 * the cut field (`answer_markdown` for ask, `result` for audit) and how to get the rest; no note when it fits.
 */
export function fitAnswer(answer: string, field: string): { text: string; truncated: boolean; note: string | null } {
  if (answer.length <= MAX_ANSWER_CHARS) return { text: answer, truncated: false, note: null };
  const had = groupDigits(answer.length);
  const rest = 'ask_followup for the rest or ask a narrower question';
  const text = `${answer.slice(0, MAX_ANSWER_CHARS)}\n\n[truncated: the answer had ${had} characters, more than a tool result may carry; ${rest}]`;
  const kept = groupDigits(MAX_ANSWER_CHARS);
  const note = `[truncated: to stay under ~25k tokens this result cuts ${field} to the first ${kept} of its ${had} characters; ${rest}]`;
  return { text, truncated: true, note };
}

/**
 * The result, unchanged when its JSON fits MAX_RESULT_BYTES (both copies); otherwise with long texts in list items
 * cut, then each list shortened in the plan's order to the most items that fit, then (only if still over) every long
 * text cut, and a note saying what was left out and how to get it. Types and required fields are kept, so the result
 * still matches the tool's outputSchema.
 */
export function fitResult(result: Json, plan: FitPlan): Json {
  if (fits(result)) return result;
  const omitted: string[] = [];
  let current = plan.lists.reduce(
    (r, list) => mapAt(r, list.path, (items) => items.map((item) => clipTexts(item, MAX_ITEM_TEXT_CHARS))),
    result,
  );
  let textsCut = JSON.stringify(current) !== JSON.stringify(result);
  const noted = (r: Json, extra: string[] = []): Json => plan.place(r, note([...omitted, ...extra], textsCut, plan.rest));
  for (const list of plan.lists) {
    if (fits(noted(current))) return noted(current);
    const items = getAt(current, list.path);
    if (items.length === 0) continue;
    const kept = (n: number): Json => setAt(current, list.path, keepSome(items, n, list.keepFirst));
    const left = (n: number): string => `${groupDigits(items.length - n)} of ${groupDigits(items.length)} ${list.noun}`;
    const n = largest(0, items.length - 1, (k) => fits(noted(kept(k), [left(k)])));
    current = kept(n);
    omitted.push(left(n));
  }
  if (fits(noted(current))) return noted(current);
  textsCut = true;
  const chars = largest(MIN_TEXT_CHARS, longestText(current), (k) => fits(noted(clipTexts(current, k) as Json)));
  return noted(clipTexts(current, chars) as Json);
}

function note(omitted: readonly string[], textsCut: boolean, rest: string): string {
  const parts = [
    ...(omitted.length > 0 ? [`leaves out ${omitted.join(', ')}`] : []),
    ...(textsCut ? ['cuts its longest texts (marked …[cut])'] : []),
  ];
  return `[truncated: to stay under ~25k tokens this result ${parts.join(' and ')}; ${rest}]`;
}

function fits(result: Json): boolean {
  return Buffer.byteLength(JSON.stringify(result), 'utf8') <= MAX_JSON_BYTES;
}

/** The largest k in [lo, hi] for which `ok(k)` holds, assuming it holds up to some k and not after; lo when none does. */
function largest(lo: number, hi: number, ok: (k: number) => boolean): number {
  let best = lo;
  while (lo <= hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (ok(mid)) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best;
}

/** `n` items, chosen by `keepFirst`, in their listed order. */
function keepSome(items: readonly unknown[], n: number, keepFirst?: (a: unknown, b: unknown) => number): unknown[] {
  const order = items.map((_, i) => i);
  if (keepFirst) order.sort((a, b) => keepFirst(items[a], items[b]) || a - b);
  return order
    .slice(0, n)
    .sort((a, b) => a - b)
    .map((i) => items[i]);
}

function getAt(value: Json, path: readonly string[]): unknown[] {
  const found = path.reduce<unknown>((v, key) => (v !== null && typeof v === 'object' ? (v as Json)[key] : undefined), value);
  return Array.isArray(found) ? found : [];
}

function setAt(value: Json, path: readonly string[], items: unknown[]): Json {
  const [key, ...rest] = path;
  if (key === undefined || !Object.hasOwn(value, key)) return value;
  if (rest.length === 0) return { ...value, [key]: items };
  const inner = value[key];
  return inner !== null && typeof inner === 'object' ? { ...value, [key]: setAt(inner as Json, rest, items) } : value;
}

function mapAt(value: Json, path: readonly string[], f: (items: unknown[]) => unknown[]): Json {
  const items = getAt(value, path);
  return items.length === 0 ? value : setAt(value, path, f(items));
}

/** A copy with every string longer than `chars` cut to it, marked. */
function clipTexts(value: unknown, chars: number): unknown {
  if (typeof value === 'string') return value.length <= chars ? value : `${value.slice(0, chars)}…[cut]`;
  if (Array.isArray(value)) return value.map((v) => clipTexts(v, chars));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clipTexts(v, chars)]));
}

function longestText(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (value === null || typeof value !== 'object') return 0;
  return Math.max(0, ...Object.values(value).map(longestText));
}
