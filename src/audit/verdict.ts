import { EXIT, type ExitCode } from '../exit-codes.js';
import { severityAtLeast, type AuditReport, type Severity } from './report.js';
import { countsForFailOn } from './scope.js';

/**
 * Exit code of an audit: pass → 0; inconclusive or no report → 5; fail → 4 when some valid finding is at or above
 * `failOn`, 0 when every finding is below it (that is what a threshold means), and 5 when a "fail" has no valid finding
 * left to point at (an unsupported fail cannot gate a merge, and cannot honestly pass either). Only findings that
 * count fail the run: not the baselined ones, and with a diff only those in the scope (changed lines by default).
 */
export function verdictExitCode(report: AuditReport | null, failOn: Severity): ExitCode {
  if (report === null || report.verdict === 'inconclusive') return EXIT.auditInconclusive;
  if (report.verdict === 'pass') return EXIT.ok;
  if (report.findings.length === 0) return EXIT.auditInconclusive;
  return report.findings.some((f) => countsForFailOn(f, report.scope) && severityAtLeast(f.severity, failOn)) ? EXIT.auditFailed : EXIT.ok;
}
