import { promises as fs } from 'node:fs';
import { UsageError } from '../errors.js';
import { findingFingerprints } from './fingerprint.js';
import { OutputPathRefused, resolveOutputPath, writeOutputFile } from '../sandbox/safe-write.js';
import type { AuditReport, Finding } from './report.js';
import type { ChangedFile } from './diff.js';

/** Where a finding lies relative to the audited change. */
type DiffClass = 'changed-line' | 'changed-file' | 'outside-diff';
/** Which findings count for --fail-on: those in changed lines (default with a diff), in changed files, or anywhere. */
export type Scope = 'line' | 'file' | 'repo';
export const SCOPES: readonly Scope[] = ['line', 'file', 'repo'];

/** Largest baseline file read, in bytes. */
const MAX_BASELINE_BYTES = 16 * 1024 * 1024;
const FINGERPRINT = /^[0-9a-f]{64}(?::\d{1,9})?$/;

/** The class of one finding: any of its lines added by the change, its file changed, or neither. */
export function classify(finding: Pick<Finding, 'path' | 'start_line' | 'end_line'>, files: readonly ChangedFile[]): DiffClass {
  const file = files.find((f) => f.path === finding.path);
  if (file === undefined) return 'outside-diff';
  const touches = file.lines.some(([a, b]) => a <= finding.end_line && b >= finding.start_line);
  return touches ? 'changed-line' : 'changed-file';
}

/** Whether a finding counts for --fail-on: never when baselined; by its class when the audit is scoped to a change. */
export function countsForFailOn(finding: Finding, scope: Scope | undefined): boolean {
  if (finding.suppressed === true) return false;
  if (scope === undefined || scope === 'repo' || finding.diff_class === undefined) return true;
  return scope === 'file' ? finding.diff_class !== 'outside-diff' : finding.diff_class === 'changed-line';
}

interface ScopeOptions {
  /** The change, when the audit has one (`--diff`, `--diff-file`). */
  files?: readonly ChangedFile[];
  scope?: Scope;
  /** Accepted fingerprints (`--baseline`); matching findings are kept, marked suppressed and counted. */
  baseline?: ReadonlySet<string>;
  readLines: (relPath: string) => string[] | null;
}

/** The report with each finding's class and suppression, the scope, and the suppressed count. Never drops a finding. */
export function applyScope(report: AuditReport, opts: ScopeOptions): AuditReport {
  const prints = opts.baseline === undefined ? [] : findingFingerprints(report.findings, opts.readLines);
  const findings = report.findings.map((finding, i): Finding => ({
    ...finding,
    ...(opts.files === undefined ? {} : { diff_class: classify(finding, opts.files) }),
    ...(opts.baseline?.has(prints[i] ?? '') === true ? { suppressed: true } : {}),
  }));
  const suppressed = findings.filter((f) => f.suppressed === true).length;
  return {
    ...report,
    findings,
    ...(opts.files === undefined ? {} : { scope: opts.scope ?? 'line' }),
    ...(opts.baseline === undefined ? {} : { suppressed }),
  };
}

/**
 * The operator's baseline file: `{"spelunk_baseline": 1, "fingerprints": [...]}` (SARIF partial fingerprints). It
 * must lie outside the repository: a change under audit could otherwise add its own findings to it. Absent is
 * allowed only when it is about to be written (--update-baseline). Throws UsageError.
 */
export async function readBaseline(file: string, root: string, creating: boolean): Promise<Set<string>> {
  await assertOutside(file, root);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
    if (code === 'ENOENT' && creating) return new Set();
    throw new UsageError(`--baseline ${file}: cannot be read (${code}); create it with --update-baseline`);
  }
  if (text.length > MAX_BASELINE_BYTES) throw new UsageError(`--baseline ${file}: larger than ${MAX_BASELINE_BYTES} bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`--baseline ${file}: not JSON; write it with --update-baseline`);
  }
  const prints = (parsed as { fingerprints?: unknown }).fingerprints;
  // Fingerprints as writeBaseline writes them (a sha256, ":N" for repeats): stored input is checked, not trusted.
  if (!Array.isArray(prints) || !prints.every((p) => typeof p === 'string' && FINGERPRINT.test(p))) {
    throw new UsageError(`--baseline ${file}: expected {"spelunk_baseline": 1, "fingerprints": ["…"]}; write it with --update-baseline`);
  }
  return new Set(prints as string[]);
}

/** Writes every finding's fingerprint as the new baseline (atomically, never through a link in the repository). */
export async function writeBaseline(file: string, report: AuditReport, readLines: ScopeOptions['readLines'], root: string): Promise<void> {
  const fingerprints = [...new Set(findingFingerprints(report.findings, readLines))].sort();
  await writeOutputFile(file, `${JSON.stringify({ spelunk_baseline: 1, fingerprints }, null, 2)}\n`, root);
}

/**
 * The baseline's real location (resolved without following any link planted in the repository: one there is refused)
 * must not be inside the root.
 */
async function assertOutside(file: string, root: string): Promise<void> {
  const where = await resolveOutputPath(file, root).catch((error: Error) => {
    // A missing directory is reported by the read (or the write) with its own message.
    if (error instanceof OutputPathRefused && error.message.includes('(ENOENT)')) return null;
    throw new UsageError(`--baseline ${file}: ${error.message}`);
  });
  if (where?.inside === true) {
    throw new UsageError(`--baseline ${file} is inside the repository, where the change being audited could edit it; keep the baseline outside (e.g. in the CI workspace)`);
  }
}
