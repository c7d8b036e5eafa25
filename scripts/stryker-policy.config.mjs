// `npx stryker run scripts/stryker-policy.config.mjs --concurrency 1`: the files of the mutation scope that no run had
// measured, with their table tests (scripts/vitest.mutate-policy.config.ts says which). Not incremental, its own report
// file and temporary directory, so it can run beside another Stryker run without either removing the other's sandbox.
import base from './stryker.config.mjs';

export default {
  ...base,
  mutate: [
    'src/sandbox/policy/readers.ts', 'src/sandbox/policy/git-forms.ts', 'src/sandbox/policy/git-confine.ts', 'src/sandbox/policy/scripts.ts',
    'src/sandbox/policy/tree-walk.ts', 'src/tools/pipeline.ts', 'src/tools/compound.ts', 'src/schema.ts',
    'src/audit/parse-report.ts', 'src/audit/report.ts', 'src/audit/verdict.ts', 'src/sandbox/git-metadata.ts', 'src/sandbox/git-includes.ts',
    'src/sandbox/safe-write.ts', 'src/sandbox/slots.ts',
  ],
  vitest: { configFile: 'scripts/vitest.mutate-policy.config.ts' },
  jsonReporter: { fileName: '.stryker/mutation-policy.json' },
  tempDirName: '.stryker/tmp-policy',
  // A mutant that loops the lexer or a filter is a timeout (killed): 8 s, not 20, when the tests take milliseconds.
  timeoutMS: 8_000,
  incremental: false,
};
