import { dropNulls, schemaIssues, showValue as show, type InputSchema, type ParseResult, type SchemaIssue } from '../schema.js';
import { CATEGORIES, SEVERITIES, VERDICTS, normaliseRuleId, type FindingInput, type ReportInput } from './report.js';

/** Bounds on what the model may file: a report is shown in tables, SARIF and JSON, so it must stay readable. */
const MAX_FINDINGS = 200;
const MAX_SUMMARY_CHARS = 4_000;
const MAX_TITLE_CHARS = 200;
const MAX_MESSAGE_CHARS = 4_000;
const MAX_PATH_CHARS = 1_000;
/** At most this many shape errors are listed back to the model. */
const MAX_SHAPE_ERRORS = 10;

const RULE_ID = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$/;
const FINDING_KEYS = ['rule_id', 'severity', 'category', 'title', 'message', 'path', 'start_line', 'end_line'];
/** A string with something in it besides white space. */
const NOT_BLANK = '\\S';

/**
 * The `report_findings` input schema: what the model sees and what parseReport checks. A category may be left out
 * (and null means left out, as does a null end_line: models send null for "not applicable").
 */
export const REPORT_SCHEMA: InputSchema = {
  type: 'object',
  properties: {
    verdict: { type: 'string', enum: [...VERDICTS] },
    summary: {
      type: 'string',
      description: 'Two or three sentences: the answer to the audit question.',
      pattern: NOT_BLANK,
      maxLength: MAX_SUMMARY_CHARS,
    },
    findings: {
      type: 'array',
      maxItems: MAX_FINDINGS,
      items: {
        type: 'object',
        properties: {
          rule_id: { type: 'string', description: 'Stable kebab-case identifier of the kind of problem.', pattern: RULE_ID.source },
          severity: { type: 'string', enum: [...SEVERITIES] },
          category: { type: 'string', enum: [...CATEGORIES] },
          title: { type: 'string', description: 'One line.', pattern: NOT_BLANK, maxLength: MAX_TITLE_CHARS },
          message: {
            type: 'string',
            description: 'What is wrong here and the evidence for it.',
            pattern: NOT_BLANK,
            maxLength: MAX_MESSAGE_CHARS,
          },
          path: {
            type: 'string',
            description: 'File path relative to the repository root.',
            pattern: NOT_BLANK,
            maxLength: MAX_PATH_CHARS,
          },
          start_line: { type: 'integer', minimum: 1 },
          end_line: { type: 'integer', minimum: 1, description: 'Defaults to start_line.' },
        },
        required: ['rule_id', 'severity', 'title', 'message', 'path', 'start_line'],
        additionalProperties: false,
      },
    },
  },
  required: ['verdict', 'summary', 'findings'],
  additionalProperties: false,
};

/** Checks a `report_findings` input against REPORT_SCHEMA; every problem is listed back to the model (up to MAX_SHAPE_ERRORS). */
export function parseReport(input: unknown): ParseResult<ReportInput> {
  const lenient = isRecord(input) && Array.isArray(input.findings)
    ? { ...input, findings: input.findings.map((f) => dropNulls(f, ['category', 'end_line'])) }
    : input;
  const issues = schemaIssues(REPORT_SCHEMA, lenient);
  if (issues.length > 0) return { ok: false, error: shapeError(issues.flatMap(issueMessages)) };
  const report = lenient as ReportInput;
  const findings = report.findings.map((raw): FindingInput => {
    const finding: FindingInput = {
      rule_id: normaliseRuleId(raw.rule_id),
      severity: raw.severity,
      title: raw.title.trim(),
      message: raw.message.trim(),
      path: raw.path,
      start_line: raw.start_line,
    };
    if (raw.end_line !== undefined) finding.end_line = raw.end_line;
    if (raw.category !== undefined) finding.category = raw.category;
    return finding;
  });
  return { ok: true, value: { verdict: report.verdict, summary: report.summary, findings } };
}

/** The model's one-line message(s) for a schema issue, naming the field and what it sent. */
function issueMessages(issue: SchemaIssue): string[] {
  const { at, value } = issue;
  const got = `(got ${show(value)})`;
  const field = at.replace(/^findings\[\d+\]\./, '');
  if (issue.keyword === 'additionalProperties') {
    const allowed = at === '' ? ['verdict', 'summary', 'findings'] : FINDING_KEYS;
    return issue.keys!.map((key) => `unknown field ${at === '' ? '' : `${at}.`}${key} (allowed: ${allowed.join(', ')})`);
  }
  if (at === '') return ['the input must be an object {verdict, summary, findings}'];
  if (at === 'findings') {
    if (issue.keyword === 'maxItems') {
      return [`at most ${MAX_FINDINGS} findings per report (got ${(value as unknown[]).length}); keep the most severe`];
    }
    return ['findings must be an array (use [] when there are none)'];
  }
  if (/^findings\[\d+\]$/.test(at)) return [`${at} must be an object with ${FINDING_KEYS.join(', ')}`];
  if (issue.schema.enum) return [`${at} must be one of ${issue.schema.enum.join(', ')} ${got}`];
  if (field === 'rule_id') return [`${at} must be a short id of letters, digits, ".", "_", "-", "/" like "shell-injection" ${got}`];
  if (field === 'start_line' || field === 'end_line') return [`${at} must be an integer line number, 1 or more ${got}`];
  if (issue.keyword === 'maxLength') return [`${at} is ${[...(value as string)].length} characters; at most ${issue.schema.maxLength}`];
  return [`${at} must be a non-empty string ${got}`];
}

function shapeError(errors: string[]): string {
  const shown = errors.slice(0, MAX_SHAPE_ERRORS);
  const more = errors.length > shown.length ? `\n(and ${errors.length - shown.length} more)` : '';
  return `report_findings was not recorded; fix these and call it again:\n- ${shown.join('\n- ')}${more}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
