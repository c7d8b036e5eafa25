/**
 * A counting semaphore with a bounded queue: at most `size` holders at once, at most `queue` waiters, first come first
 * served. Used for the MCP server's concurrent calls and for the children of a process (each child may reserve
 * CHILD_ADDRESS_SPACE_BYTES, so their number bounds the total memory allowance).
 */
export class Slots {
  readonly size: number;
  readonly queue: number;
  #held = 0;
  readonly #waiting: { grant: () => void }[] = [];

  constructor(size: number, queue = Number.POSITIVE_INFINITY) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`a slot count must be a whole number of at least 1 (got ${size})`);
    this.size = size;
    this.queue = queue;
  }

  get held(): number {
    return this.#held;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Resolves with a release function once a slot is free; `full` when the queue is full (nothing is held then), and
   * `aborted` when `signal` fires first (the place in the queue is given up). Release is idempotent.
   */
  async acquire(signal?: AbortSignal): Promise<(() => void) | 'full' | 'aborted'> {
    if (signal?.aborted) return 'aborted';
    if (this.#held < this.size) return this.#grant();
    if (this.#waiting.length >= this.queue) return 'full';
    return new Promise((resolve) => {
      const waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.#grant());
        },
      };
      const onAbort = (): void => {
        const at = this.#waiting.indexOf(waiter);
        if (at >= 0) this.#waiting.splice(at, 1);
        resolve('aborted');
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(waiter);
    });
  }

  #grant(): () => void {
    this.#held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#held--;
      this.#waiting.shift()?.grant();
    };
  }
}
