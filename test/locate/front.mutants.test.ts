import { describe, expect, it } from 'vitest';
import { firstTurnHint, withHint } from '../../src/locate/hint.js';
import type { LocateResult } from '../../src/locate/locate.js';
import { renderJson, renderText } from '../../src/locate/render.js';
import { useRepo } from '../support/temp-repo.js';

// What a user (or the model, through --hint) reads of locate: the text form byte for byte, and the hint's rules.

const result = (results: LocateResult['results'], notes: string[] = []): LocateResult => ({ type: 'locate', query: 'q', results, notes });

describe('renderText', () => {
  it.each<[string, LocateResult, string]>([
    ['nothing found', result([]), 'no matching files\n'],
    [
      'files best first: rank, path and score, then symbols and lines as path:line',
      result([
        { path: 'src/a.ts', score: 1.23456, symbols: [{ name: 'login', kind: 'function', line: 3 }], lines: [{ line: 4, text: 'login(user)' }] },
        { path: 'lib/b.go', score: 0.5, symbols: [], lines: [] },
      ]),
      '1. src/a.ts  (score 1.235)\n   function login  src/a.ts:3\n   src/a.ts:4  login(user)\n2. lib/b.go  (score 0.500)\n',
    ],
    [
      'control characters in a path, a name or a line are shown escaped, never sent to the terminal',
      result([{ path: 'src/\x1b[2Ja.ts', score: 1, symbols: [{ name: 'x\x07', kind: 'function', line: 1 }], lines: [{ line: 2, text: 'a\rb' }] }]),
      '1. src/\\x1b[2Ja.ts  (score 1.000)\n   function x\\x07  src/\\x1b[2Ja.ts:1\n   src/\\x1b[2Ja.ts:2  a\\rb\n',
    ],
    [
      'with --explain, the contributions under the file',
      result([
        {
          path: 'src/a.ts',
          score: 2,
          symbols: [],
          lines: [],
          explain: { terms: [{ term: 'lo\x1bgin', kind: 'word', content: 2, path: 0, definition: 0, references: 0 }], factors: { place: 1, scope: 1, copy: 1, generated: 1 } },
        },
      ]),
      '1. src/a.ts  (score 2.000)\n   + 2.000  "lo\\x1bgin" (word): content 2.000\n',
    ],
  ])('%s', (_name, input, text) => {
    expect(renderText(input)).toBe(text);
  });

  it('json is the result, one line', () => {
    const r = result([{ path: 'a\nb', score: 1, symbols: [], lines: [] }], ['note']);
    const text = renderJson(r);
    expect(text.endsWith('\n')).toBe(true);
    expect(text.slice(0, -1)).not.toContain('\n');
    expect(JSON.parse(text)).toEqual(r);
  });
});

const repo = useRepo({
  'src/http/server.ts': 'export function startServer() {}\n',
  'src/http/\x1bodd.ts': 'export function startServerOdd() {}\n',
  'README.md': 'hello\n',
});

describe('the hint', () => {
  it('names the files, escaped, in the words the model reads', async () => {
    const hint = await firstTurnHint(repo.root, 'where is startServer?');
    expect(hint).toMatch(/^\(spelunk, no model: files likely relevant by a keyword search — read them before relying on them: /);
    expect(hint).toContain('src/http/server.ts');
    expect(hint).toContain('src/http/\\x1bodd.ts');
    expect(hint).not.toContain('\x1b');
    expect(hint!.endsWith(')')).toBe(true);
  });

  it('a search that was cut short gives no hint rather than a partial one', async () => {
    expect(await firstTurnHint(repo.root, 'where is startServer?', AbortSignal.abort())).toBeNull();
  });

  it('withHint appends the hint as the last paragraph, or leaves the question as it is', async () => {
    expect(await withHint('where is startServer?', repo.root)).toMatch(/^where is startServer\?\n\n\(spelunk, no model: .*\)$/s);
    expect(await withHint('how does it work?', repo.root)).toBe('how does it work?');
  });
});
