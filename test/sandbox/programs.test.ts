import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bundledRg, resolvePrograms, TRUSTED_PATH } from '../../src/sandbox/programs.js';

// A machine whose @vscode/ripgrep platform package is missing: the package throws when imported.
vi.mock('@vscode/ripgrep', () => {
  throw new Error('@vscode/ripgrep: no binary for this platform');
});

let base: string;

beforeAll(() => {
  base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'spelunk-programs-')));
  // First directory: a `cat` that is a directory (searchable, so "executable"); second: a real executable `cat`.
  mkdirSync(path.join(base, 'first', 'cat'), { recursive: true });
  mkdirSync(path.join(base, 'second'));
  writeFileSync(path.join(base, 'second', 'cat'), '#!/bin/sh\n');
  chmodSync(path.join(base, 'second', 'cat'), 0o755);
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('resolvePrograms', () => {
  it('takes a program from the trusted directories by default', async () => {
    const found = await resolvePrograms(Promise.resolve(null));
    expect(TRUSTED_PATH.split(':').map((dir) => path.join(dir, 'cat'))).toContain(found.get('cat'));
  });

  it('skips a directory of the program’s name and takes the next trusted file', async () => {
    const found = await resolvePrograms(Promise.resolve(null), [path.join(base, 'first'), path.join(base, 'second')]);
    expect(found.get('cat')).toBe(path.join(base, 'second', 'cat'));
    expect(found.has('rg')).toBe(false);
  });
});

describe('bundledRg', () => {
  it('answers null, not a crash, when the ripgrep package cannot be loaded', async () => {
    await expect(bundledRg()).resolves.toBeNull();
  });
});
