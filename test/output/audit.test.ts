import { describe, expect, it } from 'vitest';
import { renderAudit, textWidth } from '../../src/output/audit.js';
import type { AuditReport, Finding } from '../../src/audit/report.js';
import { stripAnsi } from '../support/ansi.js';

// Audit findings in a terminal (issue 24): every finding shows severity, rule, full path:line, title and message, and
// the layout follows the terminal's width: no line wider than it, nothing cut with an ellipsis.
const LONG_PATH = 'packages/vite/src/node/server/middlewares/transformRequestHandlers/internal/very/deeply/nested/module/resolution/cache.ts';
const MESSAGE =
  'The request URL is decoded with decodeURIComponent and joined to the public directory without normalising it first, so a request for /..%2f..%2fetc/passwd escapes the served root. The check in isFileServingAllowed runs on the undecoded path and never sees the dot segments.';

function finding(over: Partial<Finding> = {}): Finding {
  return {
    rule_id: 'path-traversal',
    severity: 'high',
    title: 'Public directory requests can leave the served root',
    message: MESSAGE,
    path: 'packages/vite/src/node/server/middlewares/static.ts',
    start_line: 118,
    end_line: 131,
    category: 'security',
    ...over,
  };
}

const REPORT: AuditReport = {
  verdict: 'fail',
  summary: 'Two findings: one traversal in the static middleware and a cache key collision.',
  findings: [
    finding(),
    finding({ rule_id: 'cache-key-collision', severity: 'medium', title: 'Cache keys ignore the query', message: 'Short.', path: LONG_PATH, start_line: 7, end_line: 7, diff_class: 'changed-line', suppressed: true }),
  ],
  scope: 'line',
  suppressed: 1,
};

/** The visible lines of a rendering (colour removed). */
const visible = (s: string): string[] => stripAnsi(s).replace(/\n$/, '').split('\n');
/** The text of a block with its wrapping undone: lines trimmed and joined by a space. */
const unwrapped = (lines: string[]): string => lines.map((l) => l.trim()).join(' ');
/** A path broken across lines is joined back without spaces. */
const joined = (lines: string[]): string => lines.map((l) => l.trim()).join('');

describe('renderAudit in a terminal', () => {
  it.each([80, 100, 220])('at %i columns: no line is wider than the terminal, nothing is cut, every field is shown', (width) => {
    for (const color of [false, true]) {
      const lines = visible(renderAudit(REPORT, { color, width }));
      for (const line of lines) expect(textWidth(line), line).toBeLessThanOrEqual(width);
      const text = lines.join('\n');
      expect(text).not.toContain('…');
      expect(lines[0]).toBe('verdict: FAIL');
      for (const field of ['HIGH', 'path-traversal', 'packages/vite/src/node/server/middlewares/static.ts:118-131', 'MEDIUM', 'cache-key-collision']) {
        expect(text).toContain(field);
      }
      expect(unwrapped(lines)).toContain(MESSAGE);
      expect(unwrapped(lines)).toContain('Public directory requests can leave the served root');
      expect(unwrapped(lines)).toContain('changed-line, suppressed (baseline)');
      expect(joined(lines)).toContain(`${LONG_PATH}:7`);
    }
  });

  it('uses the width it has: at 220 columns a message runs past 120 columns, at 80 it wraps', () => {
    const wide = visible(renderAudit(REPORT, { color: false, width: 220 }));
    expect(Math.max(...wide.map((l) => l.length))).toBeGreaterThan(120);
    expect(wide).toContain('HIGH  path-traversal  packages/vite/src/node/server/middlewares/static.ts:118-131');
    const narrow = visible(renderAudit(REPORT, { color: false, width: 80 }));
    expect(narrow.length).toBeGreaterThan(wide.length);
    expect(narrow.find((l) => l.startsWith('   The request URL'))!.length).toBeGreaterThan(70);
  });

  it('puts a location that does not fit beside the rule on its own line, and breaks a path longer than a line at its slashes', () => {
    const lines = visible(renderAudit({ ...REPORT, findings: [REPORT.findings[1]!] }, { color: false, width: 80 }));
    const at = lines.indexOf('MEDIUM  cache-key-collision');
    expect(at).toBeGreaterThan(0);
    const pathLines = lines.slice(at + 1, at + 3);
    expect(pathLines.every((l) => l.startsWith('   packages/') || /^ {3}\S/.test(l))).toBe(true);
    expect(pathLines[0]!.trimEnd().endsWith('/')).toBe(true);
    expect(joined(pathLines)).toBe(`${LONG_PATH}:7`);
    // At 220 the same heading fits on one line.
    expect(visible(renderAudit({ ...REPORT, findings: [REPORT.findings[1]!] }, { color: false, width: 220 }))).toContain(`MEDIUM  cache-key-collision  ${LONG_PATH}:7`);
  });

  it.each([10, 20, 40])('stays within %i columns however narrow, a word longer than a line broken, not cut', (width) => {
    const lines = visible(renderAudit({ ...REPORT, findings: [finding({ message: `x${'y'.repeat(100)}z` })] }, { color: false, width }));
    for (const line of lines) expect(textWidth(line)).toBeLessThanOrEqual(width);
    expect(joined(lines)).toContain(`x${'y'.repeat(100)}z`);
  });

  it('counts wide characters as two columns', () => {
    const title = '路径遍历：公共目录请求可以离开服务根目录'.repeat(4);
    const lines = visible(renderAudit({ ...REPORT, findings: [finding({ title })] }, { color: false, width: 80 }));
    for (const line of lines) expect(textWidth(line)).toBeLessThanOrEqual(80);
    expect(joined(lines)).toContain(title);
    expect(textWidth('路a')).toBe(3);
  });

  it('keeps the message line breaks and shows control characters as escapes', () => {
    const lines = visible(renderAudit({ ...REPORT, findings: [finding({ message: 'First line.\n\nSecond \x1b[31mline\x1b[0m.', title: 'a\u202etitle' })] }, { color: false, width: 80 }));
    expect(lines).toContain('   First line.');
    expect(lines).toContain('   Second \\x1b[31mline\\x1b[0m.');
    expect(lines).toContain('   a\\u202etitle');
  });
});

describe('renderAudit to a pipe or a file (no width)', () => {
  it('wraps nothing: each field on one line, greppable', () => {
    const lines = visible(renderAudit(REPORT, { color: false, width: null }));
    expect(lines).toEqual([
      'verdict: FAIL',
      'Two findings: one traversal in the static middleware and a cache key collision.',
      'scope: only changed-line findings count for --fail-on',
      'baseline: 1 finding(s) suppressed',
      '',
      'HIGH  path-traversal  packages/vite/src/node/server/middlewares/static.ts:118-131',
      '   Public directory requests can leave the served root',
      `   ${MESSAGE}`,
      '',
      `MEDIUM  cache-key-collision  ${LONG_PATH}:7`,
      '   Cache keys ignore the query',
      '   Short.',
      '   changed-line, suppressed (baseline)',
    ]);
  });

  it('without findings: the verdict and the summary only', () => {
    expect(renderAudit({ verdict: 'pass', summary: 'Nothing found.', findings: [] }, { color: false })).toBe('verdict: PASS\nNothing found.\n');
  });
});

// Issue 33: a FAIL verdict that exits 0 says why the gate passed, on the verdict line.
describe('the verdict line says when the gate passes a FAIL', () => {
  const suppressedHigh = finding({ suppressed: true });
  const outside = finding({ rule_id: 'x', diff_class: 'outside-diff' });
  const low = finding({ rule_id: 'y', severity: 'low', diff_class: 'changed-line' });
  it.each<[string, AuditReport, string]>([
    ['all suppressed by the baseline', { ...REPORT, findings: [suppressedHigh, suppressedHigh, suppressedHigh], suppressed: 3 }, 'verdict: FAIL (model) · gate: pass — 3 suppressed by the baseline'],
    ['outside the changed lines', { ...REPORT, findings: [outside], suppressed: 0 }, 'verdict: FAIL (model) · gate: pass — 1 outside the changed lines'],
    ['outside the changed files (scope file)', { ...REPORT, scope: 'file', findings: [outside], suppressed: 0 }, 'verdict: FAIL (model) · gate: pass — 1 outside the changed files'],
    ['below --fail-on, with one suppressed', { ...REPORT, findings: [low, suppressedHigh] }, 'verdict: FAIL (model) · gate: pass — 1 suppressed by the baseline, 1 below --fail-on high'],
    ['a counted high finding: the gate agrees, the plain line', REPORT, 'verdict: FAIL'],
    ['a pass', { ...REPORT, verdict: 'pass', findings: [] }, 'verdict: PASS'],
  ])('%s', (_name, report, first) => {
    expect(visible(renderAudit(report, { color: true, width: null, failOn: 'high' }))[0]).toBe(first);
  });
});
