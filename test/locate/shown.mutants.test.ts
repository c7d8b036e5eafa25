import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locate, NO_CODE_WORD } from '../../src/locate/locate.js';
import { makeRepo } from '../support/temp-repo.js';

// What a result shows besides its rank (locate.ts describe, bestSymbols, nameFit) and when the no-code-word note is
// said (isCodeSpecific), on a real repository through the real rg and symbol layer. The ranking tests look at the
// order of files; these hold the symbols and lines a person reads to their docblocks (area "locate-rank").
const FILES: Record<string, string> = {
  // nameFit: 2 for a definition named the term, 1 when one of its words is; three shown, best first, then by line.
  'src/config.ts': [
    'export function loadConfigFile() {}',
    'export function configLoader() {}',
    'export function config() {}',
    'export function other() {}',
    'export function reconfigure() {}',
    'export function configWriter() {}',
  ].join('\n'),
  // A word term also fits a definition word that starts with it; a definition that fits nothing is not shown.
  'src/prefix.ts': ['export function confLoad() {}', 'export function configure() {}', 'export function unrelated() {}'].join('\n'),
  // A term under four characters fits only a definition named exactly like it: the one around the best line is shown.
  'src/short.ts': ['export function cfgReader() {}', 'export function helper() {', "  return 'cfg';", '}'].join('\n'),
  // The best line is a definition's own line: that definition is "around" it.
  'src/around.ts': ['export function alpha() {}', 'export function beta(zebra: number) {', '  return zebra;', '}'].join('\n'),
  // The best line comes before every definition: none is around it, and none is shown.
  'src/late.ts': ['// the walrus is handled below', 'export function later() {}'].join('\n'),
  // Lines: the three worth most (both words), ties by line, shown in line order, trimmed, cut at 200 characters.
  'docs/lines.txt': [
    'quagga alone',
    'zebra alone',
    'zebra and quagga',
    'nothing here',
    '      zebra and quagga again   ',
    'quagga again',
    `zebra and quagga ${'x'.repeat(300)}`,
    'nothing',
    'zebra and quagga, a fourth time',
  ].join('\n'),
  // Worth most first (line 2 holds both words), shown in line order.
  'docs/order.txt': ['zebra', 'zebra and quagga', 'quagga'].join('\n'),
  'src/session.ts': 'export function expireSessions() {}\n// sessions are removed here\n',
};

let root = '';
let cleanup: () => Promise<void> = async () => undefined;
beforeAll(async () => {
  ({ root, cleanup } = await makeRepo(FILES));
});
afterAll(async () => cleanup());

async function resultFor(question: string, file: string) {
  const result = await locate(root, question, { timeoutMs: 20_000, k: 20, history: false });
  const hit = result.results.find((r) => r.path === file);
  expect(hit, `${file} among ${result.results.map((r) => r.path).join(', ')}`).toBeDefined();
  return hit!;
}

describe('the symbols a result shows', () => {
  it.each<[string, string, string, { name: string; line: number }[]]>([
    ['exact first, then word fits by line, three at most', 'config', 'src/config.ts', [
      { name: 'config', line: 3 },
      { name: 'loadConfigFile', line: 1 },
      { name: 'configLoader', line: 2 },
    ]],
    ['a word term fits a definition word it starts; nothing else is shown', 'conf', 'src/prefix.ts', [
      { name: 'confLoad', line: 1 },
      { name: 'configure', line: 2 },
    ]],
    ['a short term fits no word: the definition around the best line', 'cfg', 'src/short.ts', [{ name: 'helper', line: 2 }]],
    ['the best line is a definition line: that definition', 'zebra', 'src/around.ts', [{ name: 'beta', line: 2 }]],
    ['the best line is above every definition: none', 'walrus', 'src/late.ts', []],
  ])('%s', async (_name, question, file, expected) => {
    const hit = await resultFor(question, file);
    expect(hit.symbols.map(({ name, line }) => ({ name, line }))).toEqual(expected);
    expect(hit.symbols.every((s) => s.kind === 'function')).toBe(true);
  });

  it('a definition named exactly like the question, and not one that merely holds it', async () => {
    const hit = await resultFor('unrelated', 'src/prefix.ts');
    expect(hit.symbols).toEqual([{ name: 'unrelated', kind: 'function', line: 3 }]);
    const other = await resultFor('reconfigure', 'src/config.ts');
    expect(other.symbols.map((s) => s.name)).toEqual(['reconfigure']);
  });
});

describe('the lines a result shows', () => {
  it('the three worth most, ties by line, in line order, trimmed and cut', async () => {
    const hit = await resultFor('zebra quagga', 'docs/lines.txt');
    expect(hit.lines).toEqual([
      { line: 3, text: 'zebra and quagga' },
      { line: 5, text: 'zebra and quagga again' },
      { line: 7, text: `zebra and quagga ${'x'.repeat(300)}`.slice(0, 200) },
    ]);
  });

  it('the one worth most is not shown first: lines come in line order', async () => {
    const hit = await resultFor('zebra quagga', 'docs/order.txt');
    expect(hit.lines.map((l) => l.line)).toEqual([1, 2, 3]);
  });

  it('a definition line and the line below it, in line order', async () => {
    const hit = await resultFor('zebra', 'src/around.ts');
    expect(hit.lines).toEqual([
      { line: 2, text: 'export function beta(zebra: number) {' },
      { line: 3, text: 'return zebra;' },
    ]);
  });
});

describe('the note when no word is code-specific', () => {
  it.each<[string, boolean]>([
    ['where are sessions removed', true],
    // Two plain words run together by locate (a compound with parts) are still plain words.
    ['zebra quagga', true],
    ['where is expireSessions', false],
    ['session: where are they removed', false],
    ['src/session.ts', false],
    ['the get$value helper', false],
  ])('%s: %s', async (question, noted) => {
    const result = await locate(root, question, { timeoutMs: 20_000, history: false });
    expect(result.notes.includes(NO_CODE_WORD)).toBe(noted);
  });
});
