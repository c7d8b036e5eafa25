import { describe, expect, it } from 'vitest';
import { isKeyFile, isPushedDown, mentionedPaths } from '../../src/preamble/rank.js';

describe('mentionedPaths', () => {
  it.each([
    ['Tools are in `cli/tools/<tool>`.', ['cli', 'cli/tools']],
    ['see ./src/routes/ and /lib/x.js', ['src', 'src/routes', 'lib', 'lib/x.js']],
    ['no paths here, just words', []],
    ['Tools are in app/tools. The end.', ['app', 'app/tools']],
    ['../outside/dir', ['outside', 'outside/dir']],
  ])('%j → %j', (text, expected) => {
    expect([...mentionedPaths([text])].sort()).toEqual([...expected].sort());
  });

  it('re-roots an ancestor file\'s paths and drops those outside the root', () => {
    const found = mentionedPaths([{ text: 'Tools are in cli/tools/lint; the runtime is in runtime/ops.', below: 'cli/tools' }]);
    expect([...found]).toEqual(['lint']);
  });

  it('keeps the first 16 segments of an endless path (no quadratic work on a hostile text)', () => {
    const text = `${'a/'.repeat(200_000)}${'!'.repeat(20_000)}`;
    const found = mentionedPaths([text]);
    expect(found.size).toBe(16);
    expect(found).toContain(Array(16).fill('a').join('/'));
  });
});

describe('key files and pushed-down trees', () => {
  it.each([
    ['README.md', true],
    ['Cargo.toml', true],
    ['makefile', true],
    ['main.go', true],
    ['notes.txt', false],
  ])('isKeyFile(%j) = %s', (name, expected) => {
    expect(isKeyFile(name)).toBe(expected);
  });

  it.each([
    ['vendor', true],
    ['ISSUE_TEMPLATE', true],
    ['__snapshots__', true],
    ['.yarn', true],
    ['src', false],
    ['packages', false],
  ])('isPushedDown(%j) = %s', (name, expected) => {
    expect(isPushedDown(name)).toBe(expected);
  });
});
