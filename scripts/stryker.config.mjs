// `npm run mutate -- --mutate <files>` (a first argument starting with "-"; scripts/mutate.mjs): StrykerJS mutation testing of the sandbox, the tools, the exit/result code, citations, SARIF, the
// map, the agent loop and conversation, saved sessions and the MCP research tool, incremental (only
// mutants in changed code or covered by changed tests are re-run). Not part of `npm test`: the files whose tests start
// real programs (sandbox/exec.ts, readonly.ts, git.ts, tools/bash.ts, git.ts) take 6-30 minutes each on two cores, so
// run them one at a time (`npm run mutate -- --mutate src/sandbox/exec.ts`; several files comma-separated, since a
// second --mutate replaces the first) and each finished run is kept in the incremental file.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'scripts/vitest.mutate.config.ts' },
  mutate: [
    'src/sandbox/**/*.ts', 'src/tools/**/*.ts', 'src/exit-codes.ts', 'src/output/result.ts',
    'src/audit/report.ts', 'src/audit/parse-report.ts', 'src/audit/verdict.ts',
    // The answer's evidence and what a run leaves behind: citations, SARIF, the map, the conversation and its loop,
    // saved sessions, the run service every front end calls, and the MCP research tool.
    'src/citations/**/*.ts', 'src/agent/loop.ts', 'src/agent/conversation.ts', 'src/output/sarif.ts', 'src/run/saved.ts',
    'src/run/run-question.ts', 'src/preamble/map.ts', 'src/mcp/research.ts',
    '!src/sandbox/policy/tables.ts', '!src/sandbox/policy/git-tables.ts',
  ],
  // Module-level constants (the policy tables, git's too) are data: covered by the table walk in policy.test.ts, not by mutants.
  ignoreStatic: true,
  coverageAnalysis: 'perTest',
  incremental: true,
  incrementalFile: '.stryker/incremental.json',
  tempDirName: '.stryker/tmp',
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: '.stryker/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
  concurrency: 2,
  timeoutMS: 20_000,
  cleanTempDir: 'always',
};
