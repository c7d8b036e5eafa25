import { defineConfig } from 'vitest/config';
import base from './vitest.mutate.config.js';

/**
 * The mutation run of preamble/map.ts (scripts/stryker-map.config.mjs): only the preamble's own test files. The
 * run-service tests also build a map, and each survivor then re-ran them (~2 mutants a minute).
 * system-prompt.test.ts is left out: it calls process.chdir, which Stryker's worker processes refuse.
 */
export default defineConfig({
  test: { ...base.test, include: ['test/preamble/**/*.test.ts'], exclude: ['test/preamble/system-prompt.test.ts'] },
});
