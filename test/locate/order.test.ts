import { describe, expect, it } from 'vitest';
import { sortedByScore } from '../../src/locate/locate.js';
import type { Scored } from '../../src/locate/score.js';

// locate's order: the score rounded to thousandths, best first, then the path (so float noise never reorders two runs).
const scored = (path: string, score: number): Scored => ({ path, score, evidence: [], pathEvidence: [] });

describe('sortedByScore: best first, ties by path', () => {
  it.each<[string, [string, number][], string[]]>([
    ['higher scores first', [['a', 1], ['b', 3], ['c', 2]], ['b', 'c', 'a']],
    ['equal scores by path', [['c', 1], ['a', 1], ['b', 1]], ['a', 'b', 'c']],
    ['scores equal once rounded are ties', [['b', 1.0004], ['a', 1.0001], ['c', 1.0006]], ['c', 'a', 'b']],
    ['paths compared by code unit, not locale', [['b', 1], ['B', 1], ['a', 1]], ['B', 'a', 'b']],
    ['a prefix before its extensions', [['ab', 1], ['a', 1]], ['a', 'ab']],
    ['none', [], []],
  ])('%s', (_name, list, expected) => {
    const input = list.map(([p, s]) => scored(p, s));
    const copy = [...input];
    expect(sortedByScore(input).map((s) => s.path)).toEqual(expected);
    expect(input).toEqual(copy);
  });

  it('gives back the very objects', () => {
    const a = scored('a', 2);
    const b = scored('b', 1);
    const out = sortedByScore([b, a]);
    expect(out[0]).toBe(a);
    expect(out[1]).toBe(b);
  });
});
