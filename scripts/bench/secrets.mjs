// Secret redaction cost (issue 36): every tool result passes through src/secrets/redactor.ts before the model sees it.
// Measured over a real repository's outputs (this project's own tree and history): read_file windows of every source
// file, `rg -n` searches and `git log -p` pages, each redacted as the tool round does; p50 and p99 per result, and the
// first result (which loads secretlint). Start-up: the scanner chunk's load in a fresh process, against `node -e 0`.
// Runs alone with `node scripts/bench/secrets.mjs` (after npm run build) or as a section of `npm run bench`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/** read_file's window (lines) and cap (bytes), and the bash tool's output cap, as the tools apply them. */
const WINDOW_LINES = 2000;
const RESULT_BYTES = 50 * 1024;
const SEARCHES = ['function', 'import', 'const', 'return', 'export', 'await', 'TODO', 'error', 'test', 'path'];
const LOG_PAGES = 30;

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

/** The tool results a session over `repo` could produce: [name, input, content]. */
function toolOutputs(repo, rgPath) {
  const outputs = [];
  const files = spawnSync(rgPath, ['--files'], { cwd: repo, encoding: 'utf8', maxBuffer: 64 << 20 }).stdout.split('\n').filter(Boolean).sort();
  for (const rel of files) {
    let text;
    try {
      text = readFileSync(path.join(repo, rel), 'utf8');
    } catch {
      continue;
    }
    if (text.includes('\0')) continue;
    const numbered = text.split('\n').slice(0, WINDOW_LINES).map((l, i) => `${i + 1}\t${l}`).join('\n');
    outputs.push(['read_file', { path: rel }, cap(numbered)]);
  }
  for (const term of SEARCHES) {
    const out = spawnSync(rgPath, ['-n', term], { cwd: repo, encoding: 'utf8', maxBuffer: 64 << 20 }).stdout;
    outputs.push(['bash', { command: `rg -n ${term}` }, cap(out)]);
  }
  for (let i = 0; i < LOG_PAGES; i++) {
    const out = spawnSync('git', ['log', '-p', `--skip=${i}`, '-n', '1'], { cwd: repo, encoding: 'utf8', maxBuffer: 64 << 20 }).stdout;
    if (out) outputs.push(['git', { command: `log -p --skip=${i} -n 1` }, cap(out)]);
  }
  return outputs;
}

function cap(text) {
  const bytes = Buffer.from(text);
  return bytes.length <= RESULT_BYTES ? text : bytes.subarray(0, RESULT_BYTES).toString('utf8');
}

/** p50/p99 ms per tool result over `repo`'s outputs, the first (cold) result, and the scanner chunk's load time. */
export async function measureSecrets({ projectRoot, tmp, repo, rgPath, runs = 3 }) {
  const outfile = path.join(tmp, 'secrets-bench.mjs');
  await build({ entryPoints: [path.join(projectRoot, 'src', 'secrets', 'redactor.ts')], outfile, bundle: true, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning',
    // secretlint's `debug` requires node:tty at run time: the ES module bundle gets a require.
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" } });
  const { Redactor } = await import(pathToFileURL(outfile).href);
  const outputs = toolOutputs(repo, rgPath);
  const redactor = new Redactor(true);
  const first = performance.now();
  await redactor.outcome(...outputs[0].slice(0, 2), { content: outputs[0][2], summary: 's', isError: false });
  const coldMs = performance.now() - first;
  const samples = [];
  let bytes = 0;
  let hits = 0;
  for (let run = 0; run < runs; run++) {
    for (const [name, input, content] of outputs) {
      const start = performance.now();
      const out = await redactor.outcome(name, input, { content, summary: 's', isError: false });
      samples.push(performance.now() - start);
      if (run === 0) {
        bytes += Buffer.byteLength(content);
        if (out.content !== content) hits++;
      }
    }
  }
  return { results: outputs.length, kib: bytes / 1024, redactedResults: hits, coldMs, p50: pct(samples, 50), p99: pct(samples, 99), max: Math.max(...samples), load: chunkLoad(projectRoot, runs) };
}

/** Median ms of `node -e "require(vendor-secrets.cjs)"` minus `node -e 0`, fresh processes, interleaved. */
function chunkLoad(projectRoot, runs) {
  const chunk = path.join(projectRoot, 'dist', 'vendor-secrets.cjs');
  const time = (args) => {
    const start = performance.now();
    spawnSync(process.execPath, args, { stdio: 'ignore' });
    return performance.now() - start;
  };
  const plain = [];
  const loaded = [];
  for (let i = 0; i < Math.max(3, runs); i++) {
    plain.push(time(['-e', '0']));
    loaded.push(time(['-e', `require(${JSON.stringify(chunk)})`]));
  }
  return { nodeMs: pct(plain, 50), withChunkMs: pct(loaded, 50), chunkMs: pct(loaded, 50) - pct(plain, 50) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const projectRoot = path.dirname(path.dirname(path.dirname(fileURLToPath(import.meta.url))));
  const { rgPath } = await import('@vscode/ripgrep');
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'spelunk-secrets-bench-'));
  try {
    const repo = process.argv[2] ?? projectRoot;
    const r = await measureSecrets({ projectRoot, tmp, repo, rgPath, runs: Number(process.env.BENCH_RUNS ?? 3) });
    console.log(`secrets: ${r.results} tool results (${r.kib.toFixed(0)} KiB) of ${repo}; ${r.redactedResults} had something redacted`);
    console.log(`  per result: p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, max ${r.max.toFixed(1)} ms; the first (loads secretlint) ${r.coldMs.toFixed(1)} ms`);
    console.log(`  scanner chunk load in a fresh process: ${r.load.chunkMs.toFixed(1)} ms (node -e 0: ${r.load.nodeMs.toFixed(1)} ms, with the chunk ${r.load.withChunkMs.toFixed(1)} ms)`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
