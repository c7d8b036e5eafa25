import { defineConfig } from 'vitest/config';

/**
 * The suite as StrykerJS runs it: the in-process tests of the code it mutates (the sandbox, the tools, the exit and
 * result code). Left out: the tests that start the built binary or the whole CLI (a mutant is switched on inside the
 * test process only, so a child process cannot see it; and each of those covers every sandbox line, which made a
 * full run take ~20 hours on two cores), the hostile-git test and the hostile-repository sweep of bash.test.ts (both
 * run every allowed command with real programs, ~30 s each under load; the table rows in policy.test.ts and
 * git-policy.test.ts decide the same verdicts in milliseconds).
 */
export default defineConfig({
  test: {
    include: ['test/sandbox/**/*.test.ts', 'test/tools/**/*.test.ts', 'test/output/result.test.ts', 'test/output/stream-json.test.ts'],
    exclude: ['test/sandbox/hostile-git.test.ts'],
    testNamePattern: /^(?!.*against the hostile repository)/,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
