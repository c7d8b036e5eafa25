import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { rgPath } from '@vscode/ripgrep';
import { afterAll, describe, expect, it } from 'vitest';
import { INSTRUCTIONS_MAX_BYTES, loadedFiles, loadProjectInstructions, NESTED_MAX, nestedSearch } from '../../src/preamble/agents-md.js';
import { utf8Cut } from '../../src/preamble/read-contained.js';
import { buildListing } from '../../src/preamble/listing.js';

const temps: string[] = [];
afterAll(async () => {
  await Promise.all(temps.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

async function makeRepo(files: Record<string, string | Buffer>): Promise<string> {
  const root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-agents-')));
  temps.push(root);
  for (const [rel, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await fs.writeFile(path.join(root, rel), content);
  }
  return root;
}

describe('loadProjectInstructions', () => {
  it('loads the root AGENTS.md verbatim', async () => {
    const text = '# Agents\n\n- run `npm test`\n- café ✓\n';
    const loaded = await loadProjectInstructions(await makeRepo({ 'AGENTS.md': text }), rgPath);
    expect(loaded).toEqual({ file: 'AGENTS.md', text, bytes: Buffer.byteLength(text), truncatedBytes: 0, nested: [] });
  });

  it('reports no instructions when neither file exists', async () => {
    const loaded = await loadProjectInstructions(await makeRepo({ 'README.md': 'hi' }), rgPath);
    expect(loaded).toEqual({ file: null, text: null, bytes: 0, truncatedBytes: 0, nested: [] });
  });

  it('falls back to CLAUDE.md, and AGENTS.md wins when both exist', async () => {
    const claudeOnly = await loadProjectInstructions(await makeRepo({ 'CLAUDE.md': 'claude notes\n' }));
    expect(claudeOnly).toMatchObject({ file: 'CLAUDE.md', text: 'claude notes\n' });
    const both = await loadProjectInstructions(await makeRepo({ 'CLAUDE.md': 'claude', 'AGENTS.md': 'agents' }));
    expect(both).toMatchObject({ file: 'AGENTS.md', text: 'agents' });
  });

  it('loads an empty AGENTS.md as empty text', async () => {
    const loaded = await loadProjectInstructions(await makeRepo({ 'AGENTS.md': '', 'CLAUDE.md': 'x' }));
    expect(loaded).toMatchObject({ file: 'AGENTS.md', text: '', bytes: 0, truncatedBytes: 0 });
  });

  it.each([
    ['exactly the cap', 'a'.repeat(INSTRUCTIONS_MAX_BYTES), INSTRUCTIONS_MAX_BYTES, 0],
    ['one byte over', 'a'.repeat(INSTRUCTIONS_MAX_BYTES + 1), INSTRUCTIONS_MAX_BYTES, 1],
    // '€' is 3 bytes starting at byte 32,767: the cut moves back before it.
    ['a character across the cap', `${'a'.repeat(INSTRUCTIONS_MAX_BYTES - 1)}€${'b'.repeat(1_000)}`, INSTRUCTIONS_MAX_BYTES - 1, 1_003],
    ['a huge file', 'x'.repeat(5_000_000), INSTRUCTIONS_MAX_BYTES, 5_000_000 - INSTRUCTIONS_MAX_BYTES],
  ])('caps %s at 32 KiB on a UTF-8 boundary', async (_, content, keptBytes, omitted) => {
    const loaded = await loadProjectInstructions(await makeRepo({ 'AGENTS.md': content }));
    expect(loaded.bytes).toBe(Buffer.byteLength(content));
    expect(loaded.truncatedBytes).toBe(omitted);
    expect(Buffer.byteLength(loaded.text!)).toBe(keptBytes);
    expect(loaded.text).not.toContain('\uFFFD');
    expect(loaded.warnings ?? []).toEqual(omitted ? [expect.stringContaining(`only the first ${keptBytes}`)] : []);
  });

  it('decodes invalid UTF-8 with replacement characters', async () => {
    const loaded = await loadProjectInstructions(await makeRepo({ 'AGENTS.md': Buffer.from([0x61, 0xff, 0x62]) }));
    expect(loaded.text).toBe('a\uFFFDb');
  });

  it('refuses an AGENTS.md symlink that points out of the root, and falls back to CLAUDE.md', async () => {
    const outside = await makeRepo({ 'AGENTS.md': 'OUTSIDE-SECRET' });
    const root = await makeRepo({ 'CLAUDE.md': 'inside' });
    await fs.symlink(path.join(outside, 'AGENTS.md'), path.join(root, 'AGENTS.md'));
    const loaded = await loadProjectInstructions(root);
    expect(loaded).toMatchObject({ file: 'CLAUDE.md', text: 'inside' });
    expect(loaded.warnings).toEqual([expect.stringMatching(/^AGENTS\.md not loaded: .*outside the repository root/)]);
    await fs.rm(path.join(root, 'CLAUDE.md'));
    const none = await loadProjectInstructions(root);
    expect(none).toMatchObject({ file: null, text: null });
    expect(JSON.stringify(none)).not.toContain('OUTSIDE-SECRET');
  });

  it('follows a symlink that stays inside the root', async () => {
    const root = await makeRepo({ 'docs/agents.md': 'inside notes' });
    await fs.symlink('docs/agents.md', path.join(root, 'AGENTS.md'));
    expect(await loadProjectInstructions(root)).toMatchObject({ file: 'AGENTS.md', text: 'inside notes' });
  });

  it('does not hang on a FIFO named AGENTS.md, nor read a directory', { timeout: 10_000 }, async () => {
    const root = await makeRepo({ 'CLAUDE.md': 'fallback' });
    execFileSync('mkfifo', [path.join(root, 'AGENTS.md')]);
    const loaded = await loadProjectInstructions(root, rgPath);
    expect(loaded).toMatchObject({ file: 'CLAUDE.md', text: 'fallback' });
    expect(loaded.warnings).toEqual(['AGENTS.md not loaded: not a regular file']);
    const dir = await makeRepo({ 'AGENTS.md/inner.txt': 'x' });
    expect(await loadProjectInstructions(dir)).toMatchObject({ file: null, warnings: ['AGENTS.md not loaded: not a regular file'] });
  });

  it('lists nested AGENTS.md files sorted, honouring .gitignore and the depth, without the root one', async () => {
    const root = await makeRepo({
      'AGENTS.md': 'root',
      '.gitignore': 'ignored/\n',
      'packages/b/AGENTS.md': 'b',
      'packages/a/AGENTS.md': 'a',
      'docs/AGENTS.md': 'd',
      'ignored/AGENTS.md': 'i',
      'deep/one/two/three/AGENTS.md': 'too deep for 3',
      'src/agents.md': 'other case',
    });
    expect((await loadProjectInstructions(root, rgPath)).nested).toEqual(['docs/AGENTS.md', 'packages/a/AGENTS.md', 'packages/b/AGENTS.md']);
    const deeper = await loadProjectInstructions(root, rgPath, { maxDepth: 5 });
    expect(deeper.nested).toEqual(['deep/one/two/three/AGENTS.md', 'docs/AGENTS.md', 'packages/a/AGENTS.md', 'packages/b/AGENTS.md']);
  });

  it(`keeps at most ${NESTED_MAX} nested paths and counts the rest`, async () => {
    const files = Object.fromEntries(Array.from({ length: NESTED_MAX + 12 }, (_, i) => [`p${String(i).padStart(3, '0')}/AGENTS.md`, '']));
    const loaded = await loadProjectInstructions(await makeRepo(files), rgPath);
    expect(loaded.nested).toHaveLength(NESTED_MAX);
    expect(loaded.nested[0]).toBe('p000/AGENTS.md');
    expect(loaded.nested.at(-1)).toBe(`p0${NESTED_MAX - 1}/AGENTS.md`);
    expect(loaded.nestedOmitted).toBe(12);
  });

  // One walk serves both: the listing's first walk feeds the nested search (nestedSearch) instead of a walk of its own.
  it.each([
    ['the listing at depth 3', 3, undefined],
    ['a deeper listing (its extra levels left out)', 5, undefined],
    ['a deeper listing and a deeper search', 5, 5],
    ['more than the kept paths', 3, undefined, Object.fromEntries(Array.from({ length: NESTED_MAX + 3 }, (_, i) => [`p${String(i).padStart(3, '0')}/AGENTS.md`, '']))],
  ])('from %s finds what its own walk finds', async (_name, listingDepth, maxDepth, extra: Record<string, string> = {}) => {
    const root = await makeRepo({
      'AGENTS.md': 'root',
      '.gitignore': 'ignored/\n',
      'packages/b/AGENTS.md': 'b',
      'packages/a/AGENTS.md': 'a',
      'ignored/AGENTS.md': 'i',
      'deep/one/two/three/AGENTS.md': 'deep',
      'deep/one/AGENTS.mdx': 'not it',
      'src/agents.md': 'other case',
      ...extra,
    });
    const own = await loadProjectInstructions(root, rgPath, { maxDepth });
    const search = nestedSearch(maxDepth);
    const [shared] = await Promise.all([
      loadProjectInstructions(root, rgPath, { maxDepth, nested: search.found }),
      buildListing(root, { depth: listingDepth, rgPath, firstWalk: search }),
    ]);
    expect(shared).toEqual(own);
    expect(own.nested.length).toBeGreaterThan(1);
  });

  it('from a listing that cannot walk: a warning, and the instructions still load', async () => {
    const root = await makeRepo({ 'AGENTS.md': 'x' });
    const search = nestedSearch();
    const [loaded, listing] = await Promise.all([
      loadProjectInstructions(root, rgPath, { nested: search.found }),
      buildListing(path.join(root, 'missing'), { depth: 3, rgPath, firstWalk: search }),
    ]);
    expect(listing.text).toMatch(/^\(listing unavailable/);
    expect(loaded).toMatchObject({ file: 'AGENTS.md', nested: [], warnings: [expect.stringMatching(/^nested AGENTS\.md search skipped: the root cannot be read/)] });
  });

  it('reports a failed nested search as a warning, not an error', async () => {
    const loaded = await loadProjectInstructions(await makeRepo({ 'AGENTS.md': 'x' }), '/nonexistent/rg');
    expect(loaded).toMatchObject({ file: 'AGENTS.md', nested: [], warnings: [expect.stringMatching(/^nested AGENTS\.md search skipped/)] });
  });
});

describe('instructions from the git root down to the root', () => {
  /** A git work tree (a `.git` directory is all findWorkTree looks for) whose root lies two levels below it. */
  async function nested(files: Record<string, string | Buffer>): Promise<{ top: string; root: string }> {
    const top = await makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', 'a/b/keep.txt': '', ...files });
    return { top, root: path.join(top, 'a', 'b') };
  }

  it('loads AGENTS.md, else CLAUDE.md, of every directory above the root, outermost first', async () => {
    const { root } = await nested({ 'CLAUDE.md': 'top claude', 'a/AGENTS.md': 'middle agents', 'a/CLAUDE.md': 'middle claude (shadowed)', 'a/b/AGENTS.md': 'root agents' });
    const loaded = await loadProjectInstructions(root);
    expect(loaded).toMatchObject({ file: 'AGENTS.md', text: 'root agents' });
    expect(loaded.ancestors).toEqual([
      { path: '../../CLAUDE.md', file: 'CLAUDE.md', text: 'top claude', bytes: 10, truncatedBytes: 0 },
      { path: '../AGENTS.md', file: 'AGENTS.md', text: 'middle agents', bytes: 13, truncatedBytes: 0 },
    ]);
    expect(loadedFiles(loaded)).toEqual(['../../CLAUDE.md', '../AGENTS.md', 'AGENTS.md']);
  });

  it('loads them even when the root itself has none, and nothing above a root outside any work tree', async () => {
    const { root } = await nested({ 'AGENTS.md': 'top' });
    const loaded = await loadProjectInstructions(root);
    expect(loaded).toMatchObject({ file: null, ancestors: [{ path: '../../AGENTS.md', text: 'top' }] });
    expect(loadedFiles(loaded)).toEqual(['../../AGENTS.md']);
    const plain = await makeRepo({ 'AGENTS.md': 'x' });
    expect((await loadProjectInstructions(plain)).ancestors).toBeUndefined();
  });

  it('shares the 32 KiB cap, the root\'s own file first, then the nearest ancestor', async () => {
    const { root } = await nested({ 'AGENTS.md': 'o'.repeat(4_000), 'a/AGENTS.md': 'm'.repeat(6_000), 'a/b/AGENTS.md': 'r'.repeat(30_000) });
    const loaded = await loadProjectInstructions(root);
    expect(loaded.text).toHaveLength(30_000);
    expect(loaded.ancestors).toEqual([expect.objectContaining({ path: '../AGENTS.md', bytes: 6_000, truncatedBytes: 6_000 - (INSTRUCTIONS_MAX_BYTES - 30_000) })]);
    expect(loaded.warnings).toEqual([
      `../AGENTS.md is 6000 bytes; only the first ${INSTRUCTIONS_MAX_BYTES - 30_000} are in the prompt`,
      '../../AGENTS.md not loaded: the 32 KiB instructions cap is used up by the files nearer the root',
    ]);
  });

  it('refuses an ancestor file that is a symlink out of the work tree', async () => {
    const outside = await makeRepo({ 'AGENTS.md': 'OUTSIDE-SECRET' });
    const { top, root } = await nested({});
    await fs.symlink(path.join(outside, 'AGENTS.md'), path.join(top, 'AGENTS.md'));
    const loaded = await loadProjectInstructions(root);
    expect(loaded.ancestors).toBeUndefined();
    expect(loaded.warnings).toEqual([expect.stringMatching(/^\.\.\/\.\.\/AGENTS\.md not loaded: .*outside the repository root/)]);
    expect(JSON.stringify(loaded)).not.toContain('OUTSIDE-SECRET');
  });
});

describe('utf8Cut', () => {
  const euro = Buffer.from('ab€', 'utf8'); // 61 62 e2 82 ac
  it.each([
    [5, 5],
    [4, 2],
    [3, 2],
    [2, 2],
    [0, 0],
  ])('cuts %i bytes of "ab€" back to %i', (length, expected) => {
    expect(utf8Cut(euro, length)).toBe(expected);
  });
  it('handles four-byte sequences', () => {
    const emoji = Buffer.from('a😀', 'utf8'); // 61 f0 9f 98 80
    expect([1, 2, 3, 4, 5].map((n) => utf8Cut(emoji, n))).toEqual([1, 1, 1, 1, 5]);
  });
});
