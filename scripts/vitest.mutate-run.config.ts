import { defineConfig } from 'vitest/config';
import base from './vitest.mutate.config.js';

/**
 * The mutation run of run/run-question.ts (scripts/stryker-run.config.mjs): the run service's own tests and the MCP
 * research tool's in-process tests, which call it. The saved-session tests also reach it, through `main`: each
 * survivor re-ran all of them, too slow to finish on two cores, so a score from this config is a floor.
 */
export default defineConfig({
  test: {
    ...base.test,
    include: ['test/run/run-question*.test.ts', 'test/run/saved-head.test.ts', 'test/mcp/research.test.ts', 'test/mcp/research-limits.test.ts'],
  },
});
