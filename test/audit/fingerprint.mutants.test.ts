import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { anchorFingerprints, findingFingerprints } from '../../src/audit/fingerprint.js';
import type { Finding } from '../../src/audit/report.js';

// The edges of the review's and SARIF's fingerprints that the mutation run of src/audit/fingerprint.ts found untested
// (scripts/mutation-areas.json, area "audit"): which lines a window holds, occurrences, whitespace, the range's end.
const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const finding = (start: number, end: number, over: Partial<Finding> = {}): Finding =>
  ({ rule_id: 'r', severity: 'high', title: 'T', message: 'm', path: 'a.js', start_line: start, end_line: end, ...over });
const lineFp = (code: string, n: number, path = 'a.js') => `${sha(`r\0${path}\0${code}`)}:${n}`;
const titleFp = (title = 'T', path = 'a.js') => `${sha(`r\0${path}\0title:${title}`)}:1`;
const reader = (files: Record<string, string[]>) => (p: string) => files[p] ?? null;

const TEN = ['l1()', 'l2()', 'l3()', 'l4()', '', 'l6()', 'l7()', 'l8()', 'l9()', 'l10()'];

describe('anchorFingerprints: the window, the anchor and its occurrence', () => {
  it('nearby holds the anchor first, then every non-blank line within 3 of the range, the last one included', () => {
    const [anchor] = anchorFingerprints([finding(6, 6)], reader({ 'a.js': TEN }));
    expect(anchor!.own).toBe(lineFp('l6()', 1));
    expect(anchor!.nearby).toEqual([lineFp('l6()', 1), lineFp('l3()', 1), lineFp('l4()', 1), lineFp('l7()', 1), lineFp('l8()', 1), lineFp('l9()', 1)]);
  });

  it('a range past the file\'s end, or one of blank lines only, is keyed by its title', () => {
    const read = reader({ 'a.js': TEN });
    expect(anchorFingerprints([finding(9, 11)], read)[0]).toEqual({ own: titleFp(), nearby: [titleFp()] });
    expect(anchorFingerprints([finding(5, 5)], read)[0]).toEqual({ own: titleFp(), nearby: [titleFp()] });
    // Its last line is still code.
    expect(anchorFingerprints([finding(10, 10)], read)[0]!.own).toBe(lineFp('l10()', 1));
  });

  it('the same code on the next line is the second occurrence, not the first\'s', () => {
    const read = reader({ 'a.js': ['x()', 'dup()', 'dup()', 'y()'] });
    expect(anchorFingerprints([finding(2, 2), finding(3, 3)], read).map((a) => a.own)).toEqual([lineFp('dup()', 1), lineFp('dup()', 2)]);
  });

  it('whitespace runs are one space; different code is a different finding', () => {
    const read = reader({ 'a.js': ['f(a,  b)', '  f(a, b)\t', 'f(a,b)'] });
    const owns = anchorFingerprints([finding(1, 1), finding(2, 2), finding(3, 3)], read).map((a) => a.own);
    expect(owns).toEqual([lineFp('f(a, b)', 1), lineFp('f(a, b)', 2), lineFp('f(a,b)', 1)]);
  });

  it('each file is read once however many findings it has', () => {
    const reads: string[] = [];
    const read = (p: string) => (reads.push(p), TEN);
    anchorFingerprints([finding(1, 1), finding(2, 2), finding(3, 3, { path: 'b.js' })], read);
    findingFingerprints([finding(1, 1), finding(2, 2)], read);
    expect(reads).toEqual(['a.js', 'b.js', 'a.js']);
  });
});

describe('findingFingerprints (SARIF): the whole range\'s code', () => {
  it('a range that ends on the last line hashes its code, not its title', () => {
    const read = reader({ 'a.js': ['a()', 'b(x,   y)'] });
    const [fp] = findingFingerprints([finding(1, 2)], read);
    expect(fp).toBe(`${sha('r\0a.js\0a()\nb(x, y)')}:1`);
    expect(findingFingerprints([finding(1, 2, { title: 'other' })], read)).toEqual([fp]);
  });

  it('a secret is keyed by its kind and path, never by the line that holds it', () => {
    const secret = (over: Partial<Finding>) => finding(1, 1, { rule_id: 'secret', title: 'AWS key', ...over });
    const [a] = findingFingerprints([secret({})], reader({ 'a.js': ['key = "AKIA1"'] }));
    expect(a).toBe(`${sha('secret\0a.js\0secret:AWS key')}:1`);
    expect(findingFingerprints([secret({})], reader({ 'a.js': ['key = "AKIA2"'] }))).toEqual([a]);
    expect(findingFingerprints([secret({ title: 'GitHub token' })], reader({ 'a.js': ['key = "AKIA1"'] }))).not.toEqual([a]);
  });
});
