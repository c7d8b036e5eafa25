/** Values split by an output's bounds: a private key cut by its window, a token cut by a tool's limit. */
import type { LaidLine } from './layout.js';

/** A range of the original text to leave out, with what it is. */
export interface Span {
  start: number;
  end: number;
  kind: string;
  ruleId: string;
}

const PRIVATE_KEY = 'private key';
const BEGIN_KEY = /-----BEGIN[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----/;
const END_KEY = /-----END[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----/;
const BASE64_LINE = /^[A-Za-z0-9+/=]{4,}$/;
const KEY_BODY = /^([A-Za-z0-9+/=]+|[A-Za-z-]+: .*|)$/;
const LINE_CUT = '… [line cut at ';
const OUTPUT_CUT = /^\[output (truncated|passed)/;
const CUT_TAIL = /[A-Za-z0-9+/_=-]{8,}$/;

/**
 * A private key cut by the output's bounds (a BEGIN line and no END before the end: `head -5 key.pem`, a read_file
 * window that stops inside it; or an END with no BEGIN above), which secretlint cannot match because it needs both
 * fences: every line of it in the output is left out. A whole key is secretlint's to judge.
 */
export function openKeySpans(text: string, lines: LaidLine[], found: readonly Span[]): Span[] {
  const covered = (at: number): boolean => found.some((s) => s.start <= at && s.end > at);
  const spans: Span[] = [];
  const key = (line: LaidLine): Span => ({ start: line.body, end: line.end, kind: PRIVATE_KEY, ruleId: 'private-key-cut' });
  let open = -1;
  lines.forEach((line, i) => {
    const body = text.slice(line.body, line.end);
    const begins = BEGIN_KEY.exec(body);
    const ends = END_KEY.exec(body);
    // A line with both fences (a key in one string, `\n`-escaped) is whole on its line: secretlint's to judge.
    if (begins && !(ends && ends.index > begins.index)) open = i;
    else if (ends && !begins) {
      if (open < 0) {
        for (let j = i - 1; j >= 0 && BASE64_LINE.test(text.slice(lines[j]!.body, lines[j]!.end).trim()); j--) spans.push(key(lines[j]!));
      }
      open = -1;
    }
  });
  if (open >= 0 && !covered(lines[open]!.body)) {
    // The key's own lines only (base64, or a PEM header such as Proc-Type): code that tests for a BEGIN fence is not a key.
    for (let j = open + 1; j < lines.length && KEY_BODY.test(text.slice(lines[j]!.body, lines[j]!.end).trim()); j++) {
      if (lines[j]!.end > lines[j]!.body) spans.push(key(lines[j]!));
    }
  }
  return spans.filter((s) => !covered(s.start));
}

/**
 * The end of a line that a tool's limit cut (read_file's `… [line cut at 2000 characters` and the last line before
 * bash's `[output truncated` or `[output passed`): a token cut there no longer matches any rule, and its first part
 * would be sent. The run of token characters that ends at the cut is left out when it is 8 or more long.
 */
export function cutSpans(text: string, lines: readonly LaidLine[], found: readonly Span[]): Span[] {
  const covered = (at: number): boolean => found.some((s) => s.start <= at && s.end > at);
  const spans: Span[] = [];
  const tail = (from: number, to: number): void => {
    const run = CUT_TAIL.exec(text.slice(from, to));
    if (run && !covered(to - 1)) spans.push({ start: to - run[0].length, end: to, kind: 'value cut by an output limit', ruleId: 'cut' });
  };
  lines.forEach((line, i) => {
    const body = text.slice(line.body, line.end);
    const inline = body.indexOf(LINE_CUT);
    if (inline >= 0) tail(line.body, line.body + inline);
    if (OUTPUT_CUT.test(body)) {
      const before = lines.slice(0, i).reverse().find((l) => l.end > l.body);
      if (before) tail(before.body, before.end);
    }
  });
  return spans;
}

