import { execFile } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The command npm links is bin/spelunk.cjs: it runs the built launcher, and in a clone installed without its build
 * (`--ignore-scripts`: no prepare, so no dist/) it says how to finish instead of failing to load a module.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };
const run = promisify(execFile);
let tmp: string;

beforeAll(async () => {
  tmp = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-ignore-scripts-')));
});
afterAll(async () => fs.rm(tmp, { recursive: true, force: true }));

describe('bin/spelunk.cjs', () => {
  it('with dist/ built, it is spelunk', async () => {
    const { stdout } = await run(process.execPath, [path.join(ROOT, pkg.bin.spelunk!), '--version']);
    expect(stdout).toBe(`${pkg.version}\n`);
  });

  it('a clone installed globally with --ignore-scripts: a linked `spelunk` that says how to finish the install', async () => {
    const clone = path.join(tmp, 'clone');
    await fs.mkdir(clone);
    for (const entry of ['package.json', 'package-lock.json', 'bin']) await fs.cp(path.join(ROOT, entry), path.join(clone, entry), { recursive: true });
    const prefix = path.join(tmp, 'prefix');
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmp };
    // Offline: a global install of a folder links it and fetches nothing.
    await run('npm', ['install', '--global', '--ignore-scripts', '--offline', '--prefix', prefix, '--cache', path.join(tmp, 'cache'), '--no-audit', '--no-fund', '--no-update-notifier', clone], { env });
    expect(await fs.realpath(path.join(prefix, 'lib', 'node_modules', 'spelunk-cli'))).toBe(clone);
    const failed = await run(path.join(prefix, 'bin', 'spelunk'), ['--version'], { env }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toBe(
      `spelunk: ${clone} is not built (no dist/): it was installed with its scripts skipped (--ignore-scripts). Finish the install with: cd ${JSON.stringify(clone)} && npm run prepare  (a global install of a clone is a link to the clone, so this fixes it too)\n`,
    );
  }, 60_000);
});
