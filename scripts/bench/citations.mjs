// Citation verification cost (issue 9): 50 distinct citations checked against the 100k-file repository, with the
// verifier bundled from src/ on the fly (esbuild), so the current source is what is measured.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/** Citations in the measured answer. */
const CITATIONS = 50;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Median ms of verifyCitations over `runs` (after one warm-up), and how the 50 citations came out. */
export async function measureCitations(projectRoot, tmp, repo, rgPath, runs) {
  const outfile = path.join(tmp, 'citations-bench.mjs');
  await build({ entryPoints: [path.join(projectRoot, 'src', 'citations', 'verify.ts')], outfile, bundle: true, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' });
  const { verifyCitations } = await import(pathToFileURL(outfile).href);
  const listed = spawnSync(rgPath, ['--files', '-g', '*.ts'], { cwd: repo, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).stdout.split('\n').filter(Boolean).sort();
  if (listed.length < CITATIONS) throw new Error(`the large repository has only ${listed.length} .ts files`);
  const step = Math.floor(listed.length / CITATIONS);
  // The shapes answers use: plain, backticked, ranges, a quote, a link; one file per citation, spread over the repo.
  const forms = [(p) => `${p}:1`, (p) => `\`${p}:1-2\``, (p) => `[x](${p}#L1)`, (p) => `**${p}:2**`, (p) => `(${p}:1)`];
  const answer = Array.from({ length: CITATIONS }, (_, i) => `- ${forms[i % forms.length](listed[i * step])} does a thing.`).join('\n');
  const samples = [];
  let result = await verifyCitations(repo, answer);
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    result = await verifyCitations(repo, answer);
    samples.push(performance.now() - start);
  }
  const statuses = {};
  for (const c of result) statuses[c.status] = (statuses[c.status] ?? 0) + 1;
  return { ms: median(samples), samples, count: result.length, statuses };
}
