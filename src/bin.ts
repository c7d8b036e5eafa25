#!/usr/bin/env node
import { main } from './cli.js';

// The process's entry: everything below main receives the process through `io` (tests drive main directly). Besides
// this file only launch.ts (the code cache's key and place) and sandbox/exec.ts (killing a tool's process group) touch it.
// Interrupts not yet answered: the first two are the front end's (a run cancels on the first; the REPL quits on two at
// an empty prompt); a third before the front end settles (a cancellation still unwinding) means "now". The count
// starts again each time the front end settles (io.settled), so interrupts spread over a long REPL session never add up.
let interrupts = 0;
process.on('SIGINT', () => {
  if (++interrupts >= 3) process.exit(130);
});
process.on('SIGTERM', () => {});
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  // `spelunk "q" | head` closing the pipe early is not a failure worth a stack trace.
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
});

// No top-level await: the bundle is CommonJS, so that it can run from V8's code cache (see launch.ts).
void main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  cwd: process.cwd(),
  signals: process,
  settled: () => {
    interrupts = 0;
  },
}).then((code) => {
  process.exitCode = code;
  // A lingering keep-alive socket or a stuck child must not turn a finished run into a hang.
  setTimeout(() => process.exit(), 2000).unref();
});
