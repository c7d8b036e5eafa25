import { describe, expect, it } from 'vitest';
import { parseFind } from '../../src/sandbox/policy/find.js';
import type { Role } from '../../src/sandbox/policy/flags.js';
import { lex } from '../../src/sandbox/policy/lexer.js';

/**
 * find's expression parser on its own. The roles it gives each word decide what the sandbox does with it: a starting
 * point is confined to the root as a path, a primary is passed through, a primary's value is confined only when it
 * names a file (-newer README.md), never when it is a date (-newermt 2020-01-01) or a pattern.
 */
const parse = (command: string) => {
  const lexed = lex(command);
  if (!lexed.ok) throw new Error(`lexer refused: ${lexed.reason}`);
  return parseFind(lexed.words.slice(1));
};

const FLAG: Role = { kind: 'flag' };
const START: Role = { kind: 'operand', value: 'path' };
const value = (kind: 'path' | 'pattern' | 'text', flag: string): Role => ({ kind: 'value', value: kind, flag });

describe('parseFind: the role of each word', () => {
  it.each<[string, Role[]]>([
    ['find', []],
    ['find .', [START]],
    ['find -P . -print', [FLAG, START, FLAG]],
    ["find src -name '*.ts' -print", [START, FLAG, value('pattern', '-name'), FLAG]],
    ['find . -newer README.md', [START, FLAG, value('path', '-newer')]],
    // -newerXY: Y = t makes the reference a date string; any other Y names a file to compare with.
    ["find . -newermt '2020-01-01'", [START, FLAG, value('text', '-newermt')]],
    ['find . -newermm README.md', [START, FLAG, value('path', '-newermm')]],
    // ( ) ! and , start the expression like a dash word does, so they are never taken for starting points.
    ["find . '(' -name a ')'", [START, FLAG, FLAG, value('pattern', '-name'), FLAG]],
    ["find . ')'", [START, FLAG]],
    ["find . '!' -empty", [START, FLAG, FLAG]],
    ['find . , -print', [START, FLAG, FLAG]],
  ])('%j', (command, roles) => {
    expect(parse(command)).toEqual({ ok: true, roles });
  });
});

describe('parseFind: refusals', () => {
  it.each<[string, string]>([
    // A lone "-" is not an expression (GNU find's looks_like_expression wants more after the dash) but stdin.
    ['find -', '"-" (standard input) is not a starting point; give a directory such as .'],
    ['find . -', '"-" (standard input) is not a starting point'],
    ['find . -H', 'find -H must come before the starting points, and only -P is accepted'],
    ['find . -P', 'find -P must come before the starting points'],
    ['find . -L', 'find -L must come before the starting points'],
    ['find . -regextype foo', 'accepts only: findutils-default, ed, emacs, gnu-awk'],
  ])('%j is refused (%s)', (command, fragment) => {
    expect(parse(command)).toEqual({ ok: false, reason: expect.stringContaining(fragment) });
  });
});
