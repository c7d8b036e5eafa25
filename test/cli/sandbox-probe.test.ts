import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chooseSandbox } from '../../src/sandbox/choose.js';
import { BIN } from '../support/pty.js';

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

/** What the probe says of a /proc that is not this pid namespace's, and the fix it gives. */
const why = '/proc does not show this process as /proc/self (a pid namespace without its own /proc)';
const fix = 'mount a /proc for this pid namespace (as unshare --mount-proc does)';

describe('a /proc that is not this pid namespace\'s (its self link names another pid, or none): no kernel sandbox', () => {
  /** A directory standing for /proc, its `self` a link to `pid` (none when null); beside a bwrap that would run. */
  const fakeProc = (pid: string | null): string => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'spelunk-proc-'));
    dirs.push(dir);
    if (pid !== null) symlinkSync(pid, path.join(dir, 'self'));
    return dir;
  };
  /** A bwrap whose trial run succeeds (made per test: afterEach removes it). */
  const working = (): string =>
    bwrapDir((file) => {
      writeFileSync(file, '#!/bin/sh\nexit 0\n');
      chmodSync(file, 0o755);
    });

  it.each([
    ['another pid', String(process.pid + 1)],
    ['pid 1', '1'],
    ['no self link at all', null],
  ])('%s: required refuses, auto falls back to the tables, each naming /proc and how to mend it', async (_name, pid) => {
    const proc = fakeProc(pid);
    const bwrap = working();
    const required = await chooseSandbox('required', [bwrap], proc);
    expect(required).toEqual({ ok: false, error: `--sandbox required, but the kernel sandbox cannot run here: ${why}; ${fix}` });
    const auto = await chooseSandbox('auto', [bwrap], proc);
    expect(auto).toMatchObject({ ok: true, sandbox: { kind: 'tables' }, notice: `spelunk: no kernel sandbox (${why}); programs run behind the command tables alone; ${fix}` });
  });

  it('its own pid (control): the trial run decides, and a bwrap that runs it is used', async () => {
    const bwrap = working();
    const choice = await chooseSandbox('required', [bwrap], fakeProc(String(process.pid)));
    expect(choice).toMatchObject({ ok: true, sandbox: { kind: 'kernel', bwrap: path.join(bwrap, 'bwrap') }, notice: null });
  });
});

// A pid namespace whose /proc is the host's (`unshare --pid` without `--mount-proc`): bwrap there looks up its child's
// namespaces by a pid that names another process or none, and its runs failed at random (a test's control row hung
// 30 s in CI). The probe now says so every time, where one trial run had passed or failed by chance.
const pidNamespace = spawnSync('/usr/bin/bwrap', ['--dev-bind', '/', '/', '--unshare-pid', '/bin/true']);
describe.skipIf(pidNamespace.status !== 0)(
  `spelunk in a pid namespace, by the built binary${pidNamespace.status === 0 ? '' : ' (skipped: bwrap cannot make a pid namespace here)'}`,
  () => {
    const locate = (proc: string[], mode: string) => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'spelunk-pidns-'));
      dirs.push(root);
      mkdirSync(path.join(root, 'src'));
      writeFileSync(path.join(root, 'src/main.ts'), 'export function mainLoop() {}\n');
      return spawnSync('/usr/bin/bwrap', ['--dev-bind', '/', '/', '--unshare-pid', ...proc, process.execPath, BIN, 'locate', '--sandbox', mode, '-C', root, 'mainLoop'], {
        encoding: 'utf8',
        env: { PATH: '/usr/bin:/bin' },
      });
    };

    it('without its own /proc: required is refused and auto falls back to the tables, each naming /proc', () => {
      const required = locate([], 'required');
      expect(required.status).toBe(2);
      expect(required.stderr).toBe(`spelunk: --sandbox required, but the kernel sandbox cannot run here: ${why}; ${fix}\n`);
      const auto = locate([], 'auto');
      expect(auto.status).toBe(0);
      expect(auto.stderr).toBe(`spelunk: no kernel sandbox (${why}); programs run behind the command tables alone; ${fix}\n`);
      expect(auto.stdout).toContain('src/main.ts');
    });

    it('with its own /proc (control): the kernel sandbox, nothing said', () => {
      const run = locate(['--proc', '/proc'], 'required');
      expect(run.status).toBe(0);
      expect(run.stderr).toBe('');
      expect(run.stdout).toContain('src/main.ts');
    });
  },
);
