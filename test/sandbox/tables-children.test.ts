import { execFileSync, spawn } from 'node:child_process';
import { promises as fs, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHILD_ENV, execCapped, PARENT_DEATH } from '../../src/sandbox/exec.js';
import { TABLES_ONLY } from '../../src/sandbox/kernel.js';

/**
 * F15: with the tables alone (no bwrap and its --die-with-parent), a child blocked where no CPU limit reaches it — a
 * FIFO opened for reading — must not outlive a spelunk killed with SIGKILL. A small node program starts `cat FIFO`
 * through execCapped and is killed; the child must go with it, and does not without setpriv (the control row).
 */
const WHY_SKIPPED = PARENT_DEATH === null ? ' (skipped: util-linux setpriv with --pdeathsig is not installed)' : '';
const EXEC = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'sandbox', 'exec.ts');
const KERNEL_MODULE = path.join(path.dirname(EXEC), 'kernel.ts');

describe.skipIf(PARENT_DEATH === null)(`a child of the tables layer dies with spelunk${WHY_SKIPPED}`, () => {
  let dir: string;
  let program: string;
  beforeAll(async () => {
    dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-pdeath-')));
    const entry = path.join(dir, 'parent.ts');
    // argv: the FIFO, then whether to ask for the parent-death signal (the control row runs without it).
    await fs.writeFile(
      entry,
      `import { execCapped } from ${JSON.stringify(EXEC)};\n` +
        `import { TABLES_ONLY } from ${JSON.stringify(KERNEL_MODULE)};\n` +
        `const [fifo, keep] = process.argv.slice(2);\n` +
        `await execCapped('/usr/bin/cat', [fifo], { cwd: ${JSON.stringify(dir)}, timeoutMs: 120_000, sandbox: TABLES_ONLY, ...(keep === 'off' ? { parentDeath: null } : {}) });\n`,
    );
    program = path.join(dir, 'parent.mjs');
    await build({ entryPoints: [entry], outfile: program, bundle: true, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' });
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  it.each([
    ['with setpriv --pdeathsig KILL, the blocked child is killed with its parent', 'on', false],
    ['control: without it, the blocked child lives on', 'off', true],
  ] as const)('%s', async (_name, death, survives) => {
    const fifo = path.join(dir, `fifo-${death}`);
    execFileSync('mkfifo', [fifo]);
    const parent = spawn(process.execPath, [program, fifo, death], { stdio: 'ignore' });
    try {
      await waitFor(() => blocked(fifo).length > 0);
      parent.kill('SIGKILL');
      await new Promise((resolve) => parent.once('exit', resolve));
      await waitFor(() => (blocked(fifo).length > 0) === survives);
      // Long enough for a late signal to have arrived.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(blocked(fifo).length > 0).toBe(survives);
    } finally {
      parent.kill('SIGKILL');
      for (const pid of blocked(fifo)) process.kill(pid, 'SIGKILL');
    }
  });
});

/**
 * F11: with the tables alone there is no private /tmp. `sort` spills a big input to temporary files in TMPDIR (or
 * /tmp), so CHILD_ENV names a directory that cannot exist: the spill fails, naming it, instead of writing on the host.
 */
describe('a tables child has no temporary directory', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-tmpdir-')));
    await fs.mkdir(path.join(dir, 'spill'));
    const lines = Array.from({ length: 20_000 }, (_, i) => String((i * 7919) % 20_000)).join('\n');
    await fs.writeFile(path.join(dir, 'big.txt'), `${lines}\n`);
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  it.each([
    ['CHILD_ENV', {}, false],
    ['control: a real TMPDIR', { TMPDIR: 'spill' }, true],
  ] as const)('sort -S 1 of a big file, %s', async (_name, env, spills) => {
    const tmp = 'TMPDIR' in env ? path.join(dir, env.TMPDIR) : undefined;
    const run = await execCapped('/usr/bin/sort', ['-n', '-S', '1', 'big.txt'], {
      cwd: dir, timeoutMs: 30_000, sandbox: TABLES_ONLY, limiter: null, ...(tmp === undefined ? {} : { env: { TMPDIR: tmp } }),
    });
    if (spills) {
      expect(run.exitCode).toBe(0);
      expect(run.stdout.split('\n', 3)).toEqual(['0', '1', '2']);
      return;
    }
    expect(run.exitCode).not.toBe(0);
    expect(run.stderr).toContain(`sort: cannot create temporary file in '${CHILD_ENV.TMPDIR}'`);
  });
});

/** Pids of live `cat FIFO` processes (read from /proc). */
function blocked(fifo: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      if (argv[0] === '/usr/bin/cat' && argv[1] === fifo && state !== 'Z') found.push(Number(entry));
    } catch {
      // exited while listing
    }
  }
  return found;
}

async function waitFor(condition: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
