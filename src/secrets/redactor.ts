import { CREDENTIAL_VALUE } from './kinds.js';
import { credentialShape, credentialValues } from './credential-files.js';
import { layOut, type LaidLine, type SecretSource } from './layout.js';
import type { ScanHit } from './scan.js';
import { mayHoldSecret } from './gate.js';
import { cutSpans, openKeySpans, type Span } from './cuts.js';

export type { SecretSource } from './layout.js';

/** One secret left out: what it was and where, never its value. */
export interface SecretHit {
  kind: string;
  /** secretlint's rule id, or `credential-file` for a value left out because of its file's name. */
  ruleId: string;
  path: string | null;
  line: number | null;
  endLine: number | null;
  /** `removed in commit abc1234` for a line of history; null for the work tree. */
  note: string | null;
  /** The place as the marker words it: `.env:3`, `config/app.yml:4-30`, `output line 2`. */
  place: string;
}

interface Redacted {
  text: string;
  hits: SecretHit[];
}


const END_KEY = /-----END[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----/;
const PEM_FENCE = /^\s*-----(BEGIN|END) [A-Z0-9 ]+-----\s*$/;
const PRIVATE_KEY = 'private key';

/**
 * The one place where text leaving spelunk for the model or the disk loses its secrets: tool results, the
 * instructions files of the preamble, piped stdin and the question, citation excerpts, locate's lines. A secret becomes
 * `[redacted: GitHub token, .env:3]`: its kind and place, never a hash or part of it. secretlint (its recommended
 * preset, scan.ts) finds the secrets; it is loaded on the first text that needs a scan, not at start.
 */
export class Redactor {
  readonly enabled: boolean;
  #scanner: Promise<(text: string) => Promise<ScanHit[]>> | null = null;
  readonly #seen: SecretHit[] = [];

  constructor(enabled: boolean) {
    this.enabled = enabled;
  }

  /** Every secret this redactor left out so far (the run's count, the audit's history hits). */
  get hits(): readonly SecretHit[] {
    return this.#seen;
  }

  /** `text` without its secrets, and what was left out. Unchanged when redaction is off (`--allow-secrets`). */
  async redact(text: string, source: SecretSource): Promise<Redacted> {
    if (!this.enabled || text === '') return { text, hits: [] };
    const lines = layOut(text, source);
    const credential = credentialSpans(text, lines);
    // The scanner (and its load, on the first text) only for the lines that could hold what it finds (gate.ts).
    const picked = candidateLines(text, lines);
    const found = picked.length === 0 ? [] : await scanPicked(text, lines, picked, await this.#scan());
    const spans = [...found, ...credential];
    spans.push(...openKeySpans(text, lines, spans), ...cutSpans(text, lines, spans));
    if (spans.length === 0) return { text, hits: [] };
    const out = apply(text, lines, merge(text, spans));
    this.#seen.push(...out.hits);
    return out;
  }

  /** A tool's outcome with its content and summary redacted; the summary says how many secrets were left out. */
  async outcome<O extends { content: string; summary: string }>(name: string, input: unknown, outcome: O): Promise<O> {
    if (!this.enabled) return outcome;
    const source: SecretSource = { kind: 'tool', name, input };
    const content = await this.redact(outcome.content, source);
    const summary = await this.redact(outcome.summary, source);
    const count = content.hits.length + summary.hits.length;
    if (count === 0) return outcome;
    const said = `${summary.text} · ${count} secret${count === 1 ? '' : 's'} redacted`;
    return { ...outcome, content: content.text, summary: said };
  }

  #scan(): Promise<(text: string) => Promise<ScanHit[]>> {
    this.#scanner ??= import('./scan.js').then((m) => m.scanText);
    return this.#scanner;
  }
}

function asSpan(hit: ScanHit): Span {
  return { start: hit.start, end: hit.end, kind: hit.kind, ruleId: hit.ruleId };
}

/** A line to scan, from `from` (its body, or its start when the prefix itself could hold a secret) to its end. */
interface Picked {
  index: number;
  from: number;
}

/**
 * The lines secretlint must see: those that pass the gate (gate.ts), and the END fences of keys. Every rule of the
 * preset but the private key's matches within one line, and a key's lines all pass the gate, so scanning these alone
 * finds what scanning the whole text would, at a fraction of the cost (most lines of code hold no candidate). Each is
 * scanned from its body: read_file's `12\t`, a diff's `+` and a search's `path:3:` are taken off, so a key written
 * over numbered lines is seen whole; a prefix that could itself hold a secret is scanned with its line.
 */
function candidateLines(text: string, lines: readonly LaidLine[]): Picked[] {
  const picked: Picked[] = [];
  lines.forEach((line, index) => {
    const body = text.slice(line.body, line.end);
    const prefixed = line.body > line.start && mayHoldSecret(text.slice(line.start, line.body));
    if (prefixed) picked.push({ index, from: line.start });
    else if (mayHoldSecret(body) || END_KEY.test(body)) picked.push({ index, from: line.body });
  });
  return picked;
}

/** secretlint over the picked lines joined by newlines, its offsets mapped back to the original text. */
async function scanPicked(text: string, lines: readonly LaidLine[], picked: readonly Picked[], scan: (text: string) => Promise<ScanHit[]>): Promise<Span[]> {
  const starts: number[] = [];
  let view = '';
  for (const p of picked) {
    starts.push(view.length);
    view += `${text.slice(p.from, lines[p.index]!.end)}\n`;
  }
  const toOriginal = (at: number, isEnd: boolean): number => {
    const i = lineAt(starts, isEnd ? at - 1 : at);
    const p = picked[i]!;
    return Math.min(lines[p.index]!.end, p.from + (at - starts[i]!));
  };
  return (await scan(view)).map((hit) => ({ ...asSpan(hit), start: toOriginal(hit.start, false), end: toOriginal(hit.end, true) }));
}

/**
 * The values of credential files' lines (credential-files.ts), as spans of the text. In a key file, the lines inside a
 * PRIVATE KEY block, and any before the output's first fence (a window that starts inside a key); a certificate or
 * public key block in a .pem stays, being public.
 */
function credentialSpans(text: string, lines: LaidLine[]): Span[] {
  const spans: Span[] = [];
  const inKey = new Map<string, boolean>();
  for (const line of lines) {
    if (line.credential === null) continue;
    const shape = credentialShape(line.credential) ?? 'keyed';
    const body = text.slice(line.body, line.end);
    if (shape === 'key-material') {
      const fence = PEM_FENCE.exec(body);
      if (fence) inKey.set(line.credential, fence[1] === 'BEGIN' && /PRIVATE KEY/.test(body));
      if (fence || inKey.get(line.credential) === false) continue;
    }
    for (const v of credentialValues(body, shape, line.credential)) {
      spans.push({ start: line.body + v.start, end: line.body + v.end, kind: shape === 'key-material' ? PRIVATE_KEY : CREDENTIAL_VALUE, ruleId: 'credential-file' });
    }
  }
  return spans;
}

/**
 * Overlapping spans become one, named after the first that secretlint found (a credential value is the fallback).
 * Each span first grows to whole words: a span that starts or ends inside a run of token characters takes the run,
 * so no tail of a value is left beside its marker (secretlint's AWS secret rule reports the right length from the
 * wrong start, which would otherwise leave the key's last characters).
 */
function merge(text: string, spans: Span[]): Span[] {
  const sorted = spans
    .filter((s) => s.end > s.start)
    .map((s) => widen(text, s))
    .sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Span[] = [];
  for (const span of sorted) {
    const last = out.at(-1);
    if (last && span.start < last.end) {
      last.end = Math.max(last.end, span.end);
      if (last.ruleId === 'credential-file' && span.ruleId !== 'credential-file') Object.assign(last, { kind: span.kind, ruleId: span.ruleId });
      continue;
    }
    out.push({ ...span });
  }
  return out;
}

const TOKEN_CHAR = /[A-Za-z0-9+/_=-]/;

function widen(text: string, span: Span): Span {
  let { start, end } = span;
  while (start > 0 && TOKEN_CHAR.test(text[start - 1]!) && TOKEN_CHAR.test(text[start]!) && text[start - 1] !== '=') start--;
  while (end < text.length && TOKEN_CHAR.test(text[end]!) && TOKEN_CHAR.test(text[end - 1]!)) end++;
  return { ...span, start, end };
}

/** The text with each span replaced line by line (line prefixes and line breaks kept), and the hits. */
function apply(text: string, lines: LaidLine[], spans: Span[]): Redacted {
  const starts = lines.map((l) => l.start);
  const pieces: Array<{ start: number; end: number; marker: string }> = [];
  const hits: SecretHit[] = [];
  for (const span of spans) {
    const first = lineAt(starts, span.start);
    const last = lineAt(starts, Math.max(span.start, span.end - 1));
    const hit = hitFor(span, lines, first, last);
    hits.push(hit);
    for (let i = first; i <= last; i++) {
      const line = lines[i]!;
      const start = Math.max(span.start, i === first ? line.start : line.body);
      const end = Math.min(span.end, line.end);
      if (end <= start) continue;
      pieces.push({ start, end, marker: i === first ? `[redacted: ${hit.kind}, ${hit.place}]` : '[redacted: continued]' });
    }
  }
  let out = '';
  let at = 0;
  for (const piece of pieces) {
    out += text.slice(at, piece.start) + piece.marker;
    at = piece.end;
  }
  return { text: out + text.slice(at), hits };
}

function hitFor(span: Span, lines: LaidLine[], first: number, last: number): SecretHit {
  const a = lines[first]!;
  const b = lines[last]!;
  const endLine = b.path === a.path && b.line !== null ? b.line : a.line;
  const where = a.path === null ? `output line ${first + 1}` : a.line === null ? a.path : endLine !== null && endLine !== a.line ? `${a.path}:${a.line}-${endLine}` : `${a.path}:${a.line}`;
  const place = a.note === null ? where : `${where} (${a.note})`;
  return { kind: span.kind, ruleId: span.ruleId, path: a.path, line: a.line, endLine, note: a.note, place };
}

/** The index of the line that holds offset `at` (starts sorted ascending). */
function lineAt(starts: readonly number[], at: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
