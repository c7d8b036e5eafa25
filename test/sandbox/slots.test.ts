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

  it('five sleeps asked for at once run two at a time', async () => {
    limitChildren(2);
    let running = 0;
    let most = 0;
    const one = async (): Promise<void> => {
      const result = await execCapped('/usr/bin/sh', ['-c', 'echo started; sleep 0.2'], {
        cwd: '/',
        timeoutMs: 10_000,
        onStdout: () => {
          running++;
          most = Math.max(most, running);
        },
      });
      running--;
      expect(result.exitCode).toBe(0);
    };
    await Promise.all([one(), one(), one(), one(), one()]);
    expect(most).toBe(2);
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
