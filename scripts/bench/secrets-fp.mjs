// False positives of the secret redaction (issue 36): every text file at HEAD of the given git repositories (bare
// snapshots are fine: blobs are read with `git cat-file --batch`), redacted as read_file's output would be. Prints, per
// repository, the files and lines that would be redacted, by kind, and a sample; and checks the gate (src/secrets/
// gate.ts): secretlint run on every file the gate lets pass without a scan must find nothing there.
//   node scripts/bench/secrets-fp.mjs /path/to/babel.git /path/to/deno.git /path/to/express.git
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const MAX_FILE_BYTES = 1024 * 1024;
const SAMPLE = Number(process.env.FP_SAMPLE ?? 12);

const projectRoot = path.dirname(path.dirname(path.dirname(fileURLToPath(import.meta.url))));
const tmp = mkdtempSync(path.join(os.tmpdir(), 'spelunk-secrets-fp-'));
try {
  const outfile = path.join(tmp, 'fp.mjs');
  await build({
    stdin: { contents: "export { Redactor } from './src/secrets/redactor.ts'; export { scanText } from './src/secrets/scan.ts'; export { mayHoldSecret } from './src/secrets/gate.ts';", resolveDir: projectRoot, loader: 'ts' },
    outfile, bundle: true, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  const { Redactor, scanText, mayHoldSecret } = await import(pathToFileURL(outfile).href);
  for (const gitDir of process.argv.slice(2)) await measure(gitDir, { Redactor, scanText, mayHoldSecret });
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

async function measure(gitDir, lib) {
  const started = performance.now();
  const listing = spawnSync('git', ['--git-dir', gitDir, 'ls-tree', '-r', '-z', '--long', 'HEAD'], { encoding: 'utf8', maxBuffer: 256 << 20 }).stdout;
  const entries = listing.split('\0').filter(Boolean).map((line) => {
    const [meta, file] = line.split('\t');
    const [mode, type, oid, size] = meta.split(/\s+/);
    return { mode, type, oid, size: Number(size), file };
  }).filter((e) => e.type === 'blob' && e.mode !== '120000' && e.mode !== '160000' && e.size <= MAX_FILE_BYTES);
  const redactor = new lib.Redactor(true);
  const stats = { files: 0, binary: 0, scanned: 0, gated: 0, filesHit: 0, lines: new Set(), kinds: {}, sample: [], gateMisses: [] };
  for await (const { file, bytes } of blobs(gitDir, entries)) {
    if (bytes.subarray(0, 8192).includes(0)) {
      stats.binary++;
      continue;
    }
    stats.files++;
    const text = bytes.toString('utf8');
    const gate = lib.mayHoldSecret(text);
    if (gate) stats.scanned++;
    else {
      stats.gated++;
      const missed = await lib.scanText(text);
      if (missed.length > 0) stats.gateMisses.push(`${file}: ${missed.map((m) => m.kind).join(', ')}`);
    }
    const { hits } = await redactor.redact(text, { kind: 'text', path: file });
    if (hits.length === 0) continue;
    stats.filesHit++;
    const lines = text.split('\n');
    for (const hit of hits) {
      stats.kinds[hit.kind] = (stats.kinds[hit.kind] ?? 0) + 1;
      for (let l = hit.line; l <= (hit.endLine ?? hit.line); l++) stats.lines.add(`${file}:${l}`);
      if (stats.sample.length < SAMPLE) stats.sample.push(`${hit.place}  ${hit.kind}  | ${lines[hit.line - 1].trim().slice(0, 110)}`);
    }
  }
  const s = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`\n${gitDir}: ${stats.files} text files (${stats.binary} binary skipped) in ${s} s; ${stats.scanned} passed the gate to secretlint, ${stats.gated} did not`);
  console.log(`  redacted: ${stats.lines.size} lines in ${stats.filesHit} files; by kind ${JSON.stringify(stats.kinds)}`);
  console.log(`  gate misses (secretlint finds something in a file the gate passed over): ${stats.gateMisses.length}${stats.gateMisses.length ? ` ${stats.gateMisses.slice(0, 5).join('; ')}` : ''}`);
  for (const line of stats.sample) console.log(`  sample: ${line}`);
}

/** Blob contents in listing order through one `git cat-file --batch`. */
async function* blobs(gitDir, entries) {
  const child = spawn('git', ['--git-dir', gitDir, 'cat-file', '--batch'], { stdio: ['pipe', 'pipe', 'ignore'] });
  const writer = (async () => {
    for (const e of entries) if (!child.stdin.write(`${e.oid}\n`)) await new Promise((r) => child.stdin.once('drain', r));
    child.stdin.end();
  })();
  let buffer = Buffer.alloc(0);
  let index = 0;
  for await (const chunk of child.stdout) {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      const nl = buffer.indexOf(10);
      if (nl < 0) break;
      const size = Number(buffer.subarray(0, nl).toString().split(' ')[2]);
      if (buffer.length < nl + 1 + size + 1) break;
      const bytes = buffer.subarray(nl + 1, nl + 1 + size);
      buffer = buffer.subarray(nl + 1 + size + 1);
      yield { file: entries[index++].file, bytes };
    }
  }
  await writer;
}
