// `npx stryker run scripts/stryker-map.config.mjs --mutate src/preamble/map.ts --concurrency 1`: preamble/map.ts with
// the preamble's own tests only (scripts/vitest.mutate-map.config.ts says why). Not incremental, its own report file,
// so it never mixes with the incremental runs of `npm run mutate`.
import base from './stryker.config.mjs';

export default {
  ...base,
  vitest: { configFile: 'scripts/vitest.mutate-map.config.ts' },
  jsonReporter: { fileName: '.stryker/mutation-map.json' },
  incremental: false,
};
