import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readFileTool, type ReadFileInput } from '../../src/tools/read-file.js';
import type { ToolOutcome } from '../../src/tools/tool.js';
import { installedHere } from '../support/installed.js';
import { makeRepo } from '../support/temp-repo.js';

// The "did you mean" search runs the bundled ripgrep; one test takes it away to see the fallback hint.
const rg = vi.hoisted(() => ({ missing: false }));
vi.mock('../../src/sandbox/programs.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/sandbox/programs.js')>();
  return { ...real, bundledRg: async () => (rg.missing ? null : real.bundledRg()) };
});

/** Same-length deep paths (about 500 bytes each): ripgrep's listing of them comes in several output chunks. */
const LONG_DIRS = Array.from({ length: 150 }, (_, i) => `d${String(i).padStart(3, '0')}${'x'.repeat(240)}/${'y'.repeat(240)}`);

const FILES: Record<string, string> = {
  'x/b/name.txt': '1\n',
  'a/name.txt': '2\n',
  'k/q/r/deep.txt': '3\n',
  'y/r/deep.txt': '4\n',
  'long-dir/Mixed.txt': '5\n',
  'd/mixed.txt': '6\n',
  'src/a.ts': 'export const a = 1;\n',
  'other/a[1].txt': 'brackets\n',
  'other/a1.txt': 'no brackets\n',
  'docs/HEAD': 'not the git one\n',
  '-dash/f.txt': 'x\n',
  'dash-/f.txt': 'x\n',
  'my dir/f.txt': 'x\n',
  "it's/f.txt": 'x\n',
  'plain/f.txt': 'x\n',
  'surrogates.txt': [
    `${'a'.repeat(1999)}\u{10000}tail`,
    `${'a'.repeat(1999)}\u{10fc00}tail`,
    `${'a'.repeat(1999)}\uff71tail`,
    '',
  ].join('\n'),
  ...Object.fromEntries(LONG_DIRS.map((d) => [`${d}/chunked.txt`, 'c\n'])),
};

let repo: { root: string; cleanup(): Promise<void> };
let socket: net.Server;
/** Whether the device nodes exist: mknod needs CAP_MKNOD (root in most containers), which the suite must not need. */
let devices = false;

function makeDevices(): boolean {
  try {
    execFileSync('mknod', [path.join(repo.root, 'char.dev'), 'c', '1', '3'], { stdio: 'ignore' });
    execFileSync('mknod', [path.join(repo.root, 'block.dev'), 'b', '7', '200'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  repo = await makeRepo(FILES, { git: true });
  const binary = (n: number): Buffer => Buffer.concat([Buffer.from([0]), Buffer.alloc(n - 1, 1)]);
  await fs.writeFile(path.join(repo.root, 'bin-1023.bin'), binary(1023));
  await fs.writeFile(path.join(repo.root, 'bin-1024.bin'), binary(1024));
  await fs.writeFile(path.join(repo.root, 'bin-2048.bin'), binary(2048));
  // Sparse files: all zero bytes (binary by the NUL rule) without taking the disk space.
  await fs.truncate(await touch('bin-1mib.bin'), 1024 * 1024);
  await fs.truncate(await touch('bin-2tib.bin'), 2 * 1024 ** 4);
  devices = makeDevices();
  socket = net.createServer();
  await new Promise<void>((resolve) => socket.listen(path.join(repo.root, 'app.sock'), resolve));
});
afterAll(async () => {
  await new Promise((resolve) => socket?.close(resolve));
  await repo?.cleanup();
});

async function touch(rel: string): Promise<string> {
  const abs = path.join(repo.root, rel);
  await fs.writeFile(abs, '');
  return abs;
}

async function read(input: ReadFileInput, signal = new AbortController().signal): Promise<ToolOutcome> {
  return readFileTool.run(input, { root: repo.root, signal, timeoutMs: 120_000 });
}

describe('a missing file: suggestions ranked', () => {
  it.each([
    // Trailing directories in common count first: b/ beats the shorter a/name.txt.
    ['a/b/name.txt', 'Did you mean: x/b/name.txt, a/name.txt?'],
    // Two trailing directories in common beat one.
    ['p/q/r/deep.txt', 'Did you mean: k/q/r/deep.txt, y/r/deep.txt?'],
    // Then the same case of the name beats a shorter path.
    ['zz/Mixed.txt', 'Did you mean: long-dir/Mixed.txt, d/mixed.txt?'],
    ['zz/mixed.txt', 'Did you mean: d/mixed.txt, long-dir/Mixed.txt?'],
    // Same directory, other case: the directory match is counted to its end.
    ['src/A.TS', 'Did you mean: src/a.ts?'],
    // Glob characters in the name are literal: a1.txt is not a match for a[1].txt.
    ['x/a[1].txt', 'Did you mean: other/a[1].txt?'],
    // .git is never searched: docs/HEAD only, not .git/HEAD.
    ['x/HEAD', 'Did you mean: docs/HEAD?'],
    // Names from every output chunk are collected; among equally good ones, lexical order decides.
    ['zz/chunked.txt', `Did you mean: ${LONG_DIRS.slice(0, 3).map((d) => `${d}/chunked.txt`).join(', ')}?`],
  ])('%j', async (p, hint) => {
    const out = await read({ path: p });
    expect(out).toMatchObject({ isError: true, summary: 'not found' });
    expect(out.content).toBe(`File not found: ${p} (paths are relative to the repository root). ${hint}`);
  });

  it('without a match, says how to search with bash, quotes dropped from the name', async () => {
    const out = await read({ path: "gone/it's-gone.txt" });
    expect(out.content).toBe(
      "File not found: gone/it's-gone.txt (paths are relative to the repository root). " +
        "Search for it with bash `rg --files -g '*its-gone.txt*'` or `find . -name 'its-gone.txt'`.",
    );
  });

  it('when the call is already cancelled, does not search and gives the bash hint', async () => {
    const controller = new AbortController();
    controller.abort();
    const out = await read({ path: 'zz/name.txt' }, controller.signal);
    expect(out.content).toContain("Search for it with bash `rg --files -g '*name.txt*'`");
    expect(out.content).not.toContain('Did you mean');
  });

  it('without ripgrep, gives the bash hint', async () => {
    rg.missing = true;
    try {
      const out = await read({ path: 'zz/name.txt' });
      expect(out.content).toContain("Search for it with bash `rg --files -g '*name.txt*'`");
      expect(out.content).not.toContain('Did you mean');
    } finally {
      rg.missing = false;
    }
  });
});

describe('a directory: the bash commands suggested quote the path', () => {
  it.each([
    ['plain', 'plain'],
    ['-dash', './-dash'],
    ['dash-', 'dash-'],
    ['my dir', "'my dir'"],
    ["it's", "'it'\\''s'"],
  ])('%j is given as %s', async (p, quoted) => {
    const out = await read({ path: p });
    expect(out).toMatchObject({ isError: true, summary: 'directory' });
    // tree only where it is installed: a suggestion the bash tool would refuse sends the model in a circle.
    const tree = installedHere('tree') ? ` or \`tree -L 2 ${quoted}\`` : '';
    expect(out.content).toContain(`List it with bash \`ls -la ${quoted}\`${tree}, or find`);
  });
});

describe('special files are named', () => {
  it.for<[string, string]>([
    ['app.sock', 'a socket'],
    ['char.dev', 'a character device'],
    ['block.dev', 'a block device'],
  ])('%j is %s (a device row is skipped where mknod is not permitted, i.e. without root)', async ([p, kind], ctx) => {
    if (p.endsWith('.dev') && !devices) return ctx.skip('mknod is not permitted here (it needs CAP_MKNOD)');
    const out = await read({ path: p });
    expect(out).toMatchObject({ isError: true, summary: 'not a regular file' });
    expect(out.content).toBe(`${p} is ${kind}, not a regular file; read_file only reads regular files.`);
  });
});

describe('binary file sizes', () => {
  it.each([
    ['bin-1023.bin', '1023 bytes'],
    ['bin-1024.bin', '1.0 KiB, 1024 bytes'],
    ['bin-2048.bin', '2.0 KiB, 2048 bytes'],
    ['bin-1mib.bin', '1.0 MiB, 1048576 bytes'],
    // GiB is the largest unit.
    ['bin-2tib.bin', '2048.0 GiB, 2199023255552 bytes'],
  ])('%j is %s', async (p, size) => {
    const out = await read({ path: p });
    expect(out).toMatchObject({ isError: true, summary: `binary file (${size})` });
  });
});

describe('a line cut at 2000 characters never splits a surrogate pair', () => {
  it.each([
    // A pair starting at the last kept position (high surrogates U+D800 and U+DBFF) is dropped whole.
    [1, 'a'.repeat(1999)],
    [2, 'a'.repeat(1999)],
    // A BMP character there (U+FF71, above the surrogates) is kept.
    [3, `${'a'.repeat(1999)}\uff71`],
  ])('line %i', async (line, kept) => {
    const out = await read({ path: 'surrogates.txt', start_line: line, end_line: line });
    expect(out.content.split('\n')[0]).toMatch(new RegExp(`^${line}\\t${kept}… \\[line cut at 2000 characters`, 'u'));
  });
});

describe('parse', () => {
  it.each([
    ['lines 1-1', { path: 'a', start_line: 1, end_line: 1 }, { path: 'a', start_line: 1, end_line: 1 }],
    ['a start only', { path: 'a', start_line: 5 }, { path: 'a', start_line: 5 }],
    ['an end only', { path: 'a', end_line: 5 }, { path: 'a', end_line: 5 }],
    ['lines 2-9', { path: 'a', start_line: 2, end_line: 9 }, { path: 'a', start_line: 2, end_line: 9 }],
    ['a path of exactly 4096 characters', { path: 'p'.repeat(4096) }, { path: 'p'.repeat(4096) }],
  ])('accepts %s', (_label, input, value) => {
    // Strict: no start_line/end_line key when the call gave none.
    expect(readFileTool.parse(input)).toStrictEqual({ ok: true, value });
  });

  it.each([
    [null, 'read_file expects {"path": "src/index.ts", "start_line": 1, "end_line": 200} (lines optional).'],
    ['src/a.ts', 'read_file expects {"path": "src/index.ts", "start_line": 1, "end_line": 200} (lines optional).'],
    [42, 'read_file expects {"path": "src/index.ts", "start_line": 1, "end_line": 200} (lines optional).'],
    [{ path: 'a', offset: 1, limit: 2 }, 'Unknown field offset, limit. read_file expects {"path"'],
    [{ path: 'a', start_line: 0 }, 'start_line must be a whole number ≥ 1'],
    [{ path: 'a', start_line: true }, 'start_line must be a whole number ≥ 1 (lines are numbered from 1), got true.'],
    [{ path: 'a', start_line: '0x10' }, 'start_line must be a whole number ≥ 1 (lines are numbered from 1), got "0x10".'],
    [{ path: 'a', end_line: '1e3' }, 'end_line must be a whole number ≥ 1 (lines are numbered from 1), got "1e3".'],
    [{ path: 'a', start_line: [7] }, 'start_line must be a whole number ≥ 1 (lines are numbered from 1), got [7].'],
    [{ path: 'a', end_line: 'x12' }, 'end_line must be a whole number ≥ 1 (lines are numbered from 1), got "x12".'],
  ])('rejects %j', (input, error) => {
    const got = readFileTool.parse(input);
    expect(got.ok).toBe(false);
    if (!got.ok) expect(got.error.startsWith(error)).toBe(true);
  });
});
