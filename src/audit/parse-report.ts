import type { ParseResult } from '../tools/tool.js';
import {
  CATEGORIES,
  SEVERITIES,
  VERDICTS,
  isSeverity,
  normaliseRuleId,
  type Category,
  type FindingInput,
  type ReportInput,
  type Severity,
  type Verdict,
} from './report.js';

/** Bounds on what the model may file: a report is shown in tables, SARIF and JSON, so it must stay readable. */
const MAX_FINDINGS = 200;
const MAX_SUMMARY_CHARS = 4_000;
const MAX_TITLE_CHARS = 200;
const MAX_MESSAGE_CHARS = 4_000;
const MAX_PATH_CHARS = 1_000;
/** At most this many shape errors are listed back to the model. */
const MAX_SHAPE_ERRORS = 10;

/** Checks the shape of a `report_findings` input; every problem is listed back to the model (up to MAX_SHAPE_ERRORS). */
export function parseReport(input: unknown): ParseResult<ReportInput> {
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
