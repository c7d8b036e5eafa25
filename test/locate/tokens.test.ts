import { describe, expect, it } from 'vitest';
import { MAX_LINES_PER_FILE, tokenize } from '../../src/locate/index/tokens.js';

// The tokenizer decodes a file once and cuts its runs out of the text; the plain definition decodes each run on its
// own. Both must give the same runs and lines, whatever the bytes.
function reference(bytes: Buffer): Map<string, { lines: number[]; distinct: number }> {
  const out = new Map<string, { lines: number[]; distinct: number }>();
  let line = 1;
  for (let i = 0; i < bytes.length; ) {
    if (bytes[i] === 10) {
      line += 1;
      i += 1;
      continue;
    }
    if (!/[A-Za-z0-9_]/.test(String.fromCharCode(bytes[i]!))) {
      i += 1;
      continue;
    }
    const start = i;
    while (i < bytes.length && /[A-Za-z0-9_]/.test(String.fromCharCode(bytes[i]!))) i += 1;
    const word = bytes.toString('latin1', start, i).toLowerCase();
    const seen = out.get(word);
    if (seen === undefined) out.set(word, { lines: [line], distinct: 1 });
    else if (seen.lines.at(-1) === line) seen.lines.push(line);
    else if (seen.distinct < MAX_LINES_PER_FILE) {
      seen.lines.push(line);
      seen.distinct += 1;
    }
  }
  return out;
}

const plain = (m: Map<string, unknown>) => [...m].map(([w, o]) => [w, o]);

describe('tokenize', () => {
  it.each([
    ['case folded into one run', 'FooBar foobar FOOBAR\nfoo_bar2', { foobar: [1, 1, 1], foo_bar2: [2] }],
    ['long runs, lower and mixed case', 'averylongidentifiername\nAVeryLongIdentifierName', { averylongidentifiername: [1, 2] }],
    ['bytes past ASCII split runs (é as UTF-8)', 'caf\u00e9s x', { caf: [1], s: [1], x: [1] }],
    ['CRLF lines', 'a\r\nb\r\na', { a: [1, 3], b: [2] }],
  ])('%s', (_name, text, expected) => {
    const got = tokenize(Buffer.from(text, 'utf8'));
    expect(Object.fromEntries([...got].map(([w, o]) => [w, o.lines]))).toEqual(expected);
    expect(plain(got)).toEqual(plain(reference(Buffer.from(text, 'utf8'))));
  });

  it('a run on more than MAX_LINES_PER_FILE lines keeps its first ones', () => {
    const text = Array.from({ length: MAX_LINES_PER_FILE + 5 }, () => 'x x').join('\n');
    const got = tokenize(Buffer.from(text)).get('x')!;
    expect(got.distinct).toBe(MAX_LINES_PER_FILE);
    expect(got.lines).toHaveLength(2 * MAX_LINES_PER_FILE);
  });

  it('agrees with the per-run definition on 3,000 random buffers', () => {
    let seed = 0x51f15e;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    // Mostly word bytes of both cases, with newlines, separators and high bytes between them.
    const pool = [...Buffer.from('aAbBzZ_09 \n\n.-'), 0xc3, 0xa9, 0xff, 0x80, 0x0d];
    for (let round = 0; round < 3_000; round++) {
      const bytes = Buffer.from(Array.from({ length: next(200) }, () => pool[next(pool.length)]!));
      expect(plain(tokenize(bytes)), bytes.toString('hex')).toEqual(plain(reference(bytes)));
    }
  });
});
