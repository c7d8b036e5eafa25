import Table from 'cli-table3';
import type { AuditReport } from '../tools/report-findings.js';
import { createPalette } from './color.js';

/** The audit verdict and a findings table, for text output (stdout: it is the result). */
export function renderAudit(report: AuditReport, opts: { color: boolean }): string {
  const p = createPalette(opts.color);
  const verdict = report.verdict === 'pass' ? p.green('PASS') : report.verdict === 'fail' ? p.red('FAIL') : p.yellow('INCONCLUSIVE');
  const lines = [`verdict: ${verdict}`, report.summary];
  if (report.findings.length === 0) return `${lines.join('\n')}\n`;
  const table = new Table({
    head: ['severity', 'rule', 'location', 'title'],
    style: { head: [], border: [], compact: true },
    wordWrap: true,
    colWidths: [10, 24, 34, 48],
  });
  for (const f of report.findings) {
    const where = f.end_line > f.start_line ? `${f.path}:${f.start_line}-${f.end_line}` : `${f.path}:${f.start_line}`;
    // The class and the baseline say why a finding does or does not fail the run (see audit/scope.ts).
    const notes = [f.diff_class, f.suppressed === true ? 'suppressed (baseline)' : undefined].filter((n) => n !== undefined);
    table.push([f.severity, f.rule_id, notes.length > 0 ? `${where}\n${notes.join(', ')}` : where, f.title]);
  }
  if (report.scope !== undefined) lines.push(`scope: ${{ line: 'only changed-line findings', file: 'findings in changed files', repo: 'every finding' }[report.scope]} count for --fail-on`);
  if (report.suppressed !== undefined) lines.push(`baseline: ${report.suppressed} finding(s) suppressed`);
  return `${lines.join('\n')}\n${table.toString()}\n`;
}
