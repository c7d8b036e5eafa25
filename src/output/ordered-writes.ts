import type { OutStream } from '../io.js';

/** Writes to several streams in one order, some of them produced asynchronously. */
export interface OrderedWrites {
  /** A stream whose writes keep their order relative to deferred ones. */
  wrap(stream: OutStream): OutStream;
  /** Writes `text` to `stream` when it resolves, and holds every later write until then. */
  defer(stream: OutStream, text: Promise<string>): void;
  settled(): Promise<void>;
}

/**
 * Keeps stdout and stderr in the order the events came in although a rendered block waits for its citations to be
 * checked: while anything is pending, later writes queue behind it; otherwise they go straight through (so a run
 * without rendering stays synchronous).
 */
export function orderedWrites(): OrderedWrites {
  let chain: Promise<void> = Promise.resolve();
  let pending = 0;
  const enqueue = (run: () => Promise<void> | void): void => {
    pending += 1;
    chain = chain.then(run).catch(() => {}).then(() => {
      pending -= 1;
    });
  };
  return {
    wrap(stream) {
      return {
        isTTY: stream.isTTY,
        columns: stream.columns,
        write(chunk: string) {
          if (pending === 0) return stream.write(chunk);
          enqueue(() => void stream.write(chunk));
          return true;
        },
      } as OutStream;
    },
    defer(stream, text) {
      enqueue(async () => void stream.write(await text));
    },
    async settled() {
      while (pending > 0) await chain;
    },
  };
}
