// `node scripts/locate-bench.mjs [--repos DIR] [--only express,vite] [--json]`: file localisation of `spelunk locate`
// (the built dist/spelunk.js, one process per question, as a user runs it) on public ground truth, side by side with
// a naive baseline (files ranked by how many of the question's words they contain, then by hits). Reports Hit@10,
// Recall@10, MRR and the median seconds per question.
//
// The questions: fixtures/locate-bench/sverklo/ (sverklo's bench:swe, MIT). The repositories are not in this project:
// each must be checked out at its tag as DIR/<name>-<ref> (e.g. /tmp/locate-bench/express-v5.0.1), for example
//   git --git-dir=<clone>/.git archive v5.0.1 | tar -x -C /tmp/locate-bench/express-v5.0.1
// A repository that is missing is skipped with the reason.
//
// `--changes GIT_DIR BASE..HEAD TREE` scores questions derived from real changes instead (see changeQuestions), on TREE,
// a checkout of BASE; e.g. babel: git --git-dir=… archive HEAD~300 | tar -x -C /tmp/locate-bench/babel-base. Some gold files do not exist at the pinned tags (express
// v5 moved its router to a package): "all" counts them as misses, "reachable" scores only the gold files present.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rgPath } from '@vscode/ripgrep';

const K = 10;
/** Files the agent loop's first-turn hint names (src/agent/hint.ts HINT_FILES). */
const HINT_FILES = 5;
const projectRoot = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const DATASETS = path.join(projectRoot, 'fixtures', 'locate-bench', 'sverklo');
const distArg = process.argv.includes('--dist') ? process.argv[process.argv.indexOf('--dist') + 1] : undefined;
/** `--dist FILE` measures another build (e.g. a copy of main's dist/ for a before/after). */
const dist = distArg ? path.resolve(distArg) : path.join(projectRoot, 'dist', 'spelunk.js');

/** Words the baseline ignores: only the commonest English ones, so it stays naive. */
const BASELINE_STOP = new Set('the and for are how does what where when which with that this from into when is in of to a an it its be by on or as do'.split(' '));

export async function runBench({ reposDir, only = null, log = () => {} }) {
  if (!existsSync(dist)) throw new Error(`${dist} is missing: run npm run build first`);
  const repos = JSON.parse(readFileSync(path.join(DATASETS, 'repos.json'), 'utf8')).filter((r) => only === null || only.includes(r.name));
  const rows = [];
  const skipped = [];
  for (const repo of repos) {
    const root = path.join(reposDir, `${repo.name}-${repo.ref}`);
    if (!existsSync(root)) {
      skipped.push(`${repo.name}: ${root} is missing (check out ${repo.url} at ${repo.ref} there)`);
      continue;
    }
    const questions = readFileSync(path.join(DATASETS, repo.dataset), 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
    for (const q of questions) {
      const gold = q.required_evidence.map((e) => e.file);
      const reachable = gold.filter((f) => existsSync(path.join(root, f)));
      const started = performance.now();
      const located = await locateFiles(root, q.question);
      const seconds = (performance.now() - started) / 1000;
      const naive = await baselineFiles(root, q.question);
      rows.push({ repo: repo.name, id: q.id, gold, reachable, locate: located, naive, seconds });
      log(`${q.id}: locate ${rankOf(located, gold) ?? '-'} naive ${rankOf(naive, gold) ?? '-'} (${seconds.toFixed(2)} s)`);
    }
  }
  return { rows, skipped, summary: summarise(rows) };
}

/**
 * Questions from real changes: each non-merge commit of `range` (e.g. BASE..HEAD) whose subject reads like a fix or a
 * feature and that touched one to three non-test source files; the question is the subject (PR number and
 * conventional-commit prefix removed), the gold set those files as far as they exist in `tree` (a checkout of BASE:
 * the code before the changes, as a person asking would see it).
 */
export function changeQuestions(gitDir, range, tree) {
  const log = spawnSync('git', ['--git-dir', gitDir, 'log', '--no-merges', '--format=@@%H %s', '--name-only', range], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (log.status !== 0) throw new Error(`git log ${range} failed: ${log.stderr.trim()}`);
  const questions = [];
  for (const block of log.stdout.split('@@').filter((b) => b.trim() !== '')) {
    const [head, ...files] = block.split('\n').filter((l) => l.trim() !== '');
    const [sha, ...words] = head.split(' ');
    const question = questionOf(words.join(' '));
    if (question === null) continue;
    const source = files.filter(isSourceFile);
    const gold = source.filter((f) => existsSync(path.join(tree, f)));
    if (source.length < 1 || source.length > 3 || gold.length === 0) continue;
    questions.push({ id: sha.slice(0, 10), question, required_evidence: gold.map((file) => ({ file })) });
  }
  return questions;
}

const CHANGE_VERB = /^(fix|feat|add|support|improve|allow|handle|respect|avoid|throw|do not|don't|preserve|correct|prevent|make|use|implement|ensure|expose|remove|reject|skip|accept|return|warn|honou?r)/i;
/** Files a question's answer lives in: code, not tests, fixtures, docs, examples, benchmarks or build scripts. */
const SOURCE_EXT = /\.(ts|tsx|mts|cts|js|mjs|cjs|py|go|rs|java|rb)$/;
const NOT_SOURCE_DIR = /(^|\/)(test|tests|__tests__|testing|spec|fixtures|__fixtures__|docs|docs_src|doc|examples?|benches|benchmarks?|scripts|playground|e2e|tests-build|tests-integration|stress-test)\//;
const TEST_FILE = /(\.(test|spec|test-d)\.[a-z]+$)|(_test\.(go|py)$)|(^|\/)test_[^/]*\.py$|(^|\/)conftest\.py$/;

/** A non-test source file: what a change-derived question's gold set holds. */
export function isSourceFile(f) {
  return SOURCE_EXT.test(f) && !NOT_SOURCE_DIR.test(f) && !TEST_FILE.test(f);
}

/**
 * A commit subject as a question, or null when it does not read like a fix or a feature: the PR number, a gitmoji and
 * the conventional-commit type are removed (`fix(parser): forbid x` → `parser: forbid x`; `io: handle y` stays).
 */
export function questionOf(subject) {
  const plain = subject.replace(/\s*\(#\d+\)\s*$/, '').replace(/^[^\x00-\x7f]+\s*/u, '').replace(/^:[a-z_]+:\s*/, '');
  const question = plain.replace(/^(fix|feat|perf|refactor)(?:\(([^)]*)\))?!?:\s*/i, (_m, _t, scope) => (scope ? `${scope}: ` : ''));
  const verbAt = question.replace(/^[\w@/.,* -]{1,40}:\s*/, '');
  if (!CHANGE_VERB.test(plain) && !CHANGE_VERB.test(verbAt)) return null;
  if (/^(chore|docs|test|ci|build|release|bump|revert)/i.test(plain)) return null;
  return question.trim() === '' ? null : question;
}

/** Scores `questions` on one tree (the changes set); same rows as runBench. */
export async function runQuestions(root, name, questions, log = () => {}) {
  const rows = [];
  for (const q of questions) {
    const gold = q.required_evidence.map((e) => e.file);
    const started = performance.now();
    const located = await locateFiles(root, q.question);
    const seconds = (performance.now() - started) / 1000;
    const naive = await baselineFiles(root, q.question);
    rows.push({ repo: name, id: q.id, gold, reachable: gold, locate: located, naive, seconds });
    log(`${q.id} ${q.question}: locate ${rankOf(located, gold) ?? '-'} naive ${rankOf(naive, gold) ?? '-'} (${seconds.toFixed(2)} s)`);
  }
  return { rows, skipped: [], summary: summarise(rows) };
}

/** Hit@K, Recall@K and MRR of each ranker, over all gold files and over the reachable ones only. */
export function summarise(rows) {
  const metrics = (ranked, goldOf) => {
    const scored = rows.filter((r) => goldOf(r).length > 0);
    const hit = scored.filter((r) => goldOf(r).some((g) => ranked(r).slice(0, K).includes(g))).length;
    const recall = scored.reduce((s, r) => s + goldOf(r).filter((g) => ranked(r).slice(0, K).includes(g)).length / goldOf(r).length, 0);
    const mrr = scored.reduce((s, r) => s + (rankOf(ranked(r), goldOf(r)) ? 1 / rankOf(ranked(r), goldOf(r)) : 0), 0);
    const n = Math.max(scored.length, 1);
    // How often the first-turn hint (the top HINT_FILES) would name a gold file.
    const hint = scored.filter((r) => goldOf(r).some((g) => ranked(r).slice(0, HINT_FILES).includes(g))).length;
    return { questions: scored.length, hit: hit / n, recall: recall / n, mrr: mrr / n, hint: hint / n };
  };
  const seconds = rows.map((r) => r.seconds).sort((a, b) => a - b);
  return {
    locate: { all: metrics((r) => r.locate, (r) => r.gold), reachable: metrics((r) => r.locate, (r) => r.reachable) },
    naive: { all: metrics((r) => r.naive, (r) => r.gold), reachable: metrics((r) => r.naive, (r) => r.reachable) },
    medianSeconds: seconds.length === 0 ? null : seconds[Math.floor((seconds.length - 1) / 2)],
  };
}

/** 1-based rank of the first gold file within the top K, or null. */
function rankOf(ranked, gold) {
  const at = ranked.slice(0, K).findIndex((f) => gold.includes(f));
  return at < 0 ? null : at + 1;
}

async function locateFiles(root, question) {
  const { stdout, code } = await run(process.execPath, [dist, 'locate', '--output-format', 'json', '--k', String(K), '-C', root, question], root);
  if (code !== 0) throw new Error(`spelunk locate exited ${code} on "${question}"`);
  return JSON.parse(stdout).results.map((r) => r.path);
}

/** The naive baseline: one rg over the question's words; files by distinct words contained, then by hits, then path. */
async function baselineFiles(root, question) {
  const words = [...new Set(question.toLowerCase().split(/[^a-z0-9_]+/).filter((w) => w.length >= 3 && !BASELINE_STOP.has(w)))];
  if (words.length === 0) return [];
  const args = ['--no-config', '-i', '-o', '-w', '--null', '--with-filename', '--no-heading', '--no-line-number'];
  for (const w of words) args.push('-e', w);
  const { stdout } = await run(rgPath, [...args, '--', '.'], root);
  const files = new Map();
  for (const line of stdout.split('\n')) {
    const nul = line.indexOf('\0');
    if (nul < 0) continue;
    const file = line.slice(0, nul).replace(/^\.\//, '');
    const entry = files.get(file) ?? { words: new Set(), hits: 0 };
    entry.words.add(line.slice(nul + 1).toLowerCase());
    entry.hits += 1;
    files.set(file, entry);
  }
  return [...files].sort((a, b) => b[1].words.size - a[1].words.size || b[1].hits - a[1].hits || (a[0] < b[0] ? -1 : 1)).map(([f]) => f);
}

function run(file, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' } });
    const out = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.resume();
    child.once('error', reject);
    child.once('close', (code) => resolve({ stdout: Buffer.concat(out).toString('utf8'), code }));
  });
}

function format(result) {
  const pct = (x) => x.toFixed(3);
  const lines = [];
  for (const scope of ['all', 'reachable']) {
    const l = result.summary.locate[scope];
    const n = result.summary.naive[scope];
    lines.push(`${scope.padEnd(9)} (${l.questions} questions)  locate: Hit@${K} ${pct(l.hit)}  Recall@${K} ${pct(l.recall)}  MRR ${pct(l.mrr)}   naive: Hit@${K} ${pct(n.hit)}  Recall@${K} ${pct(n.recall)}  MRR ${pct(n.mrr)}   hint@${HINT_FILES} ${pct(l.hint)}`);
  }
  lines.push(`median ${result.summary.medianSeconds?.toFixed(2) ?? '-'} s per question (spelunk locate, process start included)`);
  for (const s of result.skipped) lines.push(`skipped ${s}`);
  return lines.join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const value = (flag) => (argv.includes(flag) ? argv[argv.indexOf(flag) + 1] : undefined);
  const reposDir = value('--repos') ?? process.env.LOCATE_BENCH_REPOS ?? '/tmp/locate-bench';
  const only = value('--only')?.split(',') ?? null;
  const log = argv.includes('--verbose') ? (l) => process.stderr.write(`${l}\n`) : () => {};
  // --changes GIT_DIR RANGE TREE: the questions from real changes instead of sverklo's.
  const changes = argv.includes('--changes') ? argv.slice(argv.indexOf('--changes') + 1, argv.indexOf('--changes') + 4) : null;
  const result = changes
    ? await runQuestions(changes[2], path.basename(changes[2]), changeQuestions(changes[0], changes[1], changes[2]), log)
    : await runBench({ reposDir, only, log });
  process.stdout.write(argv.includes('--json') ? `${JSON.stringify(result, null, 2)}\n` : `${format(result)}\n`);
}
