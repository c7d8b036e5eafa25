import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { snapshotUpdate } from './support/snapshot-policy.js';

/**
 * Snapshot files are never created silently in CI: a missing snapshot there fails the run and writes nothing. The
 * chain, link by link: `.ci/run` sets CI; both vitest configs take `update` from snapshotUpdate; with CI set that is
 * "none"; and vitest with "none" fails a test whose snapshot is missing (a child vitest on a tiny test proves it, and
 * the same child without CI writes the file, so the check can tell the two apart).
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const VITEST = path.join(path.dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');

describe('snapshotUpdate', () => {
  it.each<[string | undefined, 'none' | undefined]>([
    [undefined, undefined], ['', undefined], ['0', undefined], ['false', undefined], [' FALSE ', undefined],
    ['true', 'none'], ['1', 'none'], ['yes', 'none'], ['TRUE', 'none'],
  ])('CI=%j → %j', (ci, update) => {
    expect(snapshotUpdate(ci === undefined ? {} : { CI: ci })).toBe(update);
  });
});

describe('the project', () => {
  it('.ci/run sets CI before the tests run', () => {
    const script = readFileSync(path.join(ROOT, '.ci/run'), 'utf8');
    const set = script.search(/^export CI=/m);
    expect(set).toBeGreaterThan(-1);
    expect(set).toBeLessThan(script.search(/^npm test$/m));
  });

  it('both vitest configs refuse new snapshots when CI is set', async () => {
    const saved = process.env.CI;
    process.env.CI = 'true';
    try {
      // Each config reads the environment when it is first imported, which is here (this file runs in its own worker).
      const configs = await Promise.all([import('../vitest.config.js'), import('../scripts/vitest.mutate.config.js')]);
      expect(configs.map((c) => (c.default as { test?: { update?: unknown } }).test?.update)).toEqual(['none', 'none']);
    } finally {
      if (saved === undefined) delete process.env.CI;
      else process.env.CI = saved;
    }
  });
});

describe('vitest with a missing snapshot', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs a child vitest on one test whose snapshot file is missing; its config takes `update` from snapshotUpdate. */
  function run(ci: string | undefined): { code: number | null; out: string; written: boolean } {
    dir = mkdtempSync(path.join(os.tmpdir(), 'spelunk-snap-'));
    const policy = path.join(ROOT, 'test/support/snapshot-policy.ts');
    writeFileSync(
      path.join(dir, 'vitest.config.mts'),
      `import { snapshotUpdate } from ${JSON.stringify(policy)};\nexport default { test: { globals: true, include: ['*.test.ts'], update: snapshotUpdate({ CI: process.env.POLICY_CI }) } };\n`,
    );
    writeFileSync(path.join(dir, 'snap.test.ts'), "it('has a snapshot', () => { expect({ a: 1 }).toMatchSnapshot(); });\n");
    // No CI in the child's environment: vitest's own guess (std-env) stays off, so only the policy decides.
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir };
    if (ci !== undefined) env.POLICY_CI = ci;
    const child = spawnSync(process.execPath, [VITEST, 'run', '--root', dir, '--config', path.join(dir, 'vitest.config.mts')], {
      cwd: dir,
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { code: child.status, out: `${child.stdout}${child.stderr}`, written: existsSync(path.join(dir, '__snapshots__', 'snap.test.ts.snap')) };
  }

  it('with the policy\'s CI set, fails and writes no snapshot file', () => {
    const result = run('true');
    expect(result.code, result.out).toBe(1);
    expect(result.out).toContain('Snapshot `has a snapshot 1` mismatched');
    expect(result.written).toBe(false);
  });

  it('without it, writes the file (what a CI run must never do)', () => {
    const result = run(undefined);
    expect(result.code, result.out).toBe(0);
    expect(result.written).toBe(true);
  });
});
