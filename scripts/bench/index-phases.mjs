// The index's own cost, without node start-up or the symbol layer: src/locate/index/ bundled with esbuild and run in
// a fresh process per phase (as separate `spelunk locate` runs would), each timing itself. The cold build gets
// dist/build-worker.cjs as its worker thread when `npm run build` has made it (the output says `worker`).
//   node scripts/bench/index-phases.mjs REPO "QUESTION" [EDIT_REL]
// Phases: rg (today's per-question content search), cold (the index built), warm (read, checked against the tree and
// queried), edit (after appending a line to EDIT_REL: the delta written), after (the next warm question). Each prints
// wall ms and CPU ms of the search itself (node's own), the whole process's CPU with rg's (GNU time) and its max RSS.
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const RUNS = 5;
/** The cold build's worker thread, as the built binary has it (`npm run build` first); without it, one thread builds. */
const WORKER = existsSync(path.join(projectRoot, 'dist', 'build-worker.cjs')) ? path.join(projectRoot, 'dist', 'build-worker.cjs') : null;

const ENTRY = `
import { RepoIndexes } from './src/locate/index/store.ts';
import { termsOf } from './src/locate/query.ts';
import { search } from './src/locate/search.ts';
import { bundledRg } from './src/sandbox/programs.ts';
const [phase, root, question, cache, worker] = process.argv.slice(2);
const rg = await bundledRg();
const terms = termsOf(question);
const t0 = performance.now();
const c0 = process.cpuUsage();
const found = phase === 'rg' ? await search(rg, root, terms, { timeoutMs: 60_000 }) : await new RepoIndexes(cache, { worker: worker || null }).search(rg, root, terms, { timeoutMs: 60_000 });
const ms = performance.now() - t0;
const cpu = process.cpuUsage(c0);
process.stdout.write(JSON.stringify({ ms: Math.round(ms), cpuMs: Math.round((cpu.user + cpu.system) / 1000), maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024), files: found?.files.length ?? null, hits: found?.hits.size ?? null, indexed: found !== null }));
`;

async function bundle(dir) {
  const { build } = await import('esbuild');
  const out = path.join(dir, 'phases.mjs');
  await build({
    stdin: { contents: ENTRY, resolveDir: projectRoot, loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: out,
    external: ['@vscode/ripgrep', 'web-tree-sitter'],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: 'silent',
    nodePaths: [path.join(projectRoot, 'node_modules')],
  });
  return out;
}

/** One phase in a fresh process under GNU time: its own timing, and CPU (rg included) and peak RSS from time. */
function phase(script, name, root, question, cache) {
  const out = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, script, name, root, question, cache, WORKER ?? ''], {
    encoding: 'utf8',
    cwd: projectRoot,
    env: { PATH: '/usr/bin:/bin', NODE_PATH: path.join(projectRoot, 'node_modules') },
  });
  if (out.status !== 0) throw new Error(`${name}: ${out.stderr.slice(-800)}`);
  const [user, sys] = (out.stderr.trim().split('\n').at(-1) ?? '').split(' ').map(Number);
  return { ...JSON.parse(out.stdout), processCpuMs: Math.round((user + sys) * 1000) };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [repo, question, editRel] = process.argv.slice(2);
  const root = path.resolve(repo);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spelunk-index-phases-'));
  try {
    const script = await bundle(dir);
    const cache = path.join(dir, 'cache');
    const rg = Array.from({ length: 3 }, () => phase(script, 'rg', root, question, cache));
    const cold = phase(script, 'index', root, question, cache);
    const warm = Array.from({ length: RUNS }, () => phase(script, 'index', root, question, cache));
    let edit = null;
    let after = null;
    if (editRel) {
      appendFileSync(path.join(root, editRel), '\n// edited by the index benchmark\n');
      edit = phase(script, 'index', root, question, cache);
      after = phase(script, 'index', root, question, cache);
    }
    const summary = (runs) => ({
      medianMs: median(runs.map((r) => r.ms)),
      medianCpuMs: median(runs.map((r) => r.cpuMs)),
      medianProcessCpuMs: median(runs.map((r) => r.processCpuMs)),
      ms: runs.map((r) => r.ms),
      maxRssMiB: Math.max(...runs.map((r) => r.maxRssMiB)),
    });
    process.stdout.write(
      `${JSON.stringify({ repo: root, question, files: cold.files, indexed: cold.indexed, worker: WORKER !== null, rg: summary(rg), cold, warm: summary(warm), edit, after })}\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
