import { parentPort, workerData } from 'node:worker_threads';
import { readFile } from './read.js';
import { SegmentBuilder } from './segment.js';

/**
 * The worker thread of a cold build (store.ts's BuildHelper runs this file as dist/build-worker.cjs): each message is
 * a batch of files below `root`, read as the build reads any file (read.ts: same confinement, same tokens), and
 * answered with what was collected, which the build appends in its place (SegmentBuilder.absorb).
 */
export interface BuildJob {
  batch: number;
  files: string[];
}

const { root } = workerData as { root: string };
const dirs = new Map<string, boolean>();
parentPort?.on('message', ({ batch, files }: BuildJob) => {
  const builder = new SegmentBuilder();
  for (const rel of files) {
    const file = readFile(root, rel, dirs);
    builder.add(file.row, file.runs);
  }
  const part = builder.part();
  // Moved, not copied: each is an ArrayBuffer of this thread's own (none is shared).
  parentPort?.postMessage({ batch, part }, [part.stats, part.hashes, part.states, part.stream].map((a) => a.buffer as ArrayBuffer));
});
