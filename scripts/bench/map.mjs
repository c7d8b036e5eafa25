// The repository map's figures (issue 15): directory and workspace coverage, tokens, and the time to build it against
// the listing it replaced, measured in-process on bundles of src/preamble. Real checkouts come from
// SPELUNK_BENCH_REPOS (paths separated by ':'); without it they are skipped, and the bench says so.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/** The last commit before the map: its listing is the baseline for the build-time ratio. */
export const BASELINE_COMMIT = '0035fa6';
/** Targets from the issue: tokens, depth-1 and depth-2 coverage, member coverage, time against the old listing. */
export const MAP_TARGETS = { tokens: 2_000, depth1: 1, depth2: 0.9, members: 1, time: 1.2 };

const BANNER = "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);";

/** Bundles `entry` (TypeScript) into one ESM file under `outDir` and imports it. */
async function bundle(entry, outDir, name) {
  const outfile = path.join(outDir, `${name}.mjs`);
  await build({ entryPoints: [entry], outfile, bundle: true, format: 'esm', platform: 'node', target: 'node20', banner: { js: BANNER }, logLevel: 'error' });
  return import(pathToFileURL(outfile).href);
}

/** The old listing, from git history; null (with the reason logged) when the commit is not available. */
async function baselineListing(projectRoot, tmp, log) {
  const dir = path.join(tmp, 'baseline');
  mkdirSync(dir, { recursive: true });
  const archive = spawnSync('git', ['-C', projectRoot, 'archive', '--format=tar', BASELINE_COMMIT, 'src'], { maxBuffer: 64 * 1024 * 1024 });
  if (archive.status !== 0) {
    log(`  baseline listing skipped: git archive ${BASELINE_COMMIT} failed (${String(archive.stderr).trim().split('\n')[0] || archive.error?.message})`);
    return null;
  }
  const untar = spawnSync('tar', ['-x', '-C', dir], { input: archive.stdout });
  if (untar.status !== 0) {
    log('  baseline listing skipped: tar failed');
    return null;
  }
  return bundle(path.join(dir, 'src', 'preamble', 'listing.ts'), tmp, 'listing-baseline');
}

/** Root instructions text (AGENTS.md, else CLAUDE.md), for the mention ranking, as a session would pass it. */
function instructionsOf(root) {
  for (const name of ['AGENTS.md', 'CLAUDE.md']) {
    const file = path.join(root, name);
    if (existsSync(file)) return [readFileSync(file, 'utf8').slice(0, 32 * 1024)];
  }
  return [];
}

/** Real checkouts from SPELUNK_BENCH_REPOS; each must be a directory. */
export function benchRepos(env, log) {
  const raw = env.SPELUNK_BENCH_REPOS?.trim();
  if (!raw) {
    log('  real checkouts skipped: SPELUNK_BENCH_REPOS is not set (paths separated by ":", e.g. clones of babel, deno, tldr at the pinned commits)');
    return [];
  }
  return raw.split(':').filter((p) => p !== '').flatMap((p) => {
    if (existsSync(p)) return [{ name: path.basename(p), root: path.resolve(p) }];
    log(`  ${p}: no such directory, skipped`);
    return [];
  });
}

/**
 * Coverage and tokens of the map on each repository, and the median build time of the map against the old listing on
 * `timed` (interleaved runs). Returns table rows in the shape bench.mjs prints.
 */
export async function measureMap({ projectRoot, tmp, rgPath, repos, timed, runs, log, row }) {
  const current = await bundle(path.join(projectRoot, 'src', 'preamble', 'listing.ts'), tmp, 'listing-current');
  const rows = [];
  for (const { name, root } of repos) {
    const listing = await current.buildListing(root, { depth: 3, rgPath, instructions: instructionsOf(root) });
    const m = listing.map;
    if (!m) throw new Error(`${name}: ${listing.text}`);
    const share = (c) => (c.total === 0 ? 1 : c.named / c.total);
    log(`  ${name}: ${m.tokens} tokens; depth 1 ${m.depth1.named}/${m.depth1.total}, depth 2 ${m.depth2.named}/${m.depth2.total}, members ${m.members.named}/${m.members.total}; ${m.dirsNamed} named, ${m.dirsCollapsed} in groups`);
    rows.push(
      row(`map tokens: ${name}`, `${listing.text.length.toLocaleString('en')} chars / 4`, m.tokens, '≤', MAP_TARGETS.tokens, 'int'),
      row(`map depth-1 coverage: ${name}`, `${m.depth1.named} of ${m.depth1.total} directories named`, share(m.depth1), '≥', MAP_TARGETS.depth1),
      row(`map depth-2 coverage: ${name}`, `${m.depth2.named} of ${m.depth2.total} (groups count when their members are named)`, share(m.depth2), '≥', MAP_TARGETS.depth2),
    );
    if (m.members.total > 0) {
      rows.push(row(`workspace coverage: ${name}`, `${m.members.named} of ${m.members.total} members named`, share(m.members), '≥', MAP_TARGETS.members));
    }
  }
  const baseline = await baselineListing(projectRoot, tmp, log);
  if (baseline === null) return rows;
  const times = { old: [], now: [], warm: [] };
  const cpu = { old: [], now: [], warm: [] };
  // What a CLI run reads from the user's cache (preamble/deep-hint.ts): the directories the previous build opened.
  const hint = { guess: null, chosen: (rels) => void (hint.guess = rels) };
  // Wall time is the target; this process's CPU time (ripgrep's is the same for both) is steadier on a busy machine.
  const clock = async (fn, into) => {
    const start = performance.now();
    const used = process.cpuUsage();
    await fn();
    const { user, system } = process.cpuUsage(used);
    into.push((user + system) / 1000);
    return performance.now() - start;
  };
  const instructions = instructionsOf(timed.root);
  // One warm-up of each, then interleaved runs (the page cache and the machine's load affect both alike); three times
  // the bench's count, as one build is ~0.1 s and its spread on a shared machine is wide.
  for (let i = -1; i < 3 * runs; i++) {
    const old = await clock(() => baseline.buildListing(timed.root, { depth: 3, maxEntries: 200, rgPath }), cpu.old);
    const now = await clock(() => current.buildListing(timed.root, { depth: 3, rgPath, instructions }), cpu.now);
    const warm = await clock(() => current.buildListing(timed.root, { depth: 3, rgPath, instructions, deep: hint }), cpu.warm);
    if (i < 0) {
      for (const key of Object.keys(cpu)) cpu[key].pop();
      continue;
    }
    times.old.push(old);
    times.now.push(now);
    times.warm.push(warm);
  }
  const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
  log(`  build time on ${timed.name} (ms): map ${times.now.map(Math.round).join(' ')}; with the hint ${times.warm.map(Math.round).join(' ')}; old listing ${times.old.map(Math.round).join(' ')}`);
  const [now, warm, old] = [median(times.now), median(times.warm), median(times.old)];
  log(`  CPU time of this process (ms, medians): map ${median(cpu.now).toFixed(1)}, with the hint ${median(cpu.warm).toFixed(1)}, old listing ${median(cpu.old).toFixed(1)}: ${(median(cpu.now) / median(cpu.old)).toFixed(3)}×, ${(median(cpu.warm) / median(cpu.old)).toFixed(3)}×`);
  const ratios = (key) => times[key].map((t, i) => t / times.old[i]);
  const spread = (values) => `per-run ratio ${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`;
  rows.push(
    row(`map build time: ${timed.name}, first run`, `${Math.round(now)} ms vs ${Math.round(old)} ms for the listing at ${BASELINE_COMMIT}; ${spread(ratios('now'))}`, now / old, '≤', MAP_TARGETS.time),
    row(`map build time: ${timed.name}, deeper walk from the last run's hint`, `${Math.round(warm)} ms vs ${Math.round(old)} ms; ${spread(ratios('warm'))}`, warm / old, '≤', MAP_TARGETS.time),
  );
  return rows;
}
