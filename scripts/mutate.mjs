// `npm run mutate`: every area of scripts/mutation-areas.json (StrykerJS on its files with only the tests that cover
// them, one area at a time, one core), then scripts/mutation-gate.mjs over the reports. `npm run mutate -- budget audit`
// runs those areas, then the gate. Arguments that start with "-" keep the older form: `npm run mutate -- --mutate
// src/sandbox/exec.ts --concurrency 1` runs scripts/stryker.config.mjs (the incremental scope) with them, no gate.
// Not part of `npm test`; CI runs it on a schedule (docs/development.md).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const stryker = path.join(root, 'node_modules', '.bin', 'stryker');
const args = process.argv.slice(2);

function run(command, argv, env = {}) {
  const done = spawnSync(command, argv, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  return done.status ?? 1;
}

function main() {
  if (args[0]?.startsWith('-')) return run(stryker, ['run', 'scripts/stryker.config.mjs', ...args]);
  const areas = JSON.parse(readFileSync(path.join(root, 'scripts', 'mutation-areas.json'), 'utf8'));
  const unknown = args.filter((a) => !Object.hasOwn(areas, a));
  if (unknown.length > 0) {
    console.error(`npm run mutate: no area ${unknown.join(', ')}; the areas are ${Object.keys(areas).join(', ')} (scripts/mutation-areas.json)`);
    return 2;
  }
  for (const area of args.length > 0 ? args : Object.keys(areas)) {
    console.log(`mutate: area ${area} (${areas[area].mutate.join(', ')})`);
    const status = run(stryker, ['run', 'scripts/stryker-area.config.mjs'], { MUTATE_AREA: area });
    if (status !== 0) {
      console.error(`mutate: the Stryker run of area ${area} failed (exit ${status}); its report is not up to date`);
      return status;
    }
  }
  return run(process.execPath, [path.join(root, 'scripts', 'mutation-gate.mjs')]);
}

process.exitCode = main();
