import { existsSync, promises as fs, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execCapped } from '../../src/sandbox/exec.js';
import { GIT_BINARY } from '../../src/sandbox/git.js';
import { TABLES_ONLY } from '../../src/sandbox/kernel.js';
import { bundledRg } from '../../src/sandbox/programs.js';
import { programWorld, type ListRunner } from '../../src/sandbox/world.js';
import { installedHere } from '../support/installed.js';

/** The loader's listing as spelunk runs it: outside any sandbox, fixed environment. */
const run: ListRunner = (loader, args) => execCapped(loader, args, { cwd: '/', timeoutMs: 10_000, sandbox: TABLES_ONLY });
const LOCALE = ['/usr/lib/locale/C.utf8', '/usr/lib/locale/C.UTF-8'].find((dir) => existsSync(dir));

async function filesOf(binary: string): Promise<readonly string[]> {
  const world = await programWorld(realpathSync(binary), run);
  if (!world.ok) throw new Error(world.error);
  return world.files;
}

describe('programWorld: a program, its libraries, its loader and its data, nothing else', () => {
  it.skipIf(GIT_BINARY === null)('git: its binary, the loader and the libraries it lists; no git-core helper, no shell, no locale', async () => {
    const files = await filesOf(GIT_BINARY!);
    expect(files[0]).toBe(realpathSync(GIT_BINARY!));
    expect(files.some((file) => /\/ld-linux[^/]*\.so/.test(file) || /\/ld-musl/.test(file))).toBe(true);
    expect(files.some((file) => /\/libc\.so/.test(file))).toBe(true);
    expect(files.filter((file) => /git-core|\/sh$|\/bash$|\/dash$|locale/.test(file))).toEqual([]);
    for (const file of files) expect(existsSync(file)).toBe(true);
  });

  it('rg from @vscode/ripgrep is static: its world is its binary', async () => {
    const rg = await bundledRg();
    if (rg === null) throw new Error('the bundled rg is missing: npm ci installs it');
    expect(await filesOf(rg)).toEqual([realpathSync(rg)]);
  });

  it.skipIf(LOCALE === undefined)('a text program gets the C.UTF-8 locale CHILD_ENV names (glibc does not build it in)', async () => {
    expect(await filesOf('/usr/bin/wc')).toContain(LOCALE);
  });

  it.skipIf(!installedHere('file'))('file gets the magic database `file --version` names (skipped: file is not installed)', async () => {
    const files = await filesOf('/usr/bin/file');
    expect(files.some((f) => /magic\.mgc$/.test(f))).toBe(true);
    expect(files.filter((f) => /magic/.test(f)).every((f) => existsSync(f))).toBe(true);
  });
});

describe('programWorld: what it refuses, and that it asks once', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-world-unit-')));
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  /** A copy of a dynamically linked program at a path of its own (worlds are cached by path). */
  async function copy(name: string): Promise<string> {
    const file = path.join(dir, name);
    await fs.copyFile('/usr/bin/true', file);
    await fs.chmod(file, 0o755);
    return file;
  }

  it.each([
    ['a script (no world holds its interpreter)', 'script', async (file: string) => fs.writeFile(file, '#!/bin/sh\ntrue\n'), ok(''), /not an ELF executable/],
    ['a library only the loader cache knows', 'cached', null, ok('\tlibfoo.so.1 => not found\n'), /library libfoo\.so\.1 not found outside the loader's cache/],
    ['a listing that fails', 'failing', null, { stdout: '', stderr: 'ld.so: bad\n', exitCode: 127 }, /its loader could not list its libraries \(ld\.so: bad\)/],
  ] as const)('%s is refused with the reason', async (_name, name, write, answer, reason) => {
    const file = await copy(name);
    if (write !== null) await write(file);
    let calls = 0;
    const answering: ListRunner = async () => {
      calls++;
      return answer;
    };
    const world = await programWorld(file, answering);
    expect(world).toEqual({ ok: false, error: expect.stringMatching(reason) });
    // Not kept: the next call asks again (a listing that timed out under load must not refuse the program for good).
    expect(await programWorld(file, answering)).toEqual(world);
    if (write === null) expect(calls).toBe(2);
  });

  it('lists a program once per process, however many calls start it', async () => {
    const file = await copy('once');
    let calls = 0;
    const counting: ListRunner = async (loader, args) => {
      calls++;
      return run(loader, args);
    };
    const [a, b] = await Promise.all([programWorld(file, counting), programWorld(file, counting)]);
    const c = await programWorld(file, counting);
    expect(a).toEqual(b);
    expect(c).toEqual(a);
    expect(a.ok && a.files[0]).toBe(file);
    expect(calls).toBe(1);
  });
});

function ok(stdout: string): { stdout: string; stderr: string; exitCode: number } {
  return { stdout, stderr: '', exitCode: 0 };
}
