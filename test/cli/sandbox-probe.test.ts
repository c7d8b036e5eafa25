import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chooseSandbox } from '../../src/sandbox/choose.js';

// Issue 33: `--sandbox required` with a bwrap that exists but cannot run says so, never "not installed".
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A directory holding a `bwrap` made by `make`, as the one place the probe looks. */
function bwrapDir(make: (file: string) => void): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spelunk-bwrap-'));
  dirs.push(dir);
  make(path.join(dir, 'bwrap'));
  return dir;
}

describe('the kernel sandbox probe names why bwrap cannot be used', () => {
  it.each<[string, (file: string) => void, RegExp]>([
    ['no bwrap at all', () => {}, /: bwrap is not installed;/],
    ['a bwrap that is not executable', (file) => writeFileSync(file, '#!/bin/sh\nexit 0\n', { mode: 0o644 }), /bwrap is there but cannot be run by this user \(not an executable file\)/],
    ['a dangling bwrap link', (file) => symlinkSync('/nonexistent/bwrap', file), /bwrap is there but cannot be run by this user/],
    ['a bwrap that runs but fails (no user namespaces)', (file) => {
      writeFileSync(file, '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n');
      chmodSync(file, 0o755);
    }, /bwrap failed a trivial run \(No permissions to create new namespace\)/],
  ])('%s', async (_name, make, message) => {
    const choice = await chooseSandbox('required', [bwrapDir(make)]);
    expect(choice.ok).toBe(false);
    if (choice.ok) return;
    expect(choice.error).toMatch(message);
    expect(choice.error).toMatch(/^--sandbox required, but the kernel sandbox cannot run here: /);
    if (!/not installed/.test(message.source)) expect(choice.error).not.toContain('not installed');
  });
});
