import { defineConfig } from 'vitest/config';
import base from './vitest.mutate.config.js';

/**
 * The mutation run of citations/verify.ts and extract.ts (scripts/stryker-citations.config.mjs): only the test files
 * that import the citation code. With the whole mutation suite, the run-service and loop tests also reach the citation
 * check, and each survivor re-ran them: 1,466 mutants (with the map) were estimated at over two hours here.
 */
export default defineConfig({
  test: {
    ...base.test,
    include: [
      'test/citations/**/*.test.ts', 'test/run/cited.test.ts', 'test/tools/read-file-outline.test.ts',
      'test/sandbox/git-time.test.ts', 'test/sandbox/git-subdir.test.ts', 'test/sandbox/git-metadata.test.ts',
    ],
  },
});
