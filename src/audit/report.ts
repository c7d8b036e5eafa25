/** The audit domain: what a report is, the order of severities, and how rule ids are normalised. */

export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];
export const VERDICTS = ['pass', 'fail', 'inconclusive'] as const;
export type Verdict = (typeof VERDICTS)[number];
/** What kind of problem a finding is; `security` is what code-scanning tools tag and rank by severity. */
export const CATEGORIES = ['security', 'correctness', 'performance', 'maintainability'] as const;
type Category = (typeof CATEGORIES)[number];

/** The rule id of spelunk's own secret findings (src/run/secret-findings.ts), whatever the model reports. */
export const SECRET_RULE = 'secret';

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

/**
 * Rule ids name SARIF rules and key fingerprints, so "Shell_Injection" and "shell-injection" must be one rule:
 * lowercase, "_" as "-", no repeated or trailing separators. Ids are at most 100 characters (RULE_ID in
 * parse-report.ts), so the trailing-separator pattern stays cheap.
 */
export function normaliseRuleId(id: string): string {
  const normal = id.toLowerCase().replace(/_/g, '-').replace(/-{2,}/g, '-').replace(/[-./]+$/, '');
  // An id that normalises to nothing is made of separators only, which have no case.
  return normal === '' ? id : normal;
}
