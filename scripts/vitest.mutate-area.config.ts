import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import base from './vitest.mutate.config.js';

/**
 * The tests of one mutation area (scripts/stryker-area.config.mjs): the `tests` of the MUTATE_AREA entry of
 * scripts/mutation-areas.json, the in-process test files that import the area's code. Tests that spawn the built
 * binary cannot see a mutant and cost a dry run, so rows under a "built binary" title are skipped (as the base skips the
 * hostile-repository sweep).
 */
const areas = JSON.parse(readFileSync(new URL('./mutation-areas.json', import.meta.url), 'utf8')) as Record<string, { tests: string[] }>;
const area = areas[process.env.MUTATE_AREA ?? ''];
if (!area) throw new Error(`set MUTATE_AREA to one of ${Object.keys(areas).join(', ')} (scripts/mutation-areas.json)`);

export default defineConfig({ test: { ...base.test, include: area.tests, exclude: [], testNamePattern: /^(?!.*(against the hostile repository|the built binary))/ } });
