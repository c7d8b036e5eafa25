// `npx stryker run scripts/stryker-citations.config.mjs --mutate src/citations/verify.ts,src/citations/extract.ts
// --concurrency 2`: the citation code with only the test files that import it (scripts/vitest.mutate-citations.config.ts).
// Not incremental, its own report file, so it never mixes with the incremental runs of `npm run mutate`.
import base from './stryker.config.mjs';

export default {
  ...base,
  vitest: { configFile: 'scripts/vitest.mutate-citations.config.ts' },
  jsonReporter: { fileName: '.stryker/mutation-citations.json' },
  incremental: false,
};
