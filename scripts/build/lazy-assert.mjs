// What yargs' platform shim gets for `import { notStrictEqual, strictEqual } from 'assert'` in the bundle (see
// lazyAssert in scripts/build.mjs): the same decision node:assert makes (Object.is), the real module required only to
// throw its AssertionError, so a start that passes every check never loads it.
export function notStrictEqual(actual, expected, message) {
  if (!Object.is(actual, expected)) return;
  process.getBuiltinModule('node:assert').notStrictEqual(actual, expected, message);
}

export function strictEqual(actual, expected, message) {
  if (Object.is(actual, expected)) return;
  process.getBuiltinModule('node:assert').strictEqual(actual, expected, message);
}
