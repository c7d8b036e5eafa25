// `node scripts/mutation-gate.mjs`: fails when a file of scripts/mutation-thresholds.json scored below its threshold in
// the Stryker reports under .stryker/ (mutation*.json), or is in none of them. Score as docs/development.md counts it:
// killed and timed out over killed, timed out, survived and uncovered (ignored and compile errors are not counted).
// A file in several reports is judged by the newest. One line per failure; exit 1 if any.
// MUTATION_REPORTS (a directory) and MUTATION_THRESHOLDS (a file) point it elsewhere (the gate's own test does).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const reportsDir = process.env.MUTATION_REPORTS ?? path.join(here, '..', '.stryker');
const thresholdsFile = process.env.MUTATION_THRESHOLDS ?? path.join(here, 'mutation-thresholds.json');

const KILLED = new Set(['Killed', 'Timeout']);
const COUNTED = new Set(['Killed', 'Timeout', 'Survived', 'NoCoverage']);

/** file → { threshold, measured, commit }: the threshold is the measured score less a margin, rounded down. */
function readTable() {
  try {
    return JSON.parse(readFileSync(thresholdsFile, 'utf8')).files;
  } catch (err) {
    console.error(`mutation gate: cannot read ${thresholdsFile} (${err.message}); it lists each file's threshold`);
    process.exit(1);
  }
}

/** file → { score, report } from the newest report naming it. */
function scores() {
  let names = [];
  try {
    names = readdirSync(reportsDir).filter((n) => /^mutation.*\.json$/.test(n));
  } catch {
    return new Map();
  }
  const reports = names.map((n) => path.join(reportsDir, n)).sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
  const out = new Map();
  for (const report of reports) {
    const files = JSON.parse(readFileSync(report, 'utf8')).files ?? {};
    for (const [file, { mutants }] of Object.entries(files)) {
      const counted = mutants.filter((m) => COUNTED.has(m.status));
      const killed = counted.filter((m) => KILLED.has(m.status)).length;
      out.set(file.split(path.sep).join('/'), { score: counted.length === 0 ? 100 : (100 * killed) / counted.length, report: path.basename(report) });
    }
  }
  return out;
}

const table = readTable();
const measured = scores();
const failures = [];
for (const [file, { threshold }] of Object.entries(table)) {
  const got = measured.get(file);
  if (!got) failures.push(`mutation gate: ${file} is in no report under ${reportsDir}; run its area (npm run mutate)`);
  else if (got.score < threshold) failures.push(`mutation gate: ${file} scored ${got.score.toFixed(2)}% (${got.report}), below its threshold ${threshold}% in ${path.basename(thresholdsFile)}`);
}
for (const line of failures) console.error(line);
if (failures.length === 0) console.log(`mutation gate: ${Object.keys(table).length} files at or above their thresholds`);
process.exitCode = failures.length === 0 ? 0 : 1;
