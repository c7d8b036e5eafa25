import { defineConfig } from 'vitest/config';
import { snapshotUpdate } from '../test/support/snapshot-policy.js';

/**
 * The suite as StrykerJS runs it: the in-process tests of the code it mutates (the sandbox, the tools, the exit and
 * result code). Left out: the tests that start the built binary or the whole CLI (a mutant is switched on inside the
 * test process only, so a child process cannot see it; and each of those covers every sandbox line, which made a
 * full run take ~20 hours on two cores), the hostile-git test and the hostile-repository sweep of bash.test.ts (both
 * run every allowed command with real programs, ~30 s each under load; the table rows in policy.test.ts and
 * git-policy.test.ts decide the same verdicts in milliseconds). Saved sessions are tested through `runCli`, which
 * calls `main` in this process (test/run/saved*.test.ts, stored-state.test.ts), and through runQuestion
 * (saved-head.test.ts): in, since no HEAD read of theirs can give up under load (the save records the read-only
 * proof's HEAD, and the in-process runs give every HEAD read 15 s through main's options, config.headTimeoutMs);
 * they cover every file `main` reaches, so they join the runs of those files. Of test/mcp/, only the in-process tests of
 * the research tool run (research*.test.ts: a Researcher against the local Messages API and a temporary repository);
 * the others spawn the built binary (`spelunk mcp`), where no mutant can be seen.
 */
export default defineConfig({
  test: {
    include: [
      'test/sandbox/**/*.test.ts', 'test/tools/**/*.test.ts', 'test/output/result.test.ts', 'test/output/stream-json.test.ts',
      'test/citations/**/*.test.ts', 'test/run/cited.test.ts', 'test/output/sarif.test.ts', 'test/output/sarif-fields.test.ts', 'test/output/sarif-github.test.ts',
      'test/agent/conversation.test.ts', 'test/agent/conversation-requests.test.ts', 'test/agent/loop.test.ts', 'test/agent/loop-events.test.ts', 'test/agent/last-request.test.ts',
      'test/preamble/map.test.ts', 'test/preamble/map-budget.test.ts', 'test/preamble/map-core.test.ts',
      'test/run/run-question*.test.ts', 'test/stop-words.test.ts', 'test/mcp/research.test.ts', 'test/mcp/research-limits.test.ts',
      'test/run/saved*.test.ts', 'test/run/stored-state.test.ts', 'test/run/resume-notice.test.ts',
    ],
    exclude: ['test/sandbox/hostile-git.test.ts'],
    testNamePattern: /^(?!.*against the hostile repository)/,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    update: snapshotUpdate(process.env),
  },
});
