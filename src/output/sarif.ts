import { createHash } from 'node:crypto';
import { FINGERPRINT_KEY, findingFingerprints, type LineReader } from '../audit/fingerprint.js';
import type { AuditReport, Finding, Severity } from '../audit/report.js';
import { writeOutputFile } from '../sandbox/safe-write.js';
import { INFORMATION_URI, LEVEL, ruleFor, type SarifLevel, type SarifRule } from './sarif-rules.js';

export { SECURITY_SEVERITY, type SarifLevel, type SarifRule } from './sarif-rules.js';

const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0.json';
const SRCROOT = '%SRCROOT%';

/** The longest question slug in a default category; longer ones are cut and get a hash so they stay distinct. */
const MAX_SLUG_CHARS = 60;

/** `invocations[0]`: whether the run reached a verdict, and why not. */
interface SarifInvocation {
  executionSuccessful: boolean;
  toolExecutionNotifications?: Array<{ level: 'error'; message: { text: string }; descriptor: { id: string } }>;
}

interface SarifResult {
  ruleId: string;
  ruleIndex: number;
  level: SarifLevel;
  message: { text: string };
  locations: Array<{
    physicalLocation: {
      artifactLocation: { uri: string; uriBaseId: string };
      region: { startLine: number; endLine: number };
    };
  }>;
  partialFingerprints: Record<string, string>;
  properties: { severity: Severity; title: string; diff_class?: NonNullable<Finding['diff_class']> };
  /** A finding in the operator's --baseline: reported, marked accepted, never dropped. */
  suppressions?: Array<{ kind: 'external'; justification: string }>;
}

export interface SarifLog {
  $schema: string;
  version: '2.1.0';
  runs: Array<{
    tool: {
      driver: {
        name: 'spelunk';
        version: string;
        semanticVersion: string;
        informationUri?: string;
        rules: SarifRule[];
      };
    };
    automationDetails?: { id: string };
    versionControlProvenance?: VersionControlDetails[];
    invocations: SarifInvocation[];
    originalUriBaseIds: Record<string, { description: { text: string } }>;
    results: SarifResult[];
  }>;
}

/** SARIF's `versionControlProvenance` entry: which repository and commit the results belong to. */
interface VersionControlDetails {
  repositoryUri: string;
  revisionId: string;
  branch?: string;
  mappedTo: { uriBaseId: string };
}

interface SarifInput {
  report: AuditReport;
  /** Real repository root; findings' paths are relative to it. */
  root: string;
  toolVersion: string;
  /** Lines of each file, for the fingerprints. */
  readLines: LineReader;
  /** `run.automationDetails.id` (see sarifCategory); omitted when undefined. */
  automationId?: string;
  /** The audit question, quoted in each rule's description. */
  question?: string;
  /** The repository and commit analysed (sarifProvenance), when known. */
  provenance?: VersionControlDetails;
}

/** Converts an audit report into a SARIF 2.1.0 log that GitHub code scanning accepts and deduplicates across runs. */
export function toSarif(input: SarifInput): SarifLog {
  const ruleIds = [...new Set(input.report.findings.map((f) => f.rule_id))];
  const rules = ruleIds.map((id) => ruleFor(id, input.report.findings.filter((f) => f.rule_id === id), input.question));
  const fingerprints = findingFingerprints(input.report.findings, input.readLines);
  const results = input.report.findings.map((finding, index): SarifResult => ({
    ruleId: finding.rule_id,
    ruleIndex: ruleIds.indexOf(finding.rule_id),
    level: LEVEL[finding.severity],
    message: { text: `${finding.title}\n\n${finding.message}` },
    locations: [
      {
        physicalLocation: {
          artifactLocation: { uri: toUri(finding.path), uriBaseId: SRCROOT },
          region: { startLine: finding.start_line, endLine: finding.end_line },
        },
      },
    ],
    // Stryker disable next-line StringLiteral: findingFingerprints returns one fingerprint per finding; the fallback is never read.
    partialFingerprints: { [FINGERPRINT_KEY]: fingerprints[index] ?? '' },
    properties: { severity: finding.severity, title: finding.title, ...(finding.diff_class ? { diff_class: finding.diff_class } : {}) },
    ...(finding.suppressed === true
      ? { suppressions: [{ kind: 'external' as const, justification: 'accepted in the --baseline file' }] }
      : {}),
  }));
  return runLog(input, rules, [{ executionSuccessful: true }], results);
}

interface SarifFailureInput {
  root: string;
  provenance?: VersionControlDetails;
  toolVersion: string;
  automationId?: string;
  /** Why the run reached no verdict, one line (the result's error message). */
  message: string;
  /** The result's subtype (`error_during_execution`, `error_max_turns`, …), used as the notification's id. */
  reason: string;
}

/**
 * `--sarif-on-error=notification`: a log that says the run failed (`executionSuccessful: false` and a notification)
 * instead of no file at all. `results` stays an empty array because uploaders refuse a run without it.
 */
export function toSarifFailure(input: SarifFailureInput): SarifLog {
  const notification = { level: 'error' as const, message: { text: input.message }, descriptor: { id: input.reason } };
  return runLog(input, [], [{ executionSuccessful: false, toolExecutionNotifications: [notification] }], []);
}

function runLog(
  input: { root: string; toolVersion: string; automationId?: string; provenance?: VersionControlDetails },
  rules: SarifRule[],
  invocations: SarifInvocation[],
  results: SarifResult[],
): SarifLog {
  return {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'spelunk',
            version: input.toolVersion,
            semanticVersion: input.toolVersion,
            ...(INFORMATION_URI === undefined ? {} : { informationUri: INFORMATION_URI }),
            rules,
          },
        },
        ...(input.automationId === undefined ? {} : { automationDetails: { id: input.automationId } }),
        ...(input.provenance === undefined ? {} : { versionControlProvenance: [input.provenance] }),
        invocations,
        // No uri: the runner's absolute path would mean nothing to a reader of the log (and shows where CI ran);
        // consumers resolve %SRCROOT% to their checkout (upload-sarif's checkout_path).
        originalUriBaseIds: { [SRCROOT]: { description: { text: 'The root of the repository analysed; result paths are relative to it.' } } },
        results,
      },
    ],
  };
}

/**
 * `run.automationDetails.id`. GitHub takes the part up to the last "/" as the analysis category and closes alerts of
 * a category that a new upload no longer reports, so each audit question needs its own: the given category, or
 * `spelunk/<slug of the question>/`; a trailing "/" is added when missing so the whole value is the category.
 */
export function sarifCategory(question: string, given: string | null): string {
  if (given !== null) return given.endsWith('/') ? given : `${given}/`;
  const words = question.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  if (words !== '' && words.length <= MAX_SLUG_CHARS) return `spelunk/${words}/`;
  // Cut, empty (a question without ASCII letters) or not: the hash keeps two such questions apart.
  const hash = createHash('sha256').update(question).digest('hex').slice(0, 8);
  const cut = words.slice(0, MAX_SLUG_CHARS).replace(/-+$/, '');
  return `spelunk/${cut === '' ? hash : `${cut}-${hash}`}/`;
}

/**
 * `versionControlProvenance` from the CI's environment: the repository's web address and the commit spelunk read, on
 * GitHub Actions (GITHUB_SERVER_URL/GITHUB_REPOSITORY; branch GITHUB_HEAD_REF on a pull request, else
 * GITHUB_REF_NAME) or GitLab CI (CI_PROJECT_URL; CI_COMMIT_REF_NAME). Elsewhere none: a git remote's URL may carry
 * credentials, and is not read.
 */
export function sarifProvenance(env: Readonly<Record<string, string | undefined>>, commit: string | null): VersionControlDetails | undefined {
  if (commit === null) return undefined;
  const github = env.GITHUB_SERVER_URL?.trim() && env.GITHUB_REPOSITORY?.trim() ? `${env.GITHUB_SERVER_URL.trim().replace(/\/+$/, '')}/${env.GITHUB_REPOSITORY.trim()}` : '';
  const repositoryUri = github || env.CI_PROJECT_URL?.trim() || '';
  if (!/^https?:\/\/[^\s@]+$/.test(repositoryUri)) return undefined;
  const branch = (github ? env.GITHUB_HEAD_REF?.trim() || env.GITHUB_REF_NAME?.trim() : env.CI_COMMIT_REF_NAME?.trim()) || undefined;
  return { repositoryUri, revisionId: commit, ...(branch === undefined ? {} : { branch }), mappedTo: { uriBaseId: SRCROOT } };
}

/** SARIF URIs are URI references: encode each segment (spaces, "#", "%") but keep the "/" separators. */
function toUri(relPosix: string): string {
  return relPosix.split('/').map(encodeURIComponent).join('/');
}

/**
 * Writes the SARIF log atomically (an upload step never sees half a file) and never through a link planted in the
 * repository (see sandbox/safe-write.ts). The path may lie inside the repository: write it after the read-only check.
 */
export async function writeSarif(file: string, sarif: SarifLog, root: string): Promise<string> {
  return writeOutputFile(file, `${JSON.stringify(sarif, null, 2)}\n`, root);
}
