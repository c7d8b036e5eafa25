import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildBinary } from './pty.js';

/**
 * Builds dist/ once per test run, before any file starts: the binary and pseudo-terminal tests run the real bundle.
 * Also makes the run's scratch XDG_STATE_HOME (saved sessions of in-process runs; the test workers inherit the
 * variable) and removes it at the end.
 */
export default function setup(): () => void {
  buildBinary();
  const state = mkdtempSync(path.join(os.tmpdir(), 'spelunk-test-state-'));
  process.env.SPELUNK_TEST_STATE_HOME = state;
  return () => rmSync(state, { recursive: true, force: true });
}
