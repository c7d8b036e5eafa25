import { promises as fs } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyCitations } from '../../src/citations/verify.js';
import { MAX_OUTLINE_ENTRIES } from '../../src/symbols/outline.js';
import { readFileTool } from '../../src/tools/read-file.js';
import type { ToolContext } from '../../src/tools/tool.js';
import { useRepo } from '../support/temp-repo.js';

const repo = useRepo({
  'src/app.ts': 'export class Server {\n  start() {\n    return 1;\n  }\n}\n\nexport function listen(port: number) {\n  return port;\n}\n',
  'src/many.py': Array.from({ length: MAX_OUTLINE_ENTRIES + 5 }, (_, i) => `def f${i}():\n    return ${i}\n`).join(''),
  'notes.txt': 'plain text\n',
  'min.js': 'var a=1;'.repeat(20_000),
});
const ctx = (): ToolContext => ({ root: repo.root, signal: new AbortController().signal, timeoutMs: 10_000 });

describe('read_file outline: the definitions of a file, where the model already reads', () => {
  it('lists definitions as path:line with their kind, and every line is a citation the verifier accepts', async () => {
    const outcome = await readFileTool.run({ path: 'src/app.ts', outline: true }, ctx());
    expect(outcome).toEqual({ content: 'src/app.ts:1\tclass Server\nsrc/app.ts:2\tmethod start\nsrc/app.ts:7\tfunction listen', summary: '3 definitions', isError: false });
    const verified = await verifyCitations(repo.root, outcome.content.replaceAll('\t', ' '));
    expect(verified.map((c) => c.status)).toEqual(['ok', 'ok', 'ok']);
  });

  it('a long outline is cut with a trailer that says how many were left out', async () => {
    const outcome = await readFileTool.run({ path: 'src/many.py', outline: true }, ctx());
    const lines = outcome.content.split('\n');
    expect(lines).toHaveLength(MAX_OUTLINE_ENTRIES + 1);
    expect(lines.at(-1)).toBe(`[5 more definitions after line ${2 * MAX_OUTLINE_ENTRIES - 1}; read the rest of the file in ranges]`);
  });

  it.each([
    ['notes.txt', 'No outline: notes.txt: no grammar for this kind of file. Read the file without outline (read_file with start_line/end_line).'],
    ['min.js', 'No outline: min.js: minified (very long lines), not parsed. Read the file without outline (read_file with start_line/end_line).'],
  ])('%s has no outline and the error says to read it as text', async (file, content) => {
    expect(await readFileTool.run({ path: file, outline: true }, ctx())).toEqual({ content, summary: 'no outline', isError: true });
  });

  it('a symlink out of the root is refused before any parsing', async () => {
    const outside = path.join(path.dirname(repo.root), 'outside.ts');
    await fs.writeFile(outside, 'export function secret() {}\n');
    await fs.symlink(outside, path.join(repo.root, 'link.ts'));
    const outcome = await readFileTool.run({ path: 'link.ts', outline: true }, ctx());
    expect(outcome.isError).toBe(true);
    expect(outcome.content).not.toContain('secret');
  });

  it.each([
    [{ path: 'a.ts', outline: 'yes' }, /^outline must be true or false/],
    [{ path: 'a.ts', outline: true, start_line: 3 }, /^outline lists the whole file; drop start_line\/end_line/],
  ])('%j is invalid input', (input, message) => {
    const parsed = readFileTool.parse(input);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error).toMatch(message);
  });

  it('parses and displays the outline mode', () => {
    expect(readFileTool.parse({ path: 'a.ts', outline: true })).toEqual({ ok: true, value: { path: 'a.ts', outline: true } });
    expect(readFileTool.parse({ path: 'a.ts', outline: false })).toEqual({ ok: true, value: { path: 'a.ts' } });
    expect(readFileTool.display({ path: 'a.ts', outline: true })).toBe('a.ts (outline)');
  });
});
