import { execFileSync } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeOutputFile, resolveOutputPath, writeOutputFile, writeToTarget } from '../../src/sandbox/safe-write.js';

/**
 * A workspace with the repository (`repo`, the root) and the world outside it (`elsewhere`, `outside`). The
 * repository plants links of every kind; none may carry a write or a removal out of it, or anywhere through a link.
 */
let ws: string;
let root: string;

beforeEach(async () => {
  ws = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-safe-write-')));
  root = path.join(ws, 'repo');
  await fs.mkdir(path.join(root, 'reports'), { recursive: true });
  await fs.mkdir(path.join(root, 'a', 'b'), { recursive: true });
  await fs.mkdir(path.join(ws, 'elsewhere'));
  await fs.mkdir(path.join(ws, 'outside'));
  await fs.writeFile(path.join(ws, 'elsewhere', 'victim'), 'precious\n');
  await fs.writeFile(path.join(root, 'a', 'file'), 'x\n');
  await fs.writeFile(path.join(root, 'existing.sarif'), 'old\n');
  await fs.symlink(path.join(ws, 'elsewhere'), path.join(root, 'reports-link'));
  await fs.symlink('reports', path.join(root, 'alias'));
  await fs.symlink('../../../elsewhere', path.join(root, 'a', 'b', 'deep'));
  await fs.symlink('../elsewhere/victim', path.join(root, 'victim.sarif'));
  await fs.symlink('../elsewhere/new', path.join(root, 'dangling.sarif'));
  await fs.symlink(root, path.join(ws, 'my-link'));
  await fs.symlink(path.join(root, 'reports-link'), path.join(ws, 'my-link-to-planted'));
  await fs.symlink('loop2', path.join(ws, 'loop1'));
  await fs.symlink('loop1', path.join(ws, 'loop2'));
  execFileSync('/usr/bin/mkfifo', [path.join(root, 'fifo.sarif')]);
});

afterEach(async () => fs.rm(ws, { recursive: true, force: true }));

const elsewhere = async (): Promise<string[]> => (await fs.readdir(path.join(ws, 'elsewhere'))).sort();

describe('writeOutputFile: a path inside the repository is never written through a link', () => {
  it.each<[string, string, string]>([
    ['a new file in the root', 'repo/out.sarif', 'repo/out.sarif'],
    ['a real subdirectory', 'repo/reports/x.sarif', 'repo/reports/x.sarif'],
    ['an existing regular file (replaced)', 'repo/existing.sarif', 'repo/existing.sarif'],
    ['".." that stays inside', 'repo/reports/../out.sarif', 'repo/out.sarif'],
    ['a path outside the repository', 'outside/out.sarif', 'outside/out.sarif'],
    ['the user\'s own link (outside the root) into the repository', 'my-link/reports/y.sarif', 'repo/reports/y.sarif'],
  ])('%s: written', async (_name, file, written) => {
    const real = await writeOutputFile(path.join(ws, file), '{"ok":1}\n', root);
    expect(real).toBe(path.join(ws, written));
    expect(await fs.readFile(real, 'utf8')).toBe('{"ok":1}\n');
    expect(await elsewhere()).toEqual(['victim']);
    const dir = await fs.readdir(path.dirname(real));
    expect(dir.filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it.each<[string, string, string]>([
    ['a planted directory link out (reports -> /elsewhere)', 'repo/reports-link/x.sarif', 'reports-link is a symbolic link inside the repository'],
    ['a planted directory link that stays inside', 'repo/alias/x.sarif', 'alias is a symbolic link inside the repository'],
    ['a planted link two levels down', 'repo/a/b/deep/x.sarif', 'deep is a symbolic link inside the repository'],
    ['a planted file link to an outside file', 'repo/victim.sarif', 'victim.sarif is a symbolic link inside the repository'],
    ['a planted dangling file link', 'repo/dangling.sarif', 'dangling.sarif is a symbolic link inside the repository'],
    ['the user\'s link to a planted link', 'my-link-to-planted/x.sarif', 'reports-link is a symbolic link inside the repository'],
    ['a FIFO (never opened, so nothing hangs)', 'repo/fifo.sarif', 'exists and is not a regular file'],
    ['a directory', 'repo/reports', 'exists and is not a regular file'],
    ['the root itself', 'repo', 'exists and is not a regular file'],
    ['a missing directory', 'repo/nope/x.sarif', 'does not exist (ENOENT)'],
    ['a file used as a directory', 'repo/a/file/x.sarif', 'is not a directory (ENOTDIR)'],
    ['a link loop outside', 'loop1/x.sarif', 'too many symbolic links'],
    ['a NUL byte', 'repo/x\0.sarif', 'NUL byte'],
  ])('%s: refused', async (_name, file, fragment) => {
    const before = await fs.readFile(path.join(ws, 'elsewhere', 'victim'), 'utf8');
    await expect(writeOutputFile(path.join(ws, file), 'evil\n', root)).rejects.toThrow(fragment);
    expect(await elsewhere()).toEqual(['victim']);
    expect(await fs.readFile(path.join(ws, 'elsewhere', 'victim'), 'utf8')).toBe(before);
    expect((await fs.readdir(path.join(root, 'reports'))).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it.skipIf(!existsSync('/proc/self/fd'))('a directory swapped for a link after the check fails the open instead of being followed', async () => {
    const target = await resolveOutputPath(path.join(root, 'reports', 'x.sarif'), root);
    await fs.rm(path.join(root, 'reports'), { recursive: true });
    await fs.symlink(path.join(ws, 'elsewhere'), path.join(root, 'reports'));
    await expect(writeToTarget(target, 'evil\n', root)).rejects.toThrow(/changed while spelunk was writing \((ELOOP|ENOTDIR) at "reports"\)/);
    expect(await elsewhere()).toEqual(['victim']);
  });
});

describe('removeOutputFile: a stale output is removed only when it is a regular file reached without links', () => {
  it.each<[string, string, boolean | string]>([
    ['a regular file', 'repo/existing.sarif', true],
    ['no file', 'repo/none.sarif', false],
    ['a planted file link (the outside file stays)', 'repo/victim.sarif', 'is a symbolic link inside the repository'],
    ['through a planted directory link', 'repo/reports-link/victim', 'is a symbolic link inside the repository'],
    ['a FIFO', 'repo/fifo.sarif', 'not a regular file'],
  ])('%s', async (_name, file, expected) => {
    const run = removeOutputFile(path.join(ws, file), root);
    if (typeof expected === 'string') await expect(run).rejects.toThrow(expected);
    else await expect(run).resolves.toBe(expected);
    expect(await elsewhere()).toEqual(['victim']);
    if (expected === true) expect(existsSync(path.join(ws, file))).toBe(false);
  });
});
