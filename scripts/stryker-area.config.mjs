// `MUTATE_AREA=budget nice -n 15 npx stryker run scripts/stryker-area.config.mjs --concurrency 1`: one area of
// scripts/mutation-areas.json (its files, with only the tests that cover them: scripts/vitest.mutate-area.config.ts
// reads the same entry), so a run takes minutes. Not incremental; its own report (.stryker/mutation-<area>.json, read by
// scripts/mutation-gate.mjs) and temporary directory. `npm run mutate` runs every area, then the gate.
import { readFileSync } from 'node:fs';
import base from './stryker.config.mjs';

const areas = JSON.parse(readFileSync(new URL('./mutation-areas.json', import.meta.url), 'utf8'));
const name = process.env.MUTATE_AREA ?? '';
const area = areas[name];
if (!area) throw new Error(`set MUTATE_AREA to one of ${Object.keys(areas).join(', ')} (scripts/mutation-areas.json)`);

export default {
  ...base,
  mutate: area.mutate,
  vitest: { configFile: 'scripts/vitest.mutate-area.config.ts' },
  jsonReporter: { fileName: `.stryker/mutation-${name}.json` },
  tempDirName: `.stryker/tmp-${name}`,
  timeoutMS: 10_000,
  concurrency: 1,
  incremental: false,
};
