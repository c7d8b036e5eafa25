// `node scripts/bench/locate-eval.mjs [--role tuning|held-out|all] [--only a,b] [--runner inproc|dist] [--max N]
//   [--json FILE] [--verbose]`: `spelunk locate` on questions built from commit subjects, beside a plain BM25 measured in
// the same run on the same trees.
//
// The sets are in fixtures/locate-bench/sets.json: a repository snapshot (a git directory, e.g. the `fetch` tool's
// /work/.mirror/<owner>+<name>/repo, or `--mirrors DIR` with the same layout), a range of commits and a role. Each
// question is asked at ITS commit's parent, in a clone whose HEAD is that parent (`git clone --no-checkout --local`,
// then `git checkout` of each parent in commit order, so one clone serves the whole set): the tree and the history
// locate sees end before the change, and no answer can come from the commit itself. Gold: the commit's non-test source
// files that exist at the parent (changeQuestions' filter, scripts/locate-bench.mjs).
//
// Held-out sets are scored, never read: --verbose (one line per question) is refused for them, and only their totals
// are printed. The runner `inproc` bundles src/locate/locate.ts with esbuild and calls it in this process (cheap, for
// tuning; `--src DIR` takes DIR's src/ instead, e.g. a worktree of an earlier commit); `dist` runs the built
// dist/spelunk.js once per question, as a user runs it.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isSourceFile, questionOf } from '../locate-bench.mjs';

const K = 10;
const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SETS = path.join(projectRoot, 'fixtures', 'locate-bench', 'sets.json');
/** The baseline's BM25 parameters (the textbook ones). */
const K1 = 1.2;
const B = 0.75;
/** Files the baseline indexes: larger ones are data, not code. */
const BASELINE_MAX_BYTES = 1024 * 1024;
const BASELINE_STOP = new Set(
  ('the and for are how does what where when which with that this from into is in of to an it its be by on or as do not ' +
    'can should when add adds remove fix fixes support allow use when after before if').split(' '),
);

// ---- questions ---------------------------------------------------------------------------------------------------

/** The questions of one set in commit order (oldest first), each with the parent it is asked at. */
export function setQuestions(gitDir, range) {
  const log = git(gitDir, ['log', '--no-merges', '--reverse', '--format=@@%H %P%n%s', '--name-only', '--no-renames', range]);
  const out = [];
  for (const block of log.split('@@').filter((b) => b.trim() !== '')) {
    const [head, subject, ...files] = block.split('\n').filter((l) => l.trim() !== '');
    const [sha, parent] = head.split(' ');
    if (!parent || subject === undefined) continue;
    const question = questionOf(subject);
    const source = files.filter(isSourceFile);
    if (question === null || source.length < 1 || source.length > 3) continue;
    out.push({ id: sha.slice(0, 10), parent, question, source });
  }
  return out;
}

function git(gitDir, args, cwd) {
  const run = spawnSync('git', [...(gitDir ? ['--git-dir', gitDir] : []), ...args], { cwd, encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${run.stderr.trim()}`);
  return run.stdout;
}

// ---- the plain BM25 baseline ---------------------------------------------------------------------------------------

/** Identifier-aware tokens: split at non-alphanumerics, camelCase and underscores, lower-cased, two characters or more. */
export function tokens(text) {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((t) => t.length > 1 && t.length < 40);
}

/** The files the baseline indexes: source code (the gold files are code), not prose, data or configuration. */
const CODE_FILE = /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs|py|pyi|go|rs|java|kt|kts|scala|groovy|rb|c|h|cc|cpp|hpp|cs|swift|php|ex|exs|lua|sh|vue|svelte)$/;
const TEST_LIKE = /(^|\/)(test|tests|__tests__|testing|spec|specs|fixtures|testdata|__fixtures__|e2e)\/|(\.(test|spec|test-d)\.[a-z]+$)|(_test\.(go|py|rb)$)|(_spec\.rb$)|(^|\/)test_[^/]*\.py$|(^|\/)conftest\.py$|(^|\/)src\/[a-z]*Test\/|Test\.(java|kt)$/;

/**
 * A plain BM25 over the code files of a checkout (tests left out): content tokens split at camelCase and underscores,
 * plus the path's tokens (counted twice, as a light field weight). Documents cached by blob id across the checkouts.
 */
class Bm25 {
  #docs = new Map();

  /** Ranks the files of `tree` (ls-tree entries of HEAD) for `question`. */
  rank(root, entries, question) {
    const docs = [];
    for (const { blob, file } of entries) {
      if (!CODE_FILE.test(file) || TEST_LIKE.test(file)) continue;
      const doc = this.#doc(root, blob, file);
      if (doc !== null) docs.push({ file, doc });
    }
    const asked = [...new Set(tokens(question).filter((t) => !BASELINE_STOP.has(t)))];
    if (asked.length === 0 || docs.length === 0) return [];
    const avg = docs.reduce((s, d) => s + d.doc.length, 0) / docs.length;
    const idf = asked.map((t) => {
      const df = docs.filter((d) => d.doc.tf.has(t)).length;
      return Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
    });
    return docs
      .map(({ file, doc }) => {
        let score = 0;
        asked.forEach((t, i) => {
          const tf = doc.tf.get(t) ?? 0;
          if (tf > 0) score += idf[i] * ((tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * doc.length) / avg)));
        });
        return { file, score };
      })
      .filter((s) => s.score > 0)
      .sort((a, b) => b.score - a.score || (a.file < b.file ? -1 : 1))
      .slice(0, K)
      .map((s) => s.file);
  }

  #doc(root, blob, file) {
    const key = `${blob}:${file}`;
    if (this.#docs.has(key)) return this.#docs.get(key);
    let doc = null;
    try {
      const full = path.join(root, file);
      const st = statSync(full);
      if (st.isFile() && st.size <= BASELINE_MAX_BYTES) {
        const text = readFileSync(full, 'utf8');
        if (!text.includes('\0')) {
          const tf = new Map();
          const all = [...tokens(text), ...tokens(file.replace(/\.[a-z0-9]+$/i, '')), ...tokens(file.replace(/\.[a-z0-9]+$/i, ''))];
          for (const t of all) tf.set(t, (tf.get(t) ?? 0) + 1);
          doc = { tf, length: all.length };
        }
      }
    } catch {
      doc = null;
    }
    this.#docs.set(key, doc);
    return doc;
  }
}

// ---- spelunk -------------------------------------------------------------------------------------------------------

/** A function (root, question) → ranked paths: the TS source bundled and called in process, or the built binary. */
async function spelunkRunner(kind, tmp, cacheHome, source = projectRoot, extra = {}) {
  if (kind === 'dist') {
    const dist = path.join(projectRoot, 'dist', 'spelunk.js');
    if (!existsSync(dist)) throw new Error(`${dist} is missing: run npm run build first`);
    return async (root, question) => {
      const { stdout, code, stderr } = await run(process.execPath, [dist, 'locate', '--output-format', 'json', '--k', String(K), '-C', root, '--', question], root, cacheHome);
      if (code !== 0) throw new Error(`spelunk locate exited ${code}: ${stderr.slice(0, 300)}`);
      return JSON.parse(stdout).results.map((r) => r.path);
    };
  }
  const { build } = await import('esbuild');
  const out = path.join(tmp, 'locate-bundle', 'locate.mjs');
  await build({ entryPoints: [path.join(source, 'src', 'locate', 'locate.ts')], bundle: true, platform: 'node', format: 'esm', packages: 'external', outfile: out, logLevel: 'error' });
  cpSync(path.join(source, 'src', 'symbols', 'tags'), path.join(path.dirname(out), 'tags'), { recursive: true });
  // The bundle's bare imports resolve from the project's node_modules.
  cpSync(path.join(projectRoot, 'package.json'), path.join(path.dirname(out), 'package.json'));
  const nodeModules = path.join(path.dirname(out), 'node_modules');
  spawnSync('ln', ['-s', path.join(projectRoot, 'node_modules'), nodeModules]);
  const mod = await import(pathToFileURL(out).href);
  return async (root, question) => (await mod.locate(root, question, { k: K, timeoutMs: 60_000, ...extra })).results.map((r) => r.path);
}

function run(file, args, cwd, cacheHome) {
  return new Promise((resolve, reject) => {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cacheHome, XDG_CACHE_HOME: cacheHome };
    const child = spawn(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env });
    const out = [];
    const err = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    child.once('error', reject);
    child.once('close', (code) => resolve({ stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), code }));
  });
}

// ---- scoring -------------------------------------------------------------------------------------------------------

/** Hit@1, Hit@K, Recall@K and MRR (first gold file within the top K) of ranked lists against gold sets. */
export function metrics(rows, pick) {
  const n = Math.max(rows.length, 1);
  let hit1 = 0;
  let hit = 0;
  let recall = 0;
  let mrr = 0;
  for (const r of rows) {
    const top = pick(r).slice(0, K);
    const at = top.findIndex((f) => r.gold.includes(f));
    if (at === 0) hit1 += 1;
    if (at >= 0) {
      hit += 1;
      mrr += 1 / (at + 1);
    }
    recall += r.gold.filter((g) => top.includes(g)).length / r.gold.length;
  }
  return { n: rows.length, hit1: hit1 / n, hit10: hit / n, recall10: recall / n, mrr: mrr / n };
}

/** Scores one set: a shared clone stepped through the parents in commit order. */
async function scoreSet(set, opts) {
  const gitDir = path.join(opts.mirrors, set.repo.replace('/', '+'), 'repo');
  if (!existsSync(gitDir)) return { set, skipped: `${gitDir} is missing (fetch ${set.repo})` };
  const questions = setQuestions(gitDir, set.range).slice(0, opts.max ?? Infinity);
  const clone = path.join(opts.tmp, set.name);
  // --local (objects hard-linked, not borrowed through alternates): spelunk's git layer refuses alternates outside the root.
  git(null, ['clone', '-q', '--no-checkout', '--local', gitDir, clone]);
  const bm25 = new Bm25();
  const rows = [];
  let seconds = 0;
  for (const q of questions) {
    git(null, ['-c', 'advice.detachedHead=false', 'checkout', '-q', '-f', '--detach', q.parent], clone);
    const entries = git(null, ['ls-tree', '-r', '-z', 'HEAD'], clone)
      .split('\0')
      .filter((l) => l !== '')
      .map((l) => ({ blob: l.slice(l.indexOf(' ', l.indexOf(' ') + 1) + 1, l.indexOf('\t')), file: l.slice(l.indexOf('\t') + 1), mode: l.slice(0, 6) }))
      .filter((e) => e.mode.startsWith('100'));
    const present = new Set(entries.map((e) => e.file));
    const gold = q.source.filter((f) => present.has(f));
    if (gold.length === 0) continue;
    const started = performance.now();
    const spelunk = await opts.locate(clone, q.question);
    seconds += (performance.now() - started) / 1000;
    const baseline = bm25.rank(clone, entries, q.question);
    const row = { id: q.id, gold, spelunk, bm25: baseline };
    rows.push(row);
    if (opts.verbose) {
      const rank = (list) => (list.findIndex((f) => gold.includes(f)) + 1 || '-');
      opts.log(`${set.name} ${q.id} s${rank(spelunk)} b${rank(baseline)} ${q.question}  [${gold.join(' ')}]`);
    }
  }
  rmSync(clone, { recursive: true, force: true });
  return { set, rows, seconds, spelunk: metrics(rows, (r) => r.spelunk), bm25: metrics(rows, (r) => r.bm25) };
}

function table(results) {
  const f = (m) => `${m.hit1.toFixed(3)} / ${m.hit10.toFixed(3)} / ${m.recall10.toFixed(3)} / ${m.mrr.toFixed(3)}`;
  const lines = ['| set | role | n | spelunk Hit@1 / Hit@10 / R@10 / MRR | BM25 Hit@1 / Hit@10 / R@10 / MRR | s/question |', '|---|---|---|---|---|---|'];
  for (const r of results) {
    if (r.skipped) lines.push(`| ${r.set.name} | ${r.set.role} | skipped: ${r.skipped} | | | |`);
    else lines.push(`| ${r.set.name} | ${r.set.role} | ${r.rows.length} | ${f(r.spelunk)} | ${f(r.bm25)} | ${(r.seconds / Math.max(r.rows.length, 1)).toFixed(2)} |`);
  }
  for (const role of ['tuning', 'held-out']) {
    const rows = results.filter((r) => !r.skipped && r.set.role === role).flatMap((r) => r.rows);
    if (rows.length > 0) lines.push(`| **pooled** | ${role} | ${rows.length} | ${f(metrics(rows, (r) => r.spelunk))} | ${f(metrics(rows, (r) => r.bm25))} | |`);
  }
  return lines.join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const value = (flag) => (argv.includes(flag) ? argv[argv.indexOf(flag) + 1] : undefined);
  const role = value('--role') ?? 'tuning';
  const only = value('--only')?.split(',') ?? null;
  const verbose = argv.includes('--verbose');
  const sets = JSON.parse(readFileSync(SETS, 'utf8')).sets.filter((s) => (role === 'all' || s.role === role) && (only === null || only.includes(s.name)));
  if (verbose && sets.some((s) => s.role === 'held-out')) {
    process.stderr.write('locate-eval: --verbose prints questions, and held-out sets are never read: drop --verbose or choose --role tuning\n');
    process.exit(2);
  }
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'locate-eval-'));
  const cacheHome = path.join(tmp, 'home');
  try {
    // --src DIR: another checkout's src/locate (e.g. a worktree of the commit before a change), for a before/after.
    const source = value('--src') ? path.resolve(value('--src')) : projectRoot;
    // --no-history: locate's history signal off (LocateOptions.history), to measure what it adds; --references: the
    // references signal on (LocateOptions.references, off by default).
    const extra = { ...(argv.includes('--no-history') ? { history: false } : {}), ...(argv.includes('--references') ? { references: true } : {}) };
    const locate = await spelunkRunner(value('--runner') ?? 'inproc', tmp, cacheHome, source, extra);
    const log = (l) => process.stderr.write(`${l}\n`);
    const max = value('--max') ? Number(value('--max')) : undefined;
    const mirrors = value('--mirrors') ?? '/work/.mirror';
    const results = [];
    for (const set of sets) {
      const result = await scoreSet(set, { mirrors, tmp, locate, verbose, log, max });
      results.push(result);
      if (!verbose) log(`${set.name}: ${result.skipped ?? `${result.rows.length} questions`}`);
    }
    process.stdout.write(`${table(results)}\n`);
    const jsonOut = value('--json');
    if (jsonOut) {
      const keep = results.map((r) => ({ name: r.set.name, role: r.set.role, skipped: r.skipped, spelunk: r.spelunk, bm25: r.bm25, n: r.rows?.length, ...(r.set.role === 'held-out' ? {} : { rows: r.rows }) }));
      writeFileSync(jsonOut, `${JSON.stringify(keep, null, 1)}\n`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
