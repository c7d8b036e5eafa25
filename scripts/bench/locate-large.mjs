// `spelunk locate` on the 100k-file synthetic repository: the symbol layer parses only the best candidates, so the
// cost stays bounded whatever the repository's size. Measured twice: with an empty symbol cache and with the one the
// first run left ($XDG_CACHE_HOME/spelunk/symbols). Peak memory is sampled from /proc while the process runs.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readCpuMs, readHwm } from './procs.mjs';

/**
 * The budget stated in docs/locate.md: one locate over 100k files with a cold cache, in CPU seconds of the node
 * process (wall time on a shared two-core machine is mostly waiting for a core) and peak resident MiB.
 */
export const LARGE_LOCATE_BUDGET = { seconds: 3, mib: 512 };
const SAMPLE_MS = 20;

/** One run: wall ms, main-thread CPU ms and peak RSS (MiB) of the node process, its exit code and the result count. */
function runLocate(dist, repo, question, env) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [dist, 'locate', '--output-format', 'json', '-C', repo, question], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let hwm = 0;
    let cpu = 0;
    const timer = setInterval(() => {
      hwm = Math.max(hwm, readHwm(child.pid) ?? 0);
      cpu = Math.max(cpu, readCpuMs(child.pid) ?? 0);
    }, SAMPLE_MS);
    let stdout = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(timer);
      const results = code === 0 ? JSON.parse(stdout).results.length : 0;
      resolve({ ms: performance.now() - started, cpuMs: cpu, mib: hwm / 1024, code, results });
    });
  });
}

/** Cold and warm runs on `repo` for a question made of the words of one of its source paths. */
export async function measureLocateLarge(dist, repo, source) {
  const words = source.replace(/\.[a-z]+$/, '').split(/[^a-z0-9]+/i).filter((w) => w.length > 2 && w !== 'src' && w !== 'packages');
  const question = `where is the ${words.slice(-3).join(' ')} code?`;
  const cache = mkdtempSync(path.join(os.tmpdir(), 'spelunk-bench-symcache-'));
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cache, XDG_CACHE_HOME: cache };
  try {
    const cold = await runLocate(dist, repo, question, env);
    const warm = await runLocate(dist, repo, question, env);
    if (cold.code !== 0 || warm.code !== 0) throw new Error(`spelunk locate exited ${cold.code}/${warm.code} on the 100k-file repository`);
    return { question, cold, warm };
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === new URL(import.meta.url).pathname) {
  const [dist, repo, source] = process.argv.slice(2);
  process.stdout.write(`${JSON.stringify(await measureLocateLarge(path.resolve(dist), repo, source))}\n`);
}
