import { defineConfig } from 'vitest/config';
import base from './vitest.mutate.config.js';

/**
 * The mutation run of the command rules and checks that no run had measured (scripts/stryker-policy.config.mjs): the
 * readers' rules, git's forms and confinement, the pipeline, the audit report's check, the git
 * metadata and include checks, safe writes and the child slots, with their table tests and the tests that import
 * them. The tests that run the whole bash tool over real programs (bash.test.ts, hostile-git.test.ts) are left out:
 * each survivor re-ran them, so a score from this config is a floor.
 */
export default defineConfig({
  test: {
    ...base.test,
    include: [
      'test/sandbox/policy.test.ts', 'test/sandbox/git-policy.test.ts', 'test/sandbox/slots.test.ts', 'test/sandbox/git-metadata.test.ts',
      'test/sandbox/git-includes.test.ts', 'test/sandbox/safe-write.test.ts', 'test/tools/pipeline.test.ts', 'test/tools/command.test.ts',
      'test/tools/schema-agreement.test.ts', 'test/tools/schemas.test.ts', 'test/tools/report-findings.test.ts', 'test/audit/**/*.test.ts',
    ],
  },
});
