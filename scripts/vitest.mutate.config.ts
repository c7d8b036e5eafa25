import { defineConfig } from 'vitest/config';

/**
 * The suite as StrykerJS runs it: without the tests that drive the built binary in a child process (a mutant is
 * switched on inside the test process only, so those tests cannot kill one and would only cost time), and so
 * without building dist/ first.
 */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Also the system-prompt test, which changes directory: StrykerJS runs tests in worker threads, where it cannot.
    exclude: ['test/cli/binary.test.ts', 'test/cli/code-cache.test.ts', 'test/mcp/server.test.ts', 'test/run/repl.test.ts', 'test/sandbox/hostile-git.test.ts', 'test/preamble/system-prompt.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
