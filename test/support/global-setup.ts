import { buildBinary } from './pty.js';

/** Builds dist/ once per test run, before any file starts: the binary and pseudo-terminal tests run the real bundle. */
export default function setup(): void {
  buildBinary();
}
