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
  // The first text that needs the scanner pays for loading it (a token-like run passes the gate, src/secrets/gate.ts).
  const first = performance.now();
  await redactor.redact('build id a1b2c3d4e5f6a7b8c9d0', { kind: 'text', path: 'x' });
  const coldMs = performance.now() - first;
  const samples = [];
  // CPU time too: on a loaded machine the wall time of a 1 ms task is mostly waiting for a core.
  const cpu = [];
  let bytes = 0;
  let hits = 0;
  for (let run = 0; run < runs; run++) {
    for (const [name, input, content] of outputs) {
      const start = performance.now();
      const used = process.cpuUsage();
      const out = await redactor.outcome(name, input, { content, summary: 's', isError: false });
      samples.push(performance.now() - start);
      const spent = process.cpuUsage(used);
      cpu.push((spent.user + spent.system) / 1000);
      if (run === 0) {
        bytes += Buffer.byteLength(content);
        if (out.content !== content) hits++;
        if (process.env.SHOW && (out.content !== content || samples.at(-1) > 20)) console.log(`  ${samples.at(-1).toFixed(1)} ms ${name} ${JSON.stringify(input)} ${out.summary}`);
      }
    }
  }
  return { results: outputs.length, kib: bytes / 1024, redactedResults: hits, coldMs, p50: pct(samples, 50), p99: pct(samples, 99), max: Math.max(...samples), cpuP50: pct(cpu, 50), cpuP99: pct(cpu, 99), load: chunkLoad(projectRoot, runs) };
}

/** The scanner chunk's require in a fresh process (median wall and CPU ms of the require alone). */
function chunkLoad(projectRoot, runs) {
  const chunk = path.join(projectRoot, 'dist', 'vendor-secrets.cjs');
  const script = `const w = performance.now(), c = process.cpuUsage(); require(${JSON.stringify(chunk)}); const u = process.cpuUsage(c); console.log(performance.now() - w, (u.user + u.system) / 1000);`;
  const wall = [];
  const cpu = [];
  for (let i = 0; i < Math.max(5, runs); i++) {
    const [w, c] = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' }).stdout.trim().split(' ').map(Number);
    wall.push(w);
    cpu.push(c);
  }
  return { wallMs: pct(wall, 50), cpuMs: pct(cpu, 50) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const projectRoot = path.dirname(path.dirname(path.dirname(fileURLToPath(import.meta.url))));
  const { rgPath } = await import('@vscode/ripgrep');
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'spelunk-secrets-bench-'));
  try {
    const repo = process.argv[2] ?? projectRoot;
    const r = await measureSecrets({ projectRoot, tmp, repo, rgPath, runs: Number(process.env.BENCH_RUNS ?? 3) });
    console.log(`secrets: ${r.results} tool results (${r.kib.toFixed(0)} KiB) of ${repo}; ${r.redactedResults} had something redacted`);
    console.log(`  per result: p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, max ${r.max.toFixed(1)} ms wall; CPU p50 ${r.cpuP50.toFixed(2)} ms, p99 ${r.cpuP99.toFixed(2)} ms; the first (loads secretlint) ${r.coldMs.toFixed(1)} ms`);
    console.log(`  scanner chunk (dist/vendor-secrets.cjs) required in a fresh process: ${r.load.wallMs.toFixed(1)} ms wall, ${r.load.cpuMs.toFixed(1)} ms CPU (median)`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
