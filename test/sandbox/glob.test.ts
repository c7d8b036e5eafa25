import { describe, expect, it } from 'vitest';
import { compileSegment, globMatch } from '../../src/sandbox/policy/glob.js';

const match = (pattern: string, name: string): boolean => globMatch(compileSegment(pattern), name);

describe('glob matching (bash patterns, one path segment)', () => {
  it.each<[string, string, boolean]>([
    ['*', 'anything', true],
    ['*', '', true],
    ['*.ts', 'a.ts', true],
    ['*.ts', 'a.tsx', false],
    ['*.ts', '.ts', true],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'aXbYc', true],
    ['a*b*c', 'aXbY', false],
    ['a*b*c', 'acb', false],
    ['*a*', 'bab', true],
    ['**', 'x', true],
    ['?', 'a', true],
    ['?', '', false],
    ['?', 'ab', false],
    ['??.md', 'ab.md', true],
    ['?', '日', true],
    ['?', '😀', true],
    ['[ab].ts', 'a.ts', true],
    ['[ab].ts', 'c.ts', false],
    ['[!a].ts', 'b.ts', true],
    ['[!a].ts', 'a.ts', false],
    ['[^a].ts', 'a.ts', false],
    ['[a-c]', 'b', true],
    ['[a-c]', 'd', false],
    ['[-a]', '-', true],
    ['[a-]', '-', true],
    ['[]a]', ']', true],
    ['[!]a]', 'b', true],
    ['[', '[', true],
    ['[ab', '[ab', true],
    ['x[', 'x[', true],
    ['*Z', 'aaaaZ', true],
    ['*Z', 'aaaa', false],
    ['a*a*a*a*b', 'aaaaaaaaaaaaaaaaaaaa', false],
    ['*?*?*', 'ab', true],
    ['*?*?*', 'a', false],
  ])('%j matches %j: %s', (pattern, name, expected) => {
    expect(match(pattern, name)).toBe(expected);
  });

  it('treats quoted characters literally', () => {
    // `'*'.ts`: the star was quoted, so only a file literally named *.ts matches.
    const tokens = compileSegment('*.ts', [false, false, false, false]);
    expect(globMatch(tokens, '*.ts')).toBe(true);
    expect(globMatch(tokens, 'a.ts')).toBe(false);
  });

  it('is linear, not exponential: 30 stars against long names that almost match', () => {
    // Each of these took 27-100 s with the RegExp the matcher replaced; a regression would hang this test.
    const tokens = compileSegment(`${'*'.repeat(30)}Z`);
    for (let i = 0; i < 200; i += 1) expect(globMatch(tokens, `${'a'.repeat(300)}${i}`)).toBe(false);
    expect(globMatch(compileSegment(`${'a*'.repeat(30)}b`), 'a'.repeat(5000))).toBe(false);
  });
});
