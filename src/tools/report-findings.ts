import { promises as fs } from 'node:fs';
import path from 'node:path';
import { confine } from '../sandbox/paths.js';
import type { Tool, ToolContext, ToolOutcome } from './tool.js';
import { countFileLines } from '../lines.js';
import { parseReport, REPORT_SCHEMA } from '../audit/parse-report.js';
import { type AuditReport, type Finding, type FindingInput, type FindingsSink, type ReportInput } from '../audit/report.js';

/** Line counting streams the file; anything larger than this is refused rather than read for a location check. */
const MAX_VERIFY_BYTES = 64 * 1024 * 1024;

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
    inputSchema: REPORT_SCHEMA,
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

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
