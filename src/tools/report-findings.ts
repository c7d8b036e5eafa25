import { promises as fs } from 'node:fs';
import path from 'node:path';
import { confine } from '../sandbox/paths.js';
import type { ParseResult, Tool, ToolContext, ToolOutcome } from './tool.js';
import { countFileLines } from '../lines.js';

/** Bounds on what the model may file: a report is shown in tables, SARIF and JSON, so it must stay readable. */
const MAX_FINDINGS = 200;
const MAX_SUMMARY_CHARS = 4_000;
const MAX_TITLE_CHARS = 200;
const MAX_MESSAGE_CHARS = 4_000;
const MAX_PATH_CHARS = 1_000;
/** Line counting streams the file; anything larger than this is refused rather than read for a location check. */
const MAX_VERIFY_BYTES = 64 * 1024 * 1024;
/** At most this many shape errors are listed back to the model. */
const MAX_SHAPE_ERRORS = 10;

export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];
export const VERDICTS = ['pass', 'fail', 'inconclusive'] as const;
export type Verdict = (typeof VERDICTS)[number];
/** What kind of problem a finding is; `security` is what code-scanning tools tag and rank by severity. */
export const CATEGORIES = ['security', 'correctness', 'performance', 'maintainability'] as const;
export type Category = (typeof CATEGORIES)[number];

/** A finding as the model files it (end_line optional). */
export interface FindingInput {
  rule_id: string;
  severity: Severity;
  title: string;
  message: string;
  path: string;
  start_line: number;
  end_line?: number;
  /** Optional so that a report without it still files; SARIF then tags the rule with nothing. */
  category?: Category;
}

/** A finding whose location was checked: `path` is repository-relative POSIX, `end_line` always set. */
export interface Finding extends FindingInput {
  end_line: number;
  /** With `audit --diff`/`--diff-file`: where the finding lies relative to the change (see audit/scope.ts). */
  diff_class?: 'changed-line' | 'changed-file' | 'outside-diff';
  /** With `--baseline`: the finding's fingerprint is in the operator's baseline; kept, reported, not counted. */
  suppressed?: boolean;
}

/** What `report_findings` receives, before location checks. */
export interface ReportInput {
  verdict: Verdict;
  summary: string;
  findings: FindingInput[];
}

/** The audit outcome carried into the result object, the text table and SARIF; only valid findings. */
export interface AuditReport {
  verdict: Verdict;
  summary: string;
  findings: Finding[];
  /** With a diff: which findings count for --fail-on (line: changed lines only; file: changed files; repo: all). */
  scope?: 'line' | 'file' | 'repo';
  /** With --baseline: how many findings matched it. */
  suppressed?: number;
}

/**
 * Where the tool leaves the latest report. `warnings` lists every finding any call dropped, also those of a report a
 * later call replaced: a pipeline must learn that the model cited code that does not exist, even once corrected.
 */
export interface FindingsSink {
  report: AuditReport | null;
  warnings: string[];
}

const SEVERITY_RANK: Readonly<Record<Severity, number>> = { low: 0, medium: 1, high: 2, critical: 3 };

/** True when `severity` is at or above `threshold`. */
export function severityAtLeast(severity: Severity, threshold: Severity): boolean {
  return SEVERITY_RANK[severity] >= SEVERITY_RANK[threshold];
}

export function isSeverity(value: unknown): value is Severity {
  return (SEVERITIES as readonly unknown[]).includes(value);
}

const DESCRIPTION = [
  'File the audit result. Call this exactly once, at the end, after you have verified every finding by reading the',
  'code; then end your turn with a short summary.',
  'verdict: "pass" when the code satisfies the audit question, "fail" when you found violations (list each one),',
  '"inconclusive" when you could not establish either (say why in summary).',
  'Each finding needs a stable rule_id (kebab-case, e.g. "shell-injection"; reuse the same id for the same kind of',
  'problem), a severity (low, medium, high, critical), a category (security, correctness, performance,',
  'maintainability), a one-line title, a message explaining the evidence, the file',
  'path relative to the repository root, and 1-based inclusive start_line/end_line of the offending code as you saw',
  'them in read_file output. Locations are checked: findings outside the repository or past the end of the file are',
  'dropped and you are told which.',
].join(' ');

const INPUT_SCHEMA = {
  type: 'object' as const,
  properties: {
    verdict: { type: 'string', enum: [...VERDICTS] },
    summary: { type: 'string', description: 'Two or three sentences: the answer to the audit question.' },
    findings: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          rule_id: { type: 'string', description: 'Stable kebab-case identifier of the kind of problem.' },
          severity: { type: 'string', enum: [...SEVERITIES] },
          category: { type: 'string', enum: [...CATEGORIES] },
          title: { type: 'string', description: 'One line.' },
          message: { type: 'string', description: 'What is wrong here and the evidence for it.' },
          path: { type: 'string', description: 'File path relative to the repository root.' },
          start_line: { type: 'integer', minimum: 1 },
          end_line: { type: 'integer', minimum: 1, description: 'Defaults to start_line.' },
        },
        required: ['rule_id', 'severity', 'category', 'title', 'message', 'path', 'start_line'],
        additionalProperties: false,
      },
    },
  },
  required: ['verdict', 'summary', 'findings'],
  additionalProperties: false,
};

/**
 * The `report_findings` tool of audit mode. Each call replaces the report in `sink` (a correction supersedes, it
 * does not append). Invalid locations are dropped — never kept in the report, so SARIF and the exit code only see
 * code that exists — and added to `sink.warnings` (kept across calls) and, once, offered back to the model in the
 * tool result with an invitation to call again.
 */
export function createReportFindingsTool(sink: FindingsSink): Tool<ReportInput> {
  let calls = 0;
  return {
    name: 'report_findings',
    description: DESCRIPTION,
    inputSchema: INPUT_SCHEMA,
    parse: parseReport,
    display: (input) => `verdict ${input.verdict}, ${plural(input.findings.length, 'finding')}`,
    async run(input, ctx) {
      calls += 1;
      const checked = await checkFindings(input.findings, ctx);
      sink.report = { verdict: input.verdict, summary: input.summary.trim(), findings: checked.valid };
      for (const bad of checked.invalid) sink.warnings.push(`report_findings call ${calls} dropped ${bad.label}: ${bad.reason}`);
      return describeOutcome(sink.report, checked.invalid, calls === 1);
    },
  };
}

interface InvalidFinding {
  label: string;
  reason: string;
}

function describeOutcome(report: AuditReport, invalid: InvalidFinding[], firstCall: boolean): ToolOutcome {
  const recorded = `Recorded verdict "${report.verdict}" with ${plural(report.findings.length, 'valid finding')}.`;
  const failWithoutEvidence =
    report.verdict === 'fail' && report.findings.length === 0
      ? ' A "fail" verdict without a valid finding counts as inconclusive.'
      : '';
  const summary = `${report.verdict}: ${plural(report.findings.length, 'finding')}`;
  if (invalid.length === 0) {
    return { content: `${recorded}${failWithoutEvidence} Now end your turn with a short summary.`, summary, isError: false };
  }
  const list = invalid.map((bad) => `- ${bad.label}: ${bad.reason}`).join('\n');
  const next = firstCall
    ? 'Check these locations with read_file, then call report_findings again with the complete corrected report ' +
      '(it replaces this one), or end your turn to keep only the valid findings.'
    : 'They were dropped; this report stands. End your turn.';
  return {
    content: `${recorded}${failWithoutEvidence} ${plural(invalid.length, 'finding')} had an invalid location:\n${list}\n${next}`,
    summary: `${summary} (${invalid.length} invalid dropped)`,
    isError: true,
  };
}

async function checkFindings(
  findings: FindingInput[],
  ctx: ToolContext,
): Promise<{ valid: Finding[]; invalid: InvalidFinding[] }> {
  const valid: Finding[] = [];
  const invalid: InvalidFinding[] = [];
  const lineCounts = new Map<string, Promise<number | string>>();
  for (const [index, finding] of findings.entries()) {
    const checked = await checkLocation(finding, ctx, lineCounts);
    if (typeof checked === 'string') {
      invalid.push({ label: `findings[${index}] (${finding.rule_id} at ${finding.path}:${lineRange(finding)})`, reason: checked });
      continue;
    }
    valid.push(checked);
  }
  return { valid, invalid };
}

/** `12` or `12-15`, as the model gave them (end_line defaults to start_line). */
function lineRange(finding: FindingInput): string {
  const end = finding.end_line ?? finding.start_line;
  return end === finding.start_line ? `${finding.start_line}` : `${finding.start_line}-${end}`;
}

/** Returns the normalised finding, or why its location is invalid. */
async function checkLocation(
  finding: FindingInput,
  ctx: ToolContext,
  lineCounts: Map<string, Promise<number | string>>,
): Promise<Finding | string> {
  const confined = await confine(ctx.root, finding.path, { mustExist: true });
  if (!confined.ok) return confined.reason;
  let counting = lineCounts.get(confined.abs);
  if (counting === undefined) {
    counting = countLines(confined.abs, ctx);
    lineCounts.set(confined.abs, counting);
  }
  const lines = await counting;
  if (typeof lines === 'string') return lines;
  const end = finding.end_line ?? finding.start_line;
  if (finding.start_line < 1) return `start_line must be 1 or more (lines are 1-based), got ${finding.start_line}`;
  if (finding.start_line > lines) return `start_line ${finding.start_line} is past the end of the file (${plural(lines, 'line')})`;
  if (end < finding.start_line) return `end_line ${end} is before start_line ${finding.start_line}`;
  if (end > lines) return `end_line ${end} is past the end of the file (${plural(lines, 'line')})`;
  return { ...finding, path: confined.rel.split(path.sep).join('/'), end_line: end };
}

/** Number of lines (a final line without a newline counts), or why the file cannot carry a finding. */
async function countLines(abs: string, ctx: ToolContext): Promise<number | string> {
  try {
    return await countLinesOf(abs, ctx);
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    return `cannot read the file (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
}

async function countLinesOf(abs: string, ctx: ToolContext): Promise<number | string> {
  const stat = await fs.stat(abs);
  if (!stat.isFile()) return 'not a regular file';
  if (stat.size > MAX_VERIFY_BYTES) return `file is larger than ${MAX_VERIFY_BYTES / 1024 / 1024} MiB; cannot verify lines`;
  ctx.onRead?.(abs);
  return countFileLines(abs, ctx.signal);
}

function parseReport(input: unknown): ParseResult<ReportInput> {
  const errors: string[] = [];
  if (!isRecord(input)) return { ok: false, error: shapeError(['the input must be an object {verdict, summary, findings}']) };
  unknownKeys(input, ['verdict', 'summary', 'findings'], '', errors);
  const verdict = input.verdict;
  if (!(VERDICTS as readonly unknown[]).includes(verdict)) {
    errors.push(`verdict must be one of ${VERDICTS.join(', ')} (got ${show(verdict)})`);
  }
  const summary = text(input.summary, 'summary', MAX_SUMMARY_CHARS, errors);
  const findings: FindingInput[] = [];
  if (!Array.isArray(input.findings)) {
    errors.push('findings must be an array (use [] when there are none)');
  } else if (input.findings.length > MAX_FINDINGS) {
    errors.push(`at most ${MAX_FINDINGS} findings per report (got ${input.findings.length}); keep the most severe`);
  } else {
    for (const [index, raw] of input.findings.entries()) {
      const finding = parseFinding(raw, `findings[${index}]`, errors);
      // Stryker disable next-line ConditionalExpression: parseFinding answers null only after adding an error, and any error refuses the whole report
      if (finding !== null) findings.push(finding);
    }
  }
  if (errors.length > 0) return { ok: false, error: shapeError(errors) };
  // text() answers null only after adding an error, so here the summary is a string.
  return { ok: true, value: { verdict: verdict as Verdict, summary: summary as string, findings } };
}

const RULE_ID = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$/;
const FINDING_KEYS = ['rule_id', 'severity', 'category', 'title', 'message', 'path', 'start_line', 'end_line'];

function parseFinding(raw: unknown, where: string, errors: string[]): FindingInput | null {
  if (!isRecord(raw)) {
    errors.push(`${where} must be an object with ${FINDING_KEYS.join(', ')}`);
    return null;
  }
  const before = errors.length;
  unknownKeys(raw, FINDING_KEYS, `${where}.`, errors);
  if (typeof raw.rule_id !== 'string' || !RULE_ID.test(raw.rule_id)) {
    errors.push(`${where}.rule_id must be a short id of letters, digits, ".", "_", "-", "/" like "shell-injection" (got ${show(raw.rule_id)})`);
  }
  if (!isSeverity(raw.severity)) errors.push(`${where}.severity must be one of ${SEVERITIES.join(', ')} (got ${show(raw.severity)})`);
  // Optional (a missing or null category files without one), but a value must be one of the list.
  const hasCategory = raw.category !== undefined && raw.category !== null;
  if (hasCategory && !(CATEGORIES as readonly unknown[]).includes(raw.category)) {
    errors.push(`${where}.category must be one of ${CATEGORIES.join(', ')} (got ${show(raw.category)})`);
  }
  text(raw.title, `${where}.title`, MAX_TITLE_CHARS, errors);
  text(raw.message, `${where}.message`, MAX_MESSAGE_CHARS, errors);
  text(raw.path, `${where}.path`, MAX_PATH_CHARS, errors);
  if (!Number.isInteger(raw.start_line)) errors.push(`${where}.start_line must be an integer line number (got ${show(raw.start_line)})`);
  // A null end_line is what models send for "not applicable"; it means the same as leaving it out.
  const hasEnd = raw.end_line !== undefined && raw.end_line !== null;
  if (hasEnd && !Number.isInteger(raw.end_line)) errors.push(`${where}.end_line must be an integer line number (got ${show(raw.end_line)})`);
  if (errors.length > before) return null;
  const finding: FindingInput = {
    rule_id: normaliseRuleId(raw.rule_id as string),
    severity: raw.severity as Severity,
    title: (raw.title as string).trim(),
    message: (raw.message as string).trim(),
    path: raw.path as string,
    start_line: raw.start_line as number,
  };
  if (hasEnd) finding.end_line = raw.end_line as number;
  if (hasCategory) finding.category = raw.category as Category;
  return finding;
}

/**
 * Rule ids name SARIF rules and key fingerprints, so "Shell_Injection" and "shell-injection" must be one rule:
 * lowercase, "_" as "-", no repeated or trailing separators. Ids are at most 100 characters (RULE_ID), so the
 * trailing-separator pattern stays cheap.
 */
export function normaliseRuleId(id: string): string {
  const normal = id.toLowerCase().replace(/_/g, '-').replace(/-{2,}/g, '-').replace(/[-./]+$/, '');
  // An id that normalises to nothing is made of separators only, which have no case.
  return normal === '' ? id : normal;
}

function text(value: unknown, where: string, max: number, errors: string[]): string | null {
  if (typeof value !== 'string' || value.trim() === '') {
    errors.push(`${where} must be a non-empty string (got ${show(value)})`);
    return null;
  }
  if (value.length > max) {
    errors.push(`${where} is ${value.length} characters; at most ${max}`);
    return null;
  }
  return value;
}

function unknownKeys(obj: Record<string, unknown>, allowed: string[], prefix: string, errors: string[]): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) errors.push(`unknown field ${prefix}${key} (allowed: ${allowed.join(', ')})`);
  }
}

function shapeError(errors: string[]): string {
  const shown = errors.slice(0, MAX_SHAPE_ERRORS);
  const more = errors.length > shown.length ? `\n(and ${errors.length - shown.length} more)` : '';
  return `report_findings was not recorded; fix these and call it again:\n- ${shown.join('\n- ')}${more}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 40 ? `${json.slice(0, 40)}…` : json;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
