// `npx stryker run scripts/stryker-run.config.mjs --mutate src/run/run-question.ts --concurrency 1`: the run service
// with the tests that call it in this process (scripts/vitest.mutate-run.config.ts says which and why). Not
// incremental, its own report file, so it never mixes with the incremental runs of `npm run mutate`.
import base from './stryker.config.mjs';

export default {
  ...base,
  vitest: { configFile: 'scripts/vitest.mutate-run.config.ts' },
  jsonReporter: { fileName: '.stryker/mutation-run.json' },
  incremental: false,
};
