import assert from 'node:assert';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module of the build (scripts/build/lazy-assert.mjs), without type declarations.
import * as standIn from '../../scripts/build/lazy-assert.mjs';

// yargs' `assert` in the bundle (scripts/build.mjs lazyAssert): it must pass and throw exactly where node:assert does,
// with node:assert's own error.
type Check = (actual: unknown, expected: unknown, message?: string) => void;
const rows: Array<[string, unknown, unknown]> = [
  ['the same string', 'a', 'a'],
  ['different strings', 'a', 'b'],
  ['true and true', true, true],
  ['undefined and null', undefined, null],
  ['NaN and NaN', Number.NaN, Number.NaN],
  ['+0 and -0', 0, -0],
  ['two equal objects', { a: 1 }, { a: 1 }],
  ['1 and "1"', 1, '1'],
];

function outcome(check: Check, actual: unknown, expected: unknown): string {
  try {
    check(actual, expected, 'msg');
    return 'passes';
  } catch (error) {
    return `${(error as Error).constructor.name}: ${(error as Error).message}`;
  }
}

describe('the bundle’s stand-in for yargs’ node:assert', () => {
  it.each(rows)('strictEqual, %s', (_name, actual, expected) => {
    expect(outcome(standIn.strictEqual as Check, actual, expected)).toBe(outcome(assert.strictEqual, actual, expected));
  });

  it.each(rows)('notStrictEqual, %s', (_name, actual, expected) => {
    expect(outcome(standIn.notStrictEqual as Check, actual, expected)).toBe(outcome(assert.notStrictEqual, actual, expected));
  });
});
