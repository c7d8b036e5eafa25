import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countFileLines, countLines, readLineWindow } from '../src/lines.js';

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-lines-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('readLineWindow: one rule for line counts, whether the file is read whole or streamed', () => {
  it.each([
    ['empty', '', 1, 3, 0, []],
    ['one line, no newline', 'a', 1, 1, 1, ['a']],
    ['one line', 'a\n', 1, 2, 1, ['a']],
    ['window in the middle', 'a\nb\nc\nd\n', 2, 3, 4, ['b', 'c']],
    ['window past the end', 'a\nb', 2, 9, 2, ['b']],
    ['blank lines count', '\n\n\n', 1, 3, 3, ['', '', '']],
    ['a CRLF file keeps its CR', 'a\r\nb\r\n', 1, 2, 2, ['a\r', 'b\r']],
  ])('%s', async (name, text, from, to, count, lines) => {
    const file = path.join(dir, `${name.replace(/\W/g, '-')}.txt`);
    await fs.writeFile(file, text);
    const size = Buffer.byteLength(text);
    for (const opts of [{ size }, {}]) {
      expect(await readLineWindow(file, from, to, opts)).toEqual({ lineCount: count, lines });
    }
    expect(countLines(text)).toBe(count);
    expect(await countFileLines(file)).toBe(count);
  });

  it('streams a file above the whole-read size, across chunk boundaries, and cuts long lines', async () => {
    const file = path.join(dir, 'big.txt');
    const line = 'x'.repeat(3000);
    await fs.writeFile(file, `${Array.from({ length: 200 }, (_, i) => `${i + 1} ${line}`).join('\n')}\n`);
    const { size } = await fs.stat(file);
    const streamed = await readLineWindow(file, 150, 151, { size });
    expect(streamed.lineCount).toBe(200);
    expect(streamed.lines.map((l) => l.slice(0, 4))).toEqual(['150 ', '151 ']);
    expect(streamed.lines[0]).toHaveLength(2000);
  });

  it('streamed: a character split across two reads is decoded whole (the reader works on bytes, not chunk strings)', async () => {
    const file = path.join(dir, 'straddle.txt');
    // 32,767 lines of `a` fill 65,534 bytes: the 2-byte `é` of the next line straddles the 64 KiB read boundary.
    await fs.writeFile(file, `${'a\n'.repeat(32_767)}xé\nlast\n`);
    const { size } = await fs.stat(file);
    expect(size).toBeGreaterThan(64 * 1024);
    expect(await readLineWindow(file, 32_768, 32_769, { size })).toEqual({ lineCount: 32_769, lines: ['xé', 'last'] });
  });
});
