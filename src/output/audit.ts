import { escapeControls, oneLine } from '../escape.js';
import { severityAtLeast, type AuditReport, type Finding, type Severity } from '../audit/report.js';
import { countsForFailOn } from '../audit/scope.js';
import { createPalette, type Palette } from './color.js';

/** Findings are indented under their heading line by this much, when the terminal has room for it. */
const INDENT = 3;
/** Below this many columns the indent is dropped: the text gets every column there is. */
const MIN_INDENTED_COLS = 24;
/** A pseudo-terminal without a window size reports 0 columns; such a terminal is taken to be this wide. */
export const DEFAULT_AUDIT_COLUMNS = 80;

/**
 * The audit verdict and its findings, for text output (stdout: it is the result). Each finding is a block: a heading
 * line with its severity, rule and full `path:line` (the location on a line of its own when the three do not fit),
 * then its title and message, then why it does or does not count. Nothing is cut: with `width` (a terminal's columns)
 * every line is wrapped to fit, a word or path longer than a line broken across lines; with null (a pipe or a file)
 * nothing is wrapped, so each finding stays greppable. Model-written text is shown with its control characters
 * escaped.
 */
export function renderAudit(report: AuditReport, opts: { color: boolean; width?: number | null; failOn?: Severity }): string {
  const p = createPalette(opts.color);
  const width = opts.width === undefined || opts.width === null ? null : Math.max(1, opts.width);
  const word = { pass: 'PASS', fail: 'FAIL', inconclusive: 'INCONCLUSIVE' }[report.verdict];
  const paintVerdict = { pass: p.green, fail: p.red, inconclusive: p.yellow }[report.verdict];
  const gate = gateNote(report, opts.failOn ?? 'high');
  const verdictLines = wrap(gate === null ? `verdict: ${word}` : `verdict: ${word} (model) · ${gate}`, width, 0).map((l) =>
    l.replace(word, paintVerdict(word)),
  );
  const lines = [...verdictLines, ...paragraphs(report.summary, width, 0)];
  if (report.scope !== undefined) {
    const scope = { line: 'only changed-line findings', file: 'findings in changed files', repo: 'every finding' }[report.scope];
    lines.push(...wrap(`scope: ${scope} count for --fail-on`, width, 0));
  }
  if (report.suppressed !== undefined) lines.push(...wrap(`baseline: ${report.suppressed} finding(s) suppressed`, width, 0));
  for (const f of report.findings) lines.push('', ...findingLines(f, width, p));
  return `${lines.join('\n')}\n`;
}

/**
 * Why a FAIL verdict does not fail the run (exit 0), said on the verdict line: `gate: pass — 3 suppressed by the
 * baseline, 1 outside the changed lines, 2 below --fail-on high`. Null when the gate agrees with the verdict.
 */
function gateNote(report: AuditReport, failOn: Severity): string | null {
  if (report.verdict !== 'fail' || report.findings.length === 0) return null;
  const counted = report.findings.filter((f) => countsForFailOn(f, report.scope));
  if (counted.some((f) => severityAtLeast(f.severity, failOn))) return null;
  const suppressed = report.findings.filter((f) => f.suppressed === true).length;
  const outside = report.findings.length - counted.length - suppressed;
  const where = report.scope === 'file' ? 'outside the changed files' : 'outside the changed lines';
  const reasons = [
    suppressed > 0 ? `${suppressed} suppressed by the baseline` : null,
    outside > 0 ? `${outside} ${where}` : null,
    counted.length > 0 ? `${counted.length} below --fail-on ${failOn}` : null,
  ].filter((r) => r !== null);
  return `gate: pass — ${reasons.join(', ')}`;
}

function findingLines(f: Finding, width: number | null, p: Palette): string[] {
  const indent = width !== null && width < MIN_INDENTED_COLS ? 0 : INDENT;
  const where = f.end_line > f.start_line ? `${f.path}:${f.start_line}-${f.end_line}` : `${f.path}:${f.start_line}`;
  const severity = f.severity.toUpperCase();
  const rule = oneLine(f.rule_id);
  const location = oneLine(where);
  const heading = `${severity}  ${rule}  ${location}`;
  // The three on one line when they fit; else the location gets lines of its own, never an ellipsis.
  const kind = `${severity}  ${rule}`;
  const head =
    width === null || textWidth(heading) <= width
      ? [heading]
      : [...(textWidth(kind) <= width ? [kind] : wrap(kind, width, 0)), ...breakLong(location, width, indent)];
  const colored = head.map((l, i) => (i === 0 && l.startsWith(severity) ? paint(severity, f.severity, p) + l.slice(severity.length) : l));
  // The class and the baseline say why a finding does or does not fail the run (see audit/scope.ts).
  const notes = [f.diff_class, f.suppressed === true ? 'suppressed (baseline)' : undefined].filter((n) => n !== undefined);
  return [
    ...colored,
    ...wrap(oneLine(f.title), width, indent).map(p.bold),
    ...paragraphs(f.message, width, indent),
    ...(notes.length > 0 ? wrap(notes.join(', '), width, indent).map(p.dim) : []),
  ];
}

function paint(text: string, severity: Severity, p: Palette): string {
  return severity === 'critical' || severity === 'high' ? p.red(text) : severity === 'medium' ? p.yellow(text) : p.dim(text);
}

/** Text with its own line breaks kept (each line wrapped), blank lines dropped, controls escaped. */
function paragraphs(text: string, width: number | null, indent: number): string[] {
  return text
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '')
    .flatMap((l) => wrap(escapeControls(l).replace(/\s+/g, ' ').trim(), width, indent));
}

/** Word-wrapped to `width` columns after `indent` spaces; a word longer than a line is broken, never cut. */
function wrap(text: string, width: number | null, indent: number): string[] {
  const pad = ' '.repeat(indent);
  if (width === null) return [`${pad}${text}`];
  const room = Math.max(1, width - indent);
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ').filter((w) => w !== '')) {
    const candidate = line === '' ? word : `${line} ${word}`;
    if (textWidth(candidate) <= room) {
      line = candidate;
      continue;
    }
    if (line !== '') out.push(line);
    const pieces = chunks(word, room);
    line = pieces.pop() ?? '';
    out.push(...pieces);
  }
  if (line !== '' || out.length === 0) out.push(line);
  return out.map((l) => `${pad}${l}`);
}

/** A path on lines of its own: whole when it fits, else broken at a `/` where it can be, else anywhere. */
function breakLong(text: string, width: number, indent: number): string[] {
  const room = Math.max(1, width - indent);
  const pad = ' '.repeat(indent);
  const out: string[] = [];
  let line = '';
  for (const part of text.split(/(?<=\/)/)) {
    if (textWidth(line + part) <= room) {
      line += part;
      continue;
    }
    if (line !== '') out.push(line);
    const pieces = chunks(part, room);
    line = pieces.pop() ?? '';
    out.push(...pieces);
  }
  if (line !== '') out.push(line);
  return out.map((l) => `${pad}${l}`);
}

/** `word` in pieces of at most `room` columns. */
function chunks(word: string, room: number): string[] {
  const out: string[] = [];
  let piece = '';
  for (const ch of word) {
    if (piece !== '' && textWidth(piece + ch) > room) {
      out.push(piece);
      piece = '';
    }
    piece += ch;
  }
  if (piece !== '') out.push(piece);
  return out;
}

/**
 * Columns a string takes on a terminal: combining marks none, East Asian wide and fullwidth characters and emoji
 * two, anything else one. The ranges are the common blocks, enough for text a model writes about code.
 */
export function textWidth(s: string): number {
  let cols = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if ((c >= 0x300 && c <= 0x36f) || (c >= 0xfe00 && c <= 0xfe0f) || c === 0x200d) continue;
    const wide =
      (c >= 0x1100 && c <= 0x115f) ||
      (c >= 0x2e80 && c <= 0xa4cf && c !== 0x303f) ||
      (c >= 0xac00 && c <= 0xd7a3) ||
      (c >= 0xf900 && c <= 0xfaff) ||
      (c >= 0xfe30 && c <= 0xfe4f) ||
      (c >= 0xff00 && c <= 0xff60) ||
      (c >= 0xffe0 && c <= 0xffe6) ||
      (c >= 0x1f300 && c <= 0x1faff) ||
      (c >= 0x20000 && c <= 0x3fffd);
    cols += wide ? 2 : 1;
  }
  return cols;
}
