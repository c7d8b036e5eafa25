import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SCRIPT = path.resolve(import.meta.dirname, '../scripts/function-lengths.mjs');

/** The rule for src/: at most this many functions over LONG lines, and none over LONGEST. */
const LONG = 80;
const LONGEST = 120;
const MAX_LONG = 3;

interface Row {
  file: string;
  name: string;
  line: number;
  lines: number;
}

function measure(root?: string): Row[] {
  const out = execFileSync(process.execPath, [SCRIPT, '--over', '0', '--json'], { encoding: 'utf8', ...(root ? { env: { ...process.env, FUNCTION_LENGTHS_ROOT: root } } : {}) });
  return JSON.parse(out) as Row[];
}

describe('function lengths in src/ (scripts/function-lengths.mjs)', () => {
  const rows = measure();

  it(`at most ${MAX_LONG} functions over ${LONG} lines and none over ${LONGEST}`, () => {
    const long = rows.filter((r) => r.lines > LONG).map((r) => `${r.file}:${r.line} ${r.name} (${r.lines} lines)`);
    expect(long.length, long.join('\n')).toBeLessThanOrEqual(MAX_LONG);
    expect(rows.filter((r) => r.lines > LONGEST).map((r) => `${r.file}:${r.line} ${r.name} (${r.lines} lines)`)).toEqual([]);
  });

  it('measures every function-like node with a body, from its first line to its last', async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-fnlen-'));
    try {
      await fs.mkdir(path.join(root, 'src', 'sub'), { recursive: true });
      await fs.writeFile(
        path.join(root, 'src', 'sub', 'a.ts'),
        ['export function three(): number {', '  return 1;', '}', 'const arrow = (x: number) => {', '  const y = x;', '  return y;', '};', 'class C {', '  method() {', '    return arrow(three());', '  }', '}', 'declare function bodiless(): void;', ''].join('\n'),
      );
      const found = measure(root).map((r) => [r.file, r.name, r.line, r.lines]);
      expect(found).toEqual(
        expect.arrayContaining([
          ['src/sub/a.ts', 'three', 1, 3],
          ['src/sub/a.ts', 'arrow', 4, 4],
          ['src/sub/a.ts', 'method', 9, 3],
        ]),
      );
      expect(found).toHaveLength(3);
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });
});
