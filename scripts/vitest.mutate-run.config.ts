import { defineConfig } from 'vitest/config';
import base from './vitest.mutate.config.js';

/**
 * The mutation run of run/run-question.ts (scripts/stryker-run.config.mjs): the run service's own tests, the MCP
 * research tool's in-process tests, which call it, and the tests its earlier run used (saved.test.ts and
 * stored-state.test.ts reach it through `main`, stop-words.test.ts words its stops). The other saved-session tests
 * and the whole mutation suite are left out (each survivor re-ran them all), so a score from this config is a floor.
 */
export default defineConfig({
  test: {
    ...base.test,
    include: [
      'test/run/run-question*.test.ts', 'test/run/saved-head.test.ts', 'test/run/saved.test.ts', 'test/run/stored-state.test.ts',
      'test/stop-words.test.ts', 'test/mcp/research.test.ts', 'test/mcp/research-limits.test.ts',
    ],
  },
});
