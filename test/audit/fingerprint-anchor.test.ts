import { describe, expect, it } from 'vitest';
import type { ChangedFile } from '../../src/audit/diff.js';
import { anchorFingerprints, findingFingerprints } from '../../src/audit/fingerprint.js';
import type { Finding } from '../../src/audit/report.js';
import { buildReview, FINGERPRINT_MARKER } from '../../src/audit/review.js';

/** A file where the flagged call spans lines 11-12, with the same call repeated at 20-21 and blank lines about. */
const FILE = [
  "const { exec } = require('child_process');", // 1
  '', '', '', '', '', '', '', '',
  'function run(user) {', // 10
  "  exec('grep ' + user +", // 11
  "    ' /etc/passwd');", // 12
  '}', // 13
  '', '', '', '', '', '',
  "  exec('grep ' + user +", // 20
  "    ' /etc/passwd');", // 21
  '',
  'function other() { return 1; }', // 23
];
const BY_PATH: Record<string, string[]> = { 'src/a.js': FILE, 'src/b.js': FILE };
const read = (p: string) => BY_PATH[p] ?? null;
const finding = (start: number, end: number, over: Partial<Finding> = {}): Finding => ({ rule_id: 'shell-injection', severity: 'high', title: 'exec', message: 'm', path: 'src/a.js', start_line: start, end_line: end, ...over });
const own = (f: Finding) => anchorFingerprints([f], read)[0]!.own;

describe('anchorFingerprints: a finding is its rule, path and the code of its anchor line', () => {
  it.each<[string, Finding, Finding, boolean]>([
    ['the same range', finding(11, 12), finding(11, 12), true],
    ['the range grows by a line (11-12 → 11-13)', finding(11, 12), finding(11, 13), true],
    ['a blank start line is skipped to the code', finding(10, 10), finding(8, 10), true],
    ['the same code further down is another finding (":2")', finding(11, 12), finding(20, 21), false],
    ['another rule on the same line', finding(11, 12), finding(11, 12, { rule_id: 'path-traversal' }), false],
    ['another file with the same code', finding(11, 12), finding(11, 12, { path: 'src/b.js' }), false],
    ['another line of code', finding(11, 12), finding(23, 23), false],
  ])('%s', (_name, a, b, same) => {
    expect(own(a) === own(b)).toBe(same);
  });

  it('a range that moves by a few lines keeps the earlier anchor among its nearby fingerprints; far away it does not', () => {
    const earlier = own(finding(11, 12));
    expect(anchorFingerprints([finding(12, 13)], read)[0]!.nearby).toContain(earlier);
    expect(anchorFingerprints([finding(10, 10)], read)[0]!.nearby).toContain(earlier);
    expect(anchorFingerprints([finding(23, 23)], read)[0]!.nearby).not.toContain(earlier);
  });

  it('an unreadable file or a range past its end falls back to the title, as one fingerprint', () => {
    const gone = anchorFingerprints([finding(1, 1, { path: 'src/gone.js' }), finding(90, 91)], read);
    for (const a of gone) expect(a.nearby).toEqual([a.own]);
    expect(gone[0]!.own).not.toBe(gone[1]!.own);
    expect(gone[0]!.own).toMatch(/^[0-9a-f]{64}:1$/);
  });

  it('SARIF keeps its own fingerprint, over the whole range (11-12 and 11-13 are two code-scanning results)', () => {
    const [a, b] = findingFingerprints([finding(11, 12), finding(11, 13)], read);
    expect(a).not.toBe(b);
  });
});

describe('buildReview with anchors: what an earlier run posted is not posted again', () => {
  const files: ChangedFile[] = [{ path: 'src/a.js', lines: [[1, 23]], deleted: false }];
  const review = (findings: Finding[], posted: string[]) =>
    buildReview({
      report: { verdict: 'fail', summary: 's', findings },
      files,
      fingerprints: anchorFingerprints(findings, read),
      posted: new Set(posted),
      failed: true,
      failOn: 'high',
      question: 'q',
      category: 'c/',
      commitId: null,
    });
  const markers = (findings: Finding[], posted: string[] = []) => review(findings, posted).comments.map((c) => FINGERPRINT_MARKER.exec(c.body)![1]!);

  it.each<[string, Finding[], Finding[], number]>([
    ['the same findings', [finding(11, 12), finding(20, 21)], [finding(11, 12), finding(20, 21)], 0],
    ['both ranges moved by one line', [finding(11, 12), finding(20, 21)], [finding(12, 13), finding(21, 22)], 0],
    ['one range grew, one finding is new', [finding(11, 12)], [finding(11, 13), finding(23, 23)], 1],
    ['two findings near one posted comment: one is covered, the other is new', [finding(11, 12)], [finding(11, 12), finding(10, 10)], 1],
    ['the same finding twice in one run is said once', [], [finding(11, 12), finding(11, 13)], 1],
  ])('%s', (_name, before, after, fresh) => {
    const posted = markers(before);
    expect(review(after, posted).comments).toHaveLength(fresh);
  });

  it('the summary\'s marker carries the category, the verdict and the event', () => {
    expect(review([], []).body).toMatch(/<!-- spelunk:review category=c\/ verdict=fail event=REQUEST_CHANGES -->$/);
  });
});
