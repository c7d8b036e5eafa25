import { describe, expect, it } from 'vitest';
import type { ChangedFile } from '../../src/audit/diff.js';
import type { FindingAnchor } from '../../src/audit/fingerprint.js';
import type { Finding } from '../../src/audit/report.js';
import { buildReview, type ReviewInput } from '../../src/audit/review.js';

// The review's exact text and its matching of earlier comments, where the mutation run of src/audit/review.ts found
// only fragments checked (scripts/mutation-areas.json, area "audit"). What GitHub shows is pinned whole.
const FP = (n: number) => `${n.toString(16).padStart(64, 'a')}:1`;
const FILES: ChangedFile[] = [{ path: 'src/a.js', lines: [[3, 5], [10, 10]], deleted: false }];
const finding = (over: Partial<Finding>): Finding => ({ rule_id: 'r', severity: 'high', title: 't', message: 'm', path: 'src/a.js', start_line: 4, end_line: 4, ...over });
const anchors = (n: number): FindingAnchor[] => Array.from({ length: n }, (_, i) => ({ own: FP(i + 1), nearby: [FP(i + 1)] }));
const input = (findings: Finding[], over: Partial<ReviewInput> = {}): ReviewInput => ({
  report: { verdict: 'fail', summary: 's', findings },
  files: FILES,
  fingerprints: anchors(findings.length),
  posted: new Set(),
  failed: true,
  failOn: 'high',
  question: 'q?',
  category: 'spelunk/q/',
  commitId: null,
  ...over,
});

describe('buildReview: the text GitHub shows', () => {
  it('an inline comment: severity, title, rule, range, message, question, marker', () => {
    const review = buildReview(input([finding({ start_line: 3, end_line: 5, message: 'one\ntwo & <three>' }), finding({ start_line: 10, end_line: 10 })]));
    expect(review.comments.map((c) => c.body)).toEqual([
      ['**high: t** · `r` (lines 3-5)', '', 'one\ntwo &amp; &lt;three&gt;', '', '<sub>spelunk audit: q?</sub>', `<!-- spelunk:fingerprint=${FP(1)} -->`].join('\n'),
      ['**high: t** · `r`', '', 'm', '', '<sub>spelunk audit: q?</sub>', `<!-- spelunk:fingerprint=${FP(2)} -->`].join('\n'),
    ]);
  });

  it('the summary of a failing review with every kind of finding', () => {
    const review = buildReview(input(
      [finding({}), finding({ start_line: 6, end_line: 9 }), finding({ start_line: 7, end_line: 7, severity: 'low' }), finding({ start_line: 10, end_line: 10 }), finding({ suppressed: true })],
      { posted: new Set([FP(4)]), category: 'spelunk/q a-->b' },
    ));
    expect(review.body).toBe([
      '### spelunk audit: FAIL', '', '> q?', '', 's', '',
      '- 1 new finding(s) on changed lines, commented inline',
      '- 1 finding(s) already posted in an earlier review, left out',
      '- 2 finding(s) outside the changed lines, listed here',
      '- 1 finding(s) accepted in the baseline, not repeated',
      '- fails at --fail-on high: changes requested',
      '', '#### Outside the changed lines', '',
      '- **high: t** · `src/a.js:6-9` · `r`',
      '- **low: t** · `src/a.js:7` · `r`',
      '', '<!-- spelunk:review category=spelunk/q_ab verdict=fail event=REQUEST_CHANGES -->',
    ].join('\n'));
  });

  it.each([
    ['pass', 'PASS'],
    ['inconclusive', 'INCONCLUSIVE'],
  ] as const)('the summary of a %s review with nothing to say', (verdict, word) => {
    const review = buildReview(input([], { failed: false, failOn: 'medium', report: { verdict, summary: 'fine', findings: [] } }));
    expect(review.body).toBe([
      `### spelunk audit: ${word}`, '', '> q?', '', 'fine', '',
      '- 0 new finding(s) on changed lines, commented inline',
      '- 0 finding(s) already posted in an earlier review, left out',
      '- 0 finding(s) outside the changed lines',
      '- nothing at or above --fail-on medium counts against this change',
      '', `<!-- spelunk:review category=spelunk/q/ verdict=${verdict} event=COMMENT -->`,
    ].join('\n'));
  });

  it.each([
    [50, null],
    [52, '- … and 2 more (see the SARIF upload or the json result)'],
  ])('%s findings outside the changed lines: 50 listed, the rest counted', (n, more) => {
    const findings = Array.from({ length: n }, (_, i) => finding({ start_line: 100 + i, end_line: 100 + i }));
    const lines = buildReview(input(findings)).body.split('\n');
    expect(lines.filter((l) => l.startsWith('- **high: t** · `src/a.js:1'))).toHaveLength(50);
    expect(lines.at(-3)).toBe(more ?? '- **high: t** · `src/a.js:149` · `r`');
  });

  it.each([
    [4_000, 'x'.repeat(4_000)],
    [4_001, `${'x'.repeat(4_000)}… [cut at 4000 characters]`],
  ])('a message of %s characters is shown as it is up to 4,000, then cut', (n, shown) => {
    const review = buildReview(input([finding({ message: 'x'.repeat(n) })], { report: { verdict: 'fail', summary: 'x'.repeat(n), findings: [finding({ message: 'x'.repeat(n) })] } }));
    expect(review.comments[0]!.body.split('\n')[2]).toBe(shown);
    expect(review.body.split('\n')[4]).toBe(shown);
  });

  it('a finding without a fingerprint still gets its comment (with an empty marker)', () => {
    expect(buildReview(input([finding({})], { fingerprints: [] })).comments[0]!.body).toMatch(/<!-- spelunk:fingerprint= -->$/);
  });
});

describe('buildReview: which findings an earlier review already covers', () => {
  const lines = (review: ReturnType<typeof buildReview>) => review.comments.map((c) => c.line);

  it('a posted fingerprint covers one finding: its own anchor before a neighbour\'s nearby one', () => {
    // Finding 2 (line 10) was posted by its own anchor; finding 1 (line 4) only has it nearby: it is new.
    const fingerprints = [{ own: FP(1), nearby: [FP(1), FP(2)] }, { own: FP(2), nearby: [FP(2)] }];
    const review = buildReview(input([finding({}), finding({ start_line: 10, end_line: 10 })], { fingerprints, posted: new Set([FP(2)]) }));
    expect(lines(review)).toEqual([4]);
  });

  it('a finding covered by its own anchor does not also use up a nearby fingerprint another needs', () => {
    const fingerprints = [{ own: FP(1), nearby: [FP(1), FP(3)] }, { own: FP(2), nearby: [FP(2), FP(3)] }];
    const review = buildReview(input([finding({}), finding({ start_line: 10, end_line: 10 })], { fingerprints, posted: new Set([FP(1), FP(3)]) }));
    expect(lines(review)).toEqual([]);
    expect(review.body).toContain('- 2 finding(s) already posted in an earlier review, left out');
  });

  it('two findings of this run on one anchor are said once, a finding marked not suppressed included', () => {
    const fingerprints = [{ own: FP(1), nearby: [FP(1)] }, { own: FP(1), nearby: [FP(1)] }];
    const review = buildReview(input([finding({}), finding({ start_line: 5, end_line: 5, suppressed: false })], { fingerprints }));
    expect(lines(review)).toEqual([4]);
  });
});
