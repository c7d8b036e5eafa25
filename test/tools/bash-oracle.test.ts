import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolvePrograms, type Programs } from '../../src/sandbox/programs.js';
import { createBashTool } from '../../src/tools/bash.js';
import type { ToolOutcome } from '../../src/tools/tool.js';
import { installedHere, missingFor } from '../support/installed.js';

/**
 * No output may depend on anything outside the root. Each row runs through the real bash tool twice on the same
 * repository — once while the outside targets of its symbolic links exist, once after they are removed — and the two
 * answers must be identical, word for word. Rows that refuse must refuse in both states with the same reason; rows that
 * run show that the accepted form really does not look at the targets.
 */

let base: string;
let root: string;
let outside: string;
let programs: Programs;

async function plantOutside(): Promise<void> {
  await fs.mkdir(path.join(outside, 'dir'), { recursive: true });
  await fs.writeFile(path.join(outside, 'file'), 'OUTSIDE-ORACLE-SECRET\n');
  await fs.chmod(path.join(outside, 'file'), 0o755);
}

beforeAll(async () => {
  programs = await resolvePrograms();
  base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-oracle-')));
  root = path.join(base, 'repo');
  outside = path.join(base, 'outside');
  for (const [rel, text] of Object.entries({ 'a.txt': 'hello\n', 'src/b.txt': 'hello b\n', 'd1/same': 'one\n', 'd2/same': 'one\n' })) {
    await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await fs.writeFile(path.join(root, rel), text);
  }
  // Links to an outside directory and file (absolute and relative), at the top and one level down.
  await fs.symlink(path.join(outside, 'dir'), path.join(root, 'ldir'));
  await fs.symlink(path.join(outside, 'file'), path.join(root, 'lfile'));
  await fs.symlink('../../outside/dir', path.join(root, 'src/rdir'));
  // The same name in two directories, pointing at two outside files: diff -r would compare their contents.
  await fs.symlink(path.join(outside, 'file'), path.join(root, 'd1/link'));
  await fs.symlink(path.join(outside, 'dir'), path.join(root, 'd2/link'));
  // A link that stays inside: tree may follow it freely.
  await fs.symlink('src', path.join(root, 'inside'));
});
afterAll(async () => fs.rm(base, { recursive: true, force: true }));

async function run(command: string): Promise<ToolOutcome> {
  const bash = createBashTool(programs);
  const parsed = bash.parse({ command });
  if (!parsed.ok) throw new Error(parsed.error);
  return bash.run(parsed.value, { root, signal: new AbortController().signal, timeoutMs: 30_000 });
}

/** The tool's answer with the outside targets present, then missing. */
async function paired(command: string): Promise<[ToolOutcome, ToolOutcome]> {
  await plantOutside();
  const existing = await run(command);
  await fs.rm(outside, { recursive: true, force: true });
  const missing = await run(command);
  return [existing, missing];
}

const REFUSED: Array<[string, string]> = [
  ['find . -readable', 'asks the kernel about the file a symbolic link points to'],
  ['find . -writable', 'asks the kernel about the file a symbolic link points to'],
  ['find . -executable', 'asks the kernel about the file a symbolic link points to'],
  ['find . -type l -executable -print', 'asks the kernel'],
  ["find . -printf '%Y %p\\n'", '%Y is refused'],
  ["find . -printf '%-5Y\\n'", '%Y is refused'],
  ["find . -printf '%y %Q\\n'", 'the directive %Q is not accepted'], ["find . -printf '%Z %p\\n'", '%Z is refused'], ['find . -ls', 'owner names'],
  ['tree', "leave them out: tree -I 'link|ldir|lfile|rdir'"],
  ['tree -F', 'tree describes what a link points to'],
  ['tree -d', 'tree describes what a link points to'],
  ['tree --dirsfirst', 'tree describes'],
  ['tree --filesfirst', 'tree describes'],
  ['tree --prune', 'tree describes'],
  ['tree -J', 'tree describes'],
  ['tree -X', 'tree describes'],
  ['tree -C', 'tree describes'],
  ['tree --noreport', 'tree describes'],
  ['tree -L 1', "leave them out: tree -L 1 -I 'ldir|lfile'"],
  ['tree src', "leave it out: tree src -I rdir"],
  ['tree -I ldir', 'tree describes'],
  ['ls -lF', 'in a long listing ls marks the type of what a symbolic link points to'],
  ['ls -l --file-type', 'marks the type'],
  ['ls -l --classify=always', 'marks the type'],
  ['ls --indicator-style=classify -l', 'marks the type'],
  ['ls -g -F', 'marks the type'],
  ['ls --format=long -F', 'marks the type'],
  ['ls --format long --file-type', 'marks the type'],
  ['ls --full-time -F', 'marks the type'],
  ['ls --group-directories-first', 'depends on its target'],
  ['du -aL', 'follows symbolic links'],
  ['du -a --dereference', 'follows symbolic links'],
  ['stat -L a.txt', 'follows symbolic links'],
  ['stat ldir', 'outside the repository root'],
  ['realpath lfile', 'outside the repository root'],
  ['cat lfile', 'outside the repository root'],
  ['file ldir', 'outside the repository root'],
];

const RUN: string[] = [
  'find .', 'find . -type l', "find . -printf '%y %p %l %m %s\\n'", "find . -printf '%M %n %U %G %s %p\\n'", 'find . -empty', 'find . -perm -u=r',
  "tree -I 'link|ldir|lfile|rdir'", "tree -F -d --dirsfirst -I 'link|ldir|lfile|rdir'", 'tree d1 -I link', 'tree inside -I rdir',
  'ls -la', 'ls -F', 'ls -l', 'ls -lR', 'ls -p', 'ls -l --color=always', 'ls -la src d1 d2',
  'du -a', 'du -ab', 'du -sh .', 'stat -c %N a.txt', 'diff -r d1 d2', 'diff -rq d1 d2', 'diff -rN d1 d2',
  'grep -r hello .', 'grep -rl hello', 'rg -j1 --files', 'rg -n --sort=path hello', 'rg --files --sort=path', 'file -b a.txt',
  'wc -c a.txt src/b.txt', 'realpath a.txt src',
];

describe('output never depends on whether a symbolic link target outside the root exists', () => {
  it.skipIf(!installedHere('tree'))('(tree is installed)', () => undefined);

  it.for(REFUSED)('%j is refused the same way in both states (%s)', async ([command, fragment], ctx) => {
    const absent = missingFor(command);
    if (absent !== null) ctx.skip(absent);
    const [existing, missing] = await paired(command);
    expect(existing.isError).toBe(true);
    expect(existing.content).toContain(fragment);
    expect(missing).toEqual(existing);
  });

  it.for(RUN)('%j runs and answers the same in both states', async (command, ctx) => {
    const absent = missingFor(command);
    if (absent !== null) ctx.skip(absent);
    const [existing, missing] = await paired(command);
    expect(existing.content).not.toMatch(/^Command refused/);
    expect(existing.content).not.toContain('OUTSIDE-ORACLE-SECRET');
    expect(missing).toEqual(existing);
  });

  it.skipIf(!installedHere('tree'))('every suggestion in a tree refusal is accepted and runs (skipped: tree is not installed)', async () => {
    for (const command of ['tree', 'tree -L 1', 'tree src', 'tree -a -d']) {
      const refused = await run(command);
      const suggestion = /leave (?:it|them) out: (.*)$/.exec(refused.content)?.[1];
      if (suggestion === undefined) throw new Error(`no suggestion in: ${refused.content}`);
      const accepted = await run(suggestion);
      expect(accepted.content, suggestion).not.toMatch(/^Command refused/);
    }
  });
});
