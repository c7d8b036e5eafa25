import { describe, expect, it } from 'vitest';
import { expandBraces, stem, termsOf, withoutCommitType } from '../../src/locate/query.js';

// Whole term lists (text, kind, weight, whole word, scope, compound parts) for a few questions, where the tests of
// query.test.ts check that a term is among them (scripts/mutation-areas.json, area "locate"). Each list was read
// through by hand: most specific first, stop words out, the leading verb and a flag's spellings weighted down.
type Row = [string, string, number, boolean, boolean | null, string[] | null];
const rows = (question: string): Row[] => termsOf(question).map((t) => [t.text, t.kind, t.weight, t.wholeWord, t.scope ?? null, t.parts ? [...t.parts] : null]);

describe('termsOf: every field of every term', () => {
  it.each<[string, Row[]]>([
    ['Where is createServer called?', [
      ['createserver', 'identifier', 2, false, null, null], ['create', 'word', 1, false, null, null], ['server', 'word', 1, false, null, null],
      ['call', 'word', 1, false, null, null],
    ]],
    ['fix(parser): forbid `let x!` in the --after-context handler', [
      ['let x!', 'quoted', 2, false, null, null], ['context', 'word', 1, false, null, null], ['handler', 'word', 1, false, null, null],
      ['forbid', 'word', 1, false, null, null], ['parser', 'word', 1, false, true, null], ['let', 'word', 1, true, null, null],
      ['after-context', 'quoted', 0.5, false, null, null], ['after_context', 'identifier', 0.5, false, null, null], ['aftercontext', 'identifier', 0.5, false, null, null],
    ]],
    ['how are trailing commas printed', [
      ['comma', 'word', 1, false, null, null], ['print', 'word', 1, false, null, null], ['trail', 'word', 1, false, null, null],
      ['trailingcommas', 'identifier', 1, false, null, ['trail', 'comma']], ['commasprinted', 'identifier', 1, false, null, ['comma', 'print']],
    ]],
    ['Add types for `@babel/standalone` in packages/babel-core/src/index.ts', [
      ['packages/babel-core/src/index.ts', 'path', 2, false, null, null], ['@babel/standalone', 'quoted', 2, false, null, null],
      ['babel-standalone', 'path', 2, false, null, null], ['index.ts', 'path', 2, false, null, null], ['standalone', 'word', 1, false, null, null],
      ['package', 'word', 1, false, null, null], ['babel', 'word', 1, false, null, null], ['index', 'word', 1, false, null, null],
      ['core', 'word', 1, false, null, null], ['type', 'word', 1, false, null, null], ['src', 'word', 1, true, null, null],
      ['add', 'word', 0.4, true, null, null], ['addtypes', 'identifier', 1, false, null, ['add', 'type']],
    ]],
    ['Remove `Scope#buildUndefinedNode` from Runtime::block_on', [
      ['scope.buildundefinednode', 'identifier', 2, false, null, null], ['buildundefinednode', 'identifier', 2, false, null, null],
      ['runtime.block_on', 'identifier', 2, false, null, null], ['block_on', 'identifier', 2, false, null, null], ['runtime', 'word', 1, false, null, null],
      ['undefin', 'word', 1, false, null, null], ['block', 'word', 1, false, null, null], ['build', 'word', 1, false, null, null],
      ['scope', 'word', 1, false, null, null], ['node', 'word', 1, false, null, null], ['remove', 'word', 0.4, false, null, null],
    ]],
  ])('%s', (question, expected) => {
    expect(rows(question)).toEqual(expected);
  });
});

describe('the helpers, edge by edge', () => {
  it.each([
    ['queries', 'quer'], ['mapping', 'mapping'], ['wrapped', 'wrap'], ['bundled', 'bundl'], ['stopped', 'stop'], ['passes', 'pass'], ['boxes', 'boxes'], ['indexes', 'index'],
    ['matches', 'match'], ['quickly', 'quick'], ['routers', 'router'], ['class', 'class'], ['status', 'status'], ['analysis', 'analysis'],
    ['calls', 'call'], ['killed', 'kill'], ['buzzing', 'buzz'], ['cats', 'cats'], ['ties', 'ties'], ['dies', 'dies'],
  ])('stem(%s) = %s', (word, expected) => {
    expect(stem(word)).toBe(expected);
  });

  it.each([
    ['getAll{Prev,Next}Siblings', 'getAllPrevSiblings getAllNextSiblings'],
    ['{a,b,c,d,e,f}', 'a b c d e f'],
    ['{a,b,c,d,e,f,g}', '{a,b,c,d,e,f,g}'],
    ['{a}', '{a}'],
  ])('expandBraces(%s)', (text, expected) => {
    expect(expandBraces(text)).toBe(expected);
  });

  it.each([
    ['fix: crash on start', 'crash on start'],
    ['feat(parser, lexer)!: tokens', 'parser, lexer: tokens'],
    ['test(router): wildcard', 'router: test wildcard'],
    ['docs: README', 'docs README'],
    ['chore(x y): z', 'z'],
    ['fixes: crash', 'fixes: crash'],
  ])('withoutCommitType(%s)', (question, expected) => {
    expect(withoutCommitType(question)).toBe(expected);
  });
});
