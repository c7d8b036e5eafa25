import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { execCapped, limitChildren } from '../../src/sandbox/exec.js';
import { Slots } from '../../src/sandbox/slots.js';

describe('Slots: a bounded semaphore with a bounded queue', () => {
  it('grants up to its size at once, then queues first come first served, then answers full', async () => {
    const slots = new Slots(2, 1);
    const a = await slots.acquire();
    const b = await slots.acquire();
    expect(slots.held).toBe(2);
    const order: string[] = [];
    const c = slots.acquire().then((r) => (order.push('c'), r));
    expect(slots.waiting).toBe(1);
    expect(await slots.acquire()).toBe('full');
    if (typeof a !== 'function' || typeof b !== 'function') throw new Error('granted at once');
    a();
    a(); // idempotent: a second release frees nothing more
    const third = await c;
    expect(order).toEqual(['c']);
    expect(slots.held).toBe(2);
    if (typeof third === 'function') third();
    b();
    expect(slots.held).toBe(0);
  });

  it('an abort while waiting gives the place up and holds nothing', async () => {
    const slots = new Slots(1);
    const held = await slots.acquire();
    const controller = new AbortController();
    const waiting = slots.acquire(controller.signal);
    controller.abort();
    expect(await waiting).toBe('aborted');
    expect(slots.waiting).toBe(0);
    expect(await slots.acquire(AbortSignal.abort())).toBe('aborted');
    if (typeof held === 'function') held();
    expect(slots.held).toBe(0);
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses %s slots', (n) => {
    expect(() => new Slots(n)).toThrow(/at least 1/);
  });
});

describe('limitChildren: the children of a process are bounded (the MCP server sets it from --max-memory-gib)', () => {
  afterEach(() => limitChildren(null));

  // A barrier, not the clock: each child says it started and then blocks on its own FIFO until the test releases it,
  // so which children run at once is decided by the test, never by how fast the machine is.
  it('five blocking children asked for at once: two run, three wait; each release starts exactly one more', async () => {
    const slots = limitChildren(2)!;
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-slots-'));
    try {
      const fifos = [0, 1, 2, 3, 4].map((i) => path.join(dir, `go${i}`));
      for (const fifo of fifos) execFileSync('mkfifo', [fifo]);
      const started: number[] = [];
      const finished: number[] = [];
      let most = 0;
      const one = async (i: number): Promise<void> => {
        const result = await execCapped('/usr/bin/sh', ['-c', 'echo started; read x < "$1"', 'sh', fifos[i]!], {
          cwd: dir,
          timeoutMs: 60_000,
          onStdout: () => {
            started.push(i);
            most = Math.max(most, started.length - finished.length);
          },
        });
        expect(result.exitCode).toBe(0);
        finished.push(i);
      };
      const all = Promise.all([0, 1, 2, 3, 4].map(one));
      for (let released = 0; released < 5; released++) {
        const running = Math.min(2, 5 - released);
        await until(() => started.length - finished.length === running && slots.waiting === 5 - released - running);
        expect(slots.held).toBe(running);
        const next = started.find((i) => !finished.includes(i))!;
        await fs.writeFile(fifos[next]!, 'go\n');
        await until(() => finished.includes(next));
      }
      await all;
      expect(most).toBe(2);
      expect([...started].sort()).toEqual([0, 1, 2, 3, 4]);
      expect(slots.held).toBe(0);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('a call aborted while it waits for a slot starts nothing and says aborted', async () => {
    limitChildren(1);
    const first = execCapped('/usr/bin/sleep', ['0.3'], { cwd: '/', timeoutMs: 10_000 });
    const controller = new AbortController();
    const second = execCapped('/usr/bin/sh', ['-c', 'echo ran'], { cwd: '/', timeoutMs: 10_000, signal: controller.signal });
    controller.abort();
    expect(await second).toMatchObject({ aborted: true, stdout: '', exitCode: null });
    expect((await first).exitCode).toBe(0);
  });
});

/** Resolves once `condition` holds (checked every 10 ms); a condition never met fails the row at the test's timeout. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}
