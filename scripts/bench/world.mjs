// Issue 32's costs: one call in each program's own world (binary, libraries, loader, data) against the kernel layer
// with /usr whole (before issue 32), the tables (prlimit and setpriv) and a plain spawn; and the cost of resolving one
// program's world (the loader's listing, once per program per process). `node scripts/bench/world.mjs [RUNS]` runs it
// alone (on a small temp repository); `npm run bench` runs it on the large one.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSandbox, median, timed } from './sandbox.mjs';

/** Per-call cost of each way of starting `wc -l FILE` in `repo`, interleaved; null where bwrap cannot run. */
export async function measureWorld(projectRoot, tmp, repo, runs, log) {
  const sb = await loadSandbox(projectRoot, tmp);
  const choice = await sb.chooseSandbox('required');
  if (!choice.ok) {
    log(`  own world skipped: ${choice.error}`);
    return null;
  }
  const own = choice.sandbox;
  const whole = { ...own, world: 'system' };
  const wc = (await sb.resolvePrograms()).get('wc');
  const file = 'README.md';
  const call = (opts) => timed(() => sb.execCapped(wc, ['-l', file], { cwd: repo, timeoutMs: 30_000, ...opts }));
  const times = { plain: [], prlimit: [], tables: [], whole: [], own: [] };
  for (let i = 0; i < runs + 1; i++) {
    const plain = await call({ sandbox: sb.TABLES_ONLY, limiter: null, parentDeath: null });
    const prlimit = await call({ sandbox: sb.TABLES_ONLY, parentDeath: null });
    const tables = await call({ sandbox: sb.TABLES_ONLY });
    const wholeMs = await call({ sandbox: whole });
    const ownMs = await call({ sandbox: own });
    if (i === 0) continue; // warm-up (the first own-world call also resolves wc's world)
    times.plain.push(plain);
    times.prlimit.push(prlimit);
    times.tables.push(tables);
    times.whole.push(wholeMs);
    times.own.push(ownMs);
  }
  for (const [name, xs] of Object.entries(times)) log(`  ${name} (ms): ${xs.map((x) => x.toFixed(1)).join(' ')}`);

  // Resolving a world: each copy is a new path, so nothing is cached; git (3 libraries) and file (5, and `--version`).
  const resolve = { git: [], file: [] };
  for (const name of Object.keys(resolve)) {
    for (let i = 0; i < runs; i++) {
      const copy = path.join(tmp, `world-${name}-${i}`, name);
      mkdirSync(path.dirname(copy), { recursive: true });
      copyFileSync(`/usr/bin/${name}`, copy);
      const listing = (loader, args) => sb.execCapped(loader, args, { cwd: '/', timeoutMs: 10_000, sandbox: sb.TABLES_ONLY });
      let world;
      resolve[name].push(await timed(async () => (world = await sb.programWorld(copy, listing))));
      if (!world.ok) throw new Error(`${name}: ${world.error}`);
    }
    log(`  resolving ${name}'s world (ms): ${resolve[name].map((x) => x.toFixed(1)).join(' ')}`);
  }
  return {
    plainMs: median(times.plain),
    prlimitMs: median(times.prlimit),
    tablesMs: median(times.tables),
    wholeMs: median(times.whole),
    ownMs: median(times.own),
    resolveGitMs: median(resolve.git),
    resolveFileMs: median(resolve.file),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const runs = Number(process.argv[2] ?? 10);
  const projectRoot = path.dirname(path.dirname(path.dirname(fileURLToPath(import.meta.url))));
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'spelunk-bench-world-'));
  try {
    const repo = path.join(tmp, 'repo');
    mkdirSync(repo);
    writeFileSync(path.join(repo, 'README.md'), 'one\ntwo\n');
    const log = (line) => process.stderr.write(`${line}\n`);
    const r = await measureWorld(projectRoot, tmp, repo, runs, log);
    if (r !== null) {
      log(`wc -l per call, median of ${runs}: plain ${r.plainMs.toFixed(2)} ms, prlimit ${r.prlimitMs.toFixed(2)} ms, tables (setpriv + prlimit) ${r.tablesMs.toFixed(2)} ms, ` +
        `kernel with /usr whole ${r.wholeMs.toFixed(2)} ms, kernel in its own world ${r.ownMs.toFixed(2)} ms`);
      log(`own world − plain spawn: ${(r.ownMs - r.plainMs).toFixed(2)} ms (target ≤ 5); own world − /usr whole: ${(r.ownMs - r.wholeMs).toFixed(2)} ms`);
      log(`resolving a world once: git ${r.resolveGitMs.toFixed(2)} ms, file ${r.resolveFileMs.toFixed(2)} ms`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
