// `npm run bench`: start-up time, peak memory, listing size and prompt-cache efficiency of the built CLI, measured in
// one run against synthetic repositories and the project's local Messages API server. Offline; everything it creates
// lives in one temp directory, removed at the end (also on failure or Ctrl+C). Exit 1 when a target is missed.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rgPath } from '@vscode/ripgrep';
import Table from 'cli-table3';
import { loadMockApi } from './bench/mock.mjs';
import { nodeCpu, nodeHwm, runSpelunk, timeNode, timeRg } from './bench/procs.mjs';
import { BASH_BASELINE_COMMIT, measureSandbox } from './bench/sandbox.mjs';
import { measureToolRounds } from './bench/tool-rounds.mjs';
import { measureGit } from './bench/git.mjs';
import { measureWorld } from './bench/world.mjs';
import { measureCitations } from './bench/citations.mjs';
import { measureSecrets } from './bench/secrets.mjs';
import { cacheEfficiency, listingOf, median, prefixTokens, promptOf, toolErrors } from './bench/analyse.mjs';
import { benchRepos, measureMap } from './bench/map.mjs';
import { claudeCodeBinary, runClaudeCode } from './bench/claude-code.mjs';
import { runBench as runLocateBench } from './locate-bench.mjs';
import { LARGE_LOCATE_BUDGET, measureLocateLarge } from './bench/locate-large.mjs';
import { measureIndex, measurePeak } from './bench/locate-index.mjs';
import { measureMcpLocate } from './bench/locate-mcp.mjs';

/** Timed runs of each command, after one warm-up of each, interleaved. */
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const TARGETS = { startup: 1.5, startupSmall: 2.0, toolRound: 0.8, memory: 2.5, listingTokens: 2_000, cache: 0.95, secondRun: 0.95, snapshot: 1.2, limitsMs: 1, toolGrowthMs: 1, gitCall: 5, citationsMs: 50, kernelMs: 5, probeMs: 50, ownWorldMs: 5, resolveWorldMs: 50, parentDeathMs: 1, secretsP50Ms: 2, secretsP99Ms: 50 };
/** Asked of the MCP server after the generated tree's own question: words its generator uses, none naming one file. */
const MCP_QUESTIONS = ['cache handler eviction', 'how does the token refresh work'];
/** Asked of every real checkout: the index's cost hardly depends on the question, and it must not favour any repository. */
const REAL_INDEX_QUESTION = 'where are the command line options parsed';

/** The targets for locate (set for held-out questions from real changes; applied here to sverklo's). */
const LOCATE_TARGETS = { hit: 0.9, recall: 0.85, mrr: 0.7, seconds: 1.5 };
/** No entry cap by default: the map's token budget (--map-tokens, 2,000) limits it. */
const DEFAULT_MAX_ENTRIES = null;
/** Runs of each tool-round script (each is 8 scans of the large repository). */
const TOOL_RUNS = Number(process.env.BENCH_TOOL_RUNS ?? 3);

// Constants above, functions below (hoisted): the top-level await runs before any later `const` is initialised.
const projectRoot = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const dist = path.join(projectRoot, 'dist', 'spelunk.js');
const sampleRepo = path.join(projectRoot, 'fixtures', 'sample-repo');

const tmp = mkdtempSync(path.join(os.tmpdir(), 'spelunk-bench-'));
// `rm -rf` is several times faster than rmSync on 260k files; rmSync is the fallback.
const removeTmp = () => {
  if (spawnSync('rm', ['-rf', tmp], { stdio: 'ignore' }).status !== 0) rmSync(tmp, { recursive: true, force: true });
};
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    process.stderr.write(`\nbench: ${signal}, removing ${tmp}\n`);
    removeTmp();
    process.exit(130);
  });
}

const servers = [];
try {
  process.exitCode = await bench();
} catch (error) {
  process.stderr.write(`bench: failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await Promise.all(servers.map((api) => api.close()));
  const removing = performance.now();
  removeTmp();
  log(`removed ${tmp} in ${seconds(performance.now() - removing)}`);
}

async function bench() {
  if (!existsSync(dist)) throw new Error(`${dist} is missing: run \`npm run build\` first (npm run bench does)`);
  log(`temp dir ${tmp}; node ${process.version}; ${os.cpus().length} CPUs`);
  const large = path.join(tmp, 'large');
  const flat = path.join(tmp, 'flat');
  const small = path.join(tmp, 'small');
  const home = path.join(tmp, 'home');
  mkdirSync(home);

  log('generating the repositories (100k tracked + 100k ignored files; a flat one with 3 × 20k files) …');
  const genStart = performance.now();
  const [mock, largeInfo, flatInfo, smallInfo] = await Promise.all([
    loadMockApi(projectRoot, tmp),
    generate('large', large),
    generate('flat', flat),
    generate('small', small),
  ]);
  const genMs = performance.now() - genStart;
  log(
    `  large: ${largeInfo.tracked.toLocaleString('en')} tracked + ${largeInfo.ignored.toLocaleString('en')} ignored files, ` +
      `written in ${seconds(largeInfo.writeMs)}, committed in ${seconds(largeInfo.gitMs)}; flat: ${flatInfo.files.toLocaleString('en')} ` +
      `files in ${seconds(flatInfo.writeMs)}; small: ${smallInfo.tracked} files; ${seconds(genMs)} in all`,
  );

  const api = await mock.startMockApi();
  servers.push(api);
  // Nothing inherited but PATH: no stray SPELUNK_MODEL, proxy or colour settings change what is measured.
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: api.url, NO_COLOR: '1' };
  const answer = mock.reply(mock.text('The router is built in packages/api/src/router.ts:1.'));
  const ask = (repo, args = [], question = 'Where is the HTTP router built?', runEnv = env) =>
    runSpelunk({ api, dist, repo, env: runEnv, args, question, replies: [answer] }).then(expectExit0);
  // A cache directory under a regular file can be neither read nor written: every start compiles the bundle, and
  // everything else (saved sessions under HOME) is as in the cached runs.
  const noCache = path.join(tmp, 'not-a-directory');
  writeFileSync(noCache, '');
  const uncached = { ...env, XDG_CACHE_HOME: noCache };

  log(`start-up and memory on the large repository: 1 warm-up + ${RUNS} interleaved runs of each …`);
  const claude = claudeCodeBinary(projectRoot);
  if (claude.skip) log(`  Claude Code rows skipped: ${claude.skip}`);
  const askClaude = (repo) =>
    runClaudeCode({ api, bin: claude.bin, repo, tmp, question: 'Where is the HTTP router built?', replies: [answer] }).then((run) => {
      if (run.code !== 0) throw new Error(`claude -p exited ${run.code}`);
      return run;
    });
  await timeNode(env);
  await timeRg(rgPath, large, env);
  await ask(large); // the first run of a build also writes the code cache
  await timeRg(rgPath, small, env);
  await ask(small);
  await nodeHwm(env);
  if (claude.bin) await askClaude(small); // its first run sets up its home
  const runs = { node: [], rg: [], spelunk: [], uncached: [], rgSmall: [], small: [], nodeHwm: [], spelunkHwm: [], listings: [], cpu: [], uncachedCpu: [], nodeCpu: [], claude: [], claudeSmall: [] };
  for (let i = 0; i < RUNS; i++) {
    if (claude.bin) {
      runs.claude.push((await askClaude(large)).ms);
      runs.claudeSmall.push((await askClaude(small)).ms);
    }
    runs.node.push((await timeNode(env)).ms);
    runs.rg.push((await timeRg(rgPath, large, env)).ms);
    runs.rgSmall.push((await timeRg(rgPath, small, env)).ms);
    runs.small.push((await ask(small)).ms);
    const cold = await ask(large, [], undefined, uncached);
    runs.uncached.push(cold.ms);
    runs.uncachedCpu.push(cold.cpuMs);
    runs.nodeCpu.push(await nodeCpu(env));
    const run = await ask(large);
    runs.spelunk.push(run.ms);
    runs.cpu.push(run.cpuMs);
    runs.spelunkHwm.push(run.hwmKb);
    runs.listings.push(listingOf(run.request).text);
    runs.nodeHwm.push(await nodeHwm(env));
  }
  const startup = {
    spelunk: median(runs.spelunk),
    uncached: median(runs.uncached),
    node: median(runs.node),
    rg: median(runs.rg),
    small: median(runs.small),
    rgSmall: median(runs.rgSmall),
    cpu: median(runs.cpu),
    uncachedCpu: median(runs.uncachedCpu),
    nodeCpu: median(runs.nodeCpu),
  };
  const memory = { spelunk: median(runs.spelunkHwm), node: median(runs.nodeHwm) };
  if (claude.bin) log(`  claude -p to first request (ms): ${runs.claude.map(Math.round).join(' ')}; small repo: ${runs.claudeSmall.map(Math.round).join(' ')}`);
  log(`  spelunk to first request (ms): ${runs.spelunk.map(Math.round).join(' ')}; without the code cache: ${runs.uncached.map(Math.round).join(' ')}`);
  log(`  small repo: spelunk ${runs.small.map(Math.round).join(' ')}; rg ${runs.rgSmall.map(Math.round).join(' ')}`);
  log(`  node -e 0 (ms): ${runs.node.map(Math.round).join(' ')}; rg --files --max-depth 3 (ms): ${runs.rg.map(Math.round).join(' ')}`);
  log(`  VmHWM (MiB) spelunk: ${runs.spelunkHwm.map(mib).join(' ')}; node -e: ${runs.nodeHwm.map(mib).join(' ')}`);
  const stable = runs.listings.every((text) => text === runs.listings[0]);

  log('listings …');
  const listings = [
    { name: 'large (100k files)', maxEntries: DEFAULT_MAX_ENTRIES, listing: listingOf((await ask(large)).request) },
    { name: 'large, --max-entries 50', maxEntries: 50, listing: listingOf((await ask(large, ['--max-entries', '50'])).request) },
    { name: 'flat (3 × 20k files)', maxEntries: DEFAULT_MAX_ENTRIES, listing: listingOf((await ask(flat)).request) },
    { name: 'flat, --max-entries 50', maxEntries: 50, listing: listingOf((await ask(flat, ['--max-entries', '50'])).request) },
    { name: 'fixtures/sample-repo', maxEntries: DEFAULT_MAX_ENTRIES, listing: listingOf((await ask(sampleRepo)).request) },
  ];
  for (const { name, listing } of listings) {
    log(`  ${name}: ${listing.entries} entries, ${listing.topLevel} top-level, ${listing.markers} "more" markers, ${listing.chars} chars`);
  }

  log('the repository map: coverage and tokens, build time against the old listing …');
  const mapRepos = [{ name: 'large (100k files)', root: large }, { name: 'fixtures/sample-repo', root: sampleRepo }, ...benchRepos(process.env, log)];
  const mapRows = await measureMap({ projectRoot, tmp, rgPath, repos: mapRepos, timed: mapRepos[0], runs: RUNS, log, row });

  log(`read-only proof and tool-call overhead on the large repository (${RUNS} runs) …`);
  const sandbox = await measureSandbox(projectRoot, tmp, large, RUNS, log);
  log(`each program's own world under bwrap against /usr whole, the tables and a plain spawn (${10 * RUNS} runs) …`);
  const world = await measureWorld(projectRoot, tmp, large, 10 * RUNS, log);
  log(`git tool calls against plain git on the large repository (${5 * RUNS} runs each) …`);
  const gitCost = await measureGit(projectRoot, tmp, large, RUNS);
  for (const c of gitCost.calls) log(`  git ${c.command}: tool ${c.toolMs.toFixed(1)} ms, plain ${c.plainMs.toFixed(1)} ms, overhead ${(c.toolMs - c.plainMs).toFixed(1)} ms`);
  log(`  git policy: ${gitCost.size.subcommands} subcommands, ${gitCost.size.flagRules} flag rules, ${gitCost.size.denyRules} deny rules`);

  log(`tool rounds: 8 find scans on the large repository, in one turn vs one per turn (${TOOL_RUNS} runs each) …`);
  const rounds = await measureToolRounds({ mock, api, dist, repo: large, env, runs: TOOL_RUNS, log });

  log(`citation verification: 50 citations on the large repository (${RUNS} runs) …`);
  const citations = await measureCitations(projectRoot, tmp, large, rgPath, RUNS);
  log(`  ms: ${citations.samples.map((x) => x.toFixed(1)).join(' ')}; statuses ${JSON.stringify(citations.statuses)}`);
  if (citations.count !== 50 || citations.statuses.ok !== 50) throw new Error(`expected 50 ok citations, got ${JSON.stringify(citations.statuses)}`);

  log(`secret redaction: every tool result of this project's own files, searches and history (${TOOL_RUNS} runs) …`);
  const secrets = await measureSecrets({ projectRoot, tmp, repo: projectRoot, rgPath, runs: TOOL_RUNS });
  log(`  ${secrets.results} results (${secrets.kib.toFixed(0)} KiB): p50 ${secrets.p50.toFixed(2)} ms, p99 ${secrets.p99.toFixed(2)} ms, first ${secrets.coldMs.toFixed(1)} ms; scanner chunk load ${secrets.load.wallMs.toFixed(1)} ms (CPU ${secrets.load.cpuMs.toFixed(1)} ms)`);

  log('command corpus: fixtures/commands through the bash and git tools …');
  const corpus = commandCorpus();

  log('prompt cache: a scripted 10-request question, then a second run with another question …');
  const cache = await measureCache(mock, large, largeInfo.sources, { ...env });

  const locateRows = await measureLocate();
  log('locate on the 100k-file repository, cold and warm symbol cache …');
  const large100k = await measureLocateLarge(dist, large, largeInfo.sources[0]);
  log('locate index on the 100k-file repository: cold build, warm, one edit (scripts/bench/locate-index.mjs) …');
  const indexQuestion = `where is the ${largeInfo.sources[0].replace(/\.[a-z]+$/, '').split(/[^a-z0-9]+/i).slice(-3).join(' ')} code`;
  const index100k = measureIndex(dist, large, indexQuestion, largeInfo.sources[0], rgPath);
  log('locate over MCP on the 100k-file repository: one server, the index built by its first call, then questions in turn (scripts/bench/locate-mcp.mjs) …');
  const mcp100k = await measureMcpLocate(dist, large, [indexQuestion, ...MCP_QUESTIONS]);
  log('locate index at 200k files: peak memory, cold and warm (a generated tree, written now and removed after) …');
  const large200k = path.join(tmp, 'large200k');
  const info200k = await generate('large200k', large200k);
  const peak200k = measurePeak(dist, large200k, `where is the ${info200k.sources[0].replace(/\.[a-z]+$/, '').split(/[^a-z0-9]+/i).slice(-3).join(' ')} code`);
  rmSync(large200k, { recursive: true, force: true });
  const realIndexes = realIndexRepos(process.env, log).map(({ name, root }) => {
    log(`locate index on ${name} (a real checkout, not edited): cold build, warm …`);
    return { name, m: measureIndex(dist, root, REAL_INDEX_QUESTION, null, rgPath) };
  });

  const rows = [
    row(
      'start-up: spawn → first API request',
      `${ms(startup.spelunk)} vs ${ms(startup.node)} node + ${ms(startup.rg)} rg = ${ms(startup.node + startup.rg)}`,
      startup.spelunk / (startup.node + startup.rg),
      '≤',
      TARGETS.startup,
    ),
    row(
      'start-up CPU (main thread) to first request',
      `${ms(startup.cpu)} vs ${ms(startup.nodeCpu)} node -e 0; ${ms(startup.uncachedCpu)} without the code cache`,
      startup.cpu / startup.nodeCpu,
      '≤',
      TARGETS.startup,
    ),
    row(
      'start-up, 200-file repo',
      `${ms(startup.small)} vs ${ms(startup.node)} node + ${ms(startup.rgSmall)} rg = ${ms(startup.node + startup.rgSmall)}`,
      startup.small / (startup.node + startup.rgSmall),
      '≤',
      TARGETS.startupSmall,
    ),
    ...(claude.bin ? claudeRows(startup, runs) : []),
    row(
      'tool round: 8 scans in one turn / one per turn',
      `${ms(rounds.parallel)} vs ${ms(rounds.serial)} (${rounds.bound} at once)`,
      rounds.parallel / rounds.serial,
      '≤',
      TARGETS.toolRound,
    ),
    row('peak memory (VmHWM) at first request', `${mib(memory.spelunk)} vs ${mib(memory.node)} MiB (node -e)`, memory.spelunk / memory.node, '≤', TARGETS.memory),
    row(
      'read-only snapshot before the tools run',
      `${sandbox.snapshotMs.toFixed(1)} ms vs ${ms(sandbox.statusMs)} for the git status it replaced`,
      sandbox.snapshotMs / sandbox.statusMs,
      '≤',
      TARGETS.snapshot,
    ),
    row(
      'read-only proof in all (before + after)',
      `${ms(sandbox.snapshotMs + sandbox.verifyMs)} (find walk ${ms(sandbox.verifyMs)}) vs 2 × git status ${ms(2 * sandbox.statusMs)}`,
      (sandbox.snapshotMs + sandbox.verifyMs) / (2 * sandbox.statusMs),
      '≤',
      TARGETS.snapshot,
    ),
    ...(sandbox.baselineToolMs === null
      ? []
      : [
          row(
            'bash tool call: growth since the hardening, ms',
            `wc -l: ${sandbox.toolMs.toFixed(2)} ms now vs ${sandbox.baselineToolMs.toFixed(2)} ms at ${BASH_BASELINE_COMMIT}`,
            sandbox.toolMs - sandbox.baselineToolMs,
            '≤',
            TARGETS.toolGrowthMs,
          ),
        ]),
    row(
      'kernel limits (prlimit) per tool call, ms',
      `wc -l: with − without; whole bash tool call ${sandbox.toolMs.toFixed(2)} ms`,
      sandbox.limitsMs,
      '≤',
      TARGETS.limitsMs,
    ),
    ...(sandbox.kernelMs === null
      ? []
      : [
          row(
            'kernel sandbox (bwrap) per call, ms',
            `wc -l: under bwrap − without (prlimit in both; ${sandbox.plainMs.toFixed(2)} ms without)`,
            sandbox.kernelMs,
            '≤',
            TARGETS.kernelMs,
          ),
        ]),
    row('kernel sandbox probe at start-up, ms', 'one sandboxed `true`, once per process', sandbox.probeMs, '≤', TARGETS.probeMs),
    ...(world === null
      ? []
      : [
          row(
            "kernel sandbox in the program's own world − plain spawn, ms",
            `wc -l: ${world.ownMs.toFixed(2)} ms own world, ${world.wholeMs.toFixed(2)} ms /usr whole, ${world.tablesMs.toFixed(2)} ms tables (prlimit, setpriv), ${world.plainMs.toFixed(2)} ms plain`,
            world.ownMs - world.plainMs,
            '≤',
            TARGETS.ownWorldMs,
          ),
          row(
            'parent-death signal (setpriv) per tables call, ms',
            `wc -l: setpriv + prlimit ${world.tablesMs.toFixed(2)} ms − prlimit alone ${world.prlimitMs.toFixed(2)} ms`,
            world.tablesMs - world.prlimitMs,
            '≤',
            TARGETS.parentDeathMs,
          ),
          row(
            "resolving one program's world (once per program per process), ms",
            `the loader's listing: git ${world.resolveGitMs.toFixed(2)} ms; file (and its --version) ${world.resolveFileMs.toFixed(2)} ms`,
            Math.max(world.resolveGitMs, world.resolveFileMs),
            '≤',
            TARGETS.resolveWorldMs,
          ),
        ]),
    ...gitCost.calls.map((c) =>
      row(
        `git tool call / plain git: ${c.command}`,
        `${c.toolMs.toFixed(1)} vs ${c.plainMs.toFixed(1)} ms (+${(c.toolMs - c.plainMs).toFixed(1)} ms: confinement, policy, filter query)`,
        c.toolMs / c.plainMs,
        '≤',
        TARGETS.gitCall,
      ),
    ),
    row('citations: verify 50 on the large repo, ms', `${citations.count} distinct, each file read once (median)`, citations.ms, '≤', TARGETS.citationsMs),
    row('secrets: redaction per tool result p50, ms', `${secrets.results} results of this project (first, loading secretlint: ${secrets.coldMs.toFixed(0)} ms)`, secrets.p50, '≤', TARGETS.secretsP50Ms),
    row('secrets: redaction per tool result p99, ms', `CPU p99 ${secrets.cpuP99.toFixed(1)} ms; scanner chunk load ${secrets.load.wallMs.toFixed(0)} ms, on the first scan only`, secrets.p99, '≤', TARGETS.secretsP99Ms),
    ...listings.flatMap(({ name, maxEntries, listing }) => [
      row(`listing tokens: ${name}`, `${listing.chars.toLocaleString('en')} chars / 4`, listing.tokens, '≤', TARGETS.listingTokens, 'int'),
      ...(maxEntries === null ? [] : [row(`listing entries: ${name}`, `${listing.markers} "… (N more)" markers`, listing.entries, '≤', maxEntries, 'int')]),
    ]),
    ...mapRows,
    ...corpus,
    ...locateRows,
    row(
      'locate on 100k files: node CPU s, cold symbol cache',
      `wall ${seconds(large100k.cold.ms)} (rg included); warm cache ${(large100k.warm.cpuMs / 1000).toFixed(2)} s CPU, wall ${seconds(large100k.warm.ms)}`,
      large100k.cold.cpuMs / 1000,
      '≤',
      LARGE_LOCATE_BUDGET.seconds,
    ),
    row('locate on 100k files: peak MiB', `warm cache ${large100k.warm.mib.toFixed(1)} MiB`, large100k.cold.mib, '≤', LARGE_LOCATE_BUDGET.mib),
    ...indexRows(index100k),
    row(
      'locate over MCP: later calls, median ms (100k files)',
      `${mcp100k.later.length} calls of ${1 + MCP_QUESTIONS.length} questions; the first (index built) ${seconds(mcp100k.first)}`,
      mcp100k.medianMs,
      '≤',
      200,
      'int',
    ),
    row('locate over MCP: server peak MiB (100k files)', `resident after the last call ${mcp100k.endMib} MiB`, mcp100k.maxMib, '≤', 300, 'int'),
    row('locate index: peak MiB at 200k files, cold locate', `index built and first question; ${seconds(peak200k.cold.ms)}`, peak200k.cold.mib, '≤', 300, 'int'),
    row('locate index: peak MiB at 200k files, warm locate', `max of 3; median ${ms(peak200k.warm.medianMs)}`, peak200k.warm.maxMib, '≤', 300, 'int'),
    ...realIndexes.flatMap(({ name, m }) => realIndexRows(name, m)),
    row(
      'cache: Σ reads / Σ previous prompts (10 requests)',
      `${cache.first.read.toLocaleString('en')} / ${cache.first.previous.toLocaleString('en')} tokens`,
      cache.first.ratio,
      '≥',
      TARGETS.cache,
    ),
    row(
      'cache: 2nd run, prefix read from cache',
      `${cache.second.read.toLocaleString('en')} / ${cache.second.prefix.toLocaleString('en')} tools+system tokens`,
      cache.second.ratio,
      '≥',
      TARGETS.secondRun,
    ),
    {
      name: 'byte-stable system prompt',
      detail: `${RUNS} runs on the large repo; 2nd cache run vs 1st`,
      value: stable && cache.samePrefix ? 'identical' : 'DIFFERS',
      target: 'identical',
      pass: stable && cache.samePrefix,
    },
  ];

  const table = new Table({ head: ['measure', 'measured', 'value', 'target', 'result'], style: { head: [], border: [] } });
  for (const r of rows) table.push([r.name, r.detail, r.value, r.target, r.pass ? 'PASS' : 'FAIL']);
  const failed = rows.filter((r) => !r.pass);
  const notes = [
    `node ${process.version}, ${os.cpus().length} CPUs, medians of ${RUNS} interleaved runs; repositories generated in ${seconds(genMs)}`,
    `start-up on the large repo without the code cache: ${ms(startup.uncached)} (${(startup.uncached / (startup.node + startup.rg)).toFixed(3)} × the floor); with it: ${ms(startup.spelunk)}`,
    `system prompt byte-identical across the ${RUNS} timed runs: ${stable ? 'yes' : 'NO'}; 2nd-run tools+system identical to the 1st: ` +
      `${cache.samePrefix ? 'yes' : 'NO'}; tool errors in the scripted question: ${cache.toolErrors}`,
  ];
  process.stdout.write(`\n${table.toString()}\n${notes.join('\n')}\n`);
  process.stdout.write(failed.length === 0 ? 'all targets met\n' : `${failed.length} target(s) missed: ${failed.map((r) => r.name).join('; ')}\n`);
  return failed.length === 0 ? 0 : 1;
}

/**
 * `spelunk locate` on sverklo's questions (scripts/locate-bench.mjs), when their repositories are checked out under
 * LOCATE_BENCH_REPOS (default /tmp/locate-bench); otherwise no rows, and the log says why. Scored over the gold files
 * present at the pinned tags ("reachable"); the detail gives the naive baseline and the score over all gold files.
 */
async function measureLocate() {
  const reposDir = process.env.LOCATE_BENCH_REPOS ?? '/tmp/locate-bench';
  log(`locate on the sverklo questions, repositories from ${reposDir} …`);
  const result = await runLocateBench({ reposDir });
  for (const s of result.skipped) log(`  locate: skipped ${s}`);
  if (result.rows.length === 0) {
    log('  locate rows skipped: none of the repositories is checked out (see scripts/locate-bench.mjs)');
    return [];
  }
  const { locate: l, naive: n, medianSeconds } = result.summary;
  const detail = (key) => `naive ${n.reachable[key].toFixed(3)}; all gold files ${l.all[key].toFixed(3)} (${l.reachable.questions} questions)`;
  return [
    row('locate Hit@10 (sverklo questions)', detail('hit'), l.reachable.hit, '≥', LOCATE_TARGETS.hit),
    row('locate Recall@10 (sverklo questions)', detail('recall'), l.reachable.recall, '≥', LOCATE_TARGETS.recall),
    row('locate MRR (sverklo questions)', detail('mrr'), l.reachable.mrr, '≥', LOCATE_TARGETS.mrr),
    row('locate median seconds per question', 'spelunk locate as a process, start-up included', medianSeconds, '≤', LOCATE_TARGETS.seconds),
  ];
}

/**
 * spelunk against Claude Code's `-p`, spawn to first API request, same server, repositories and question, interleaved:
 * spelunk's median over Claude Code's (below 1: spelunk asks first), with Claude Code's spread in the detail.
 */
function claudeRows(startup, runs) {
  const spread = (values) => `${Math.round(Math.min(...values))}–${Math.round(Math.max(...values))}`;
  const claude = median(runs.claude);
  const small = median(runs.claudeSmall);
  return [
    row('start-up vs Claude Code -p (100k repo)', `${ms(startup.spelunk)} vs ${ms(claude)} (claude ${spread(runs.claude)} ms, ${(claude / startup.spelunk).toFixed(1)}× slower)`, startup.spelunk / claude, '≤', 1),
    row('start-up vs Claude Code -p (200-file repo)', `${ms(startup.small)} vs ${ms(small)} (claude ${spread(runs.claudeSmall)} ms, ${(small / startup.small).toFixed(1)}× slower)`, startup.small / small, '≤', 1),
  ];
}

/** Run 1: 9 tool-using replies then an answer; run 2 (new process, same server and cache): one answer. */
async function measureCache(mock, repo, sources, env) {
  const { reply, text, toolUse, startMockApi, tokensOf } = mock;
  const api = await startMockApi(); // its own cache map, default minCacheTokens (1024)
  servers.push(api);
  env.ANTHROPIC_BASE_URL = api.url;
  const [a, b, c] = sources;
  const pkg = a.split('/').slice(0, 2).join('/');
  const step = (note, ...tools) => reply(text(note), ...tools);
  const replies = [
    step('Searching for the server factory.', toolUse('bash', { command: `rg -n "createServer" ${pkg}` })),
    step('Reading the first candidate.', toolUse('read_file', { path: a })),
    step('Looking at the exports nearby.', toolUse('bash', { command: `rg -n "export function" ${path.posix.dirname(b)}` })),
    step('Reading its head.', toolUse('read_file', { path: b, start_line: 1, end_line: 4 })),
    step('Checking the base import.', toolUse('bash', { command: `rg -n -i "base" ${path.posix.dirname(c)}` })),
    step('Reading two files at once.', toolUse('read_file', { path: c }), toolUse('read_file', { path: 'README.md' })),
    step('Checking the workspaces.', toolUse('bash', { command: 'rg -n "workspaces" package.json' })),
    step('Package manifest.', toolUse('read_file', { path: `${pkg}/package.json` })),
    step('Project notes.', toolUse('read_file', { path: 'AGENTS.md' }), toolUse('bash', { command: `rg -n -c "import" ${pkg}/src` })),
    reply(text(`The server factory is \`createServer\`, defined in ${a}:1 and re-exported from ${pkg}.`)),
  ];
  const first = await runSpelunk({ api, dist, repo, env, question: 'Where is the server created?', replies }).then(expectExit0);
  if (first.requests.length !== replies.length) {
    throw new Error(`the scripted question made ${first.requests.length} requests, expected ${replies.length}`);
  }
  const errors = first.requests.flatMap(toolErrors);
  for (const [i, r] of first.requests.entries()) {
    const u = r.usage;
    log(`  #${i + 1}: prompt ${promptOf(u)} = in ${u.input_tokens} + write ${u.cache_creation_input_tokens} + read ${u.cache_read_input_tokens}`);
  }
  const second = await runSpelunk({ api, dist, repo, env, question: 'How are packages versioned?', replies: [reply(text('Each package.json has its own version.'))] }).then(expectExit0);
  const prefix = prefixTokens(second.request.body, tokensOf);
  const read = second.request.usage.cache_read_input_tokens;
  log(`  2nd run #1: prefix ${prefix}, read ${read}, write ${second.request.usage.cache_creation_input_tokens}, in ${second.request.usage.input_tokens}`);
  const sameness = (r) => JSON.stringify([r.body.tools, r.body.system]);
  return {
    first: cacheEfficiency(first.requests),
    second: { read, prefix, ratio: read / prefix },
    toolErrors: errors.length,
    samePrefix: sameness(first.requests[0]) === sameness(second.request),
  };
}

/** Generates a repository in a child process (see gen-repo.mjs for why) and returns its JSON summary. */
function generate(kind, dir) {
  const script = path.join(projectRoot, 'scripts', 'bench', 'gen-repo.mjs');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, kind, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(stdout)) : reject(new Error(`generating ${kind} failed: ${stderr.trim()}`))));
  });
}

function expectExit0(run) {
  if (run.code !== 0) throw new Error(`spelunk exited ${run.code}: ${run.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  return run;
}

/**
 * scripts/command-corpus.mjs as a child (it bundles the tools from src/): escapes, false refusals of read-only single
 * commands (tables alone) and usable answers to piped read-only commands. BENCH_CORPUS_EXTRA names more commands.
 */
function commandCorpus() {
  const extra = process.env.BENCH_CORPUS_EXTRA ? ['--extra', process.env.BENCH_CORPUS_EXTRA] : [];
  const child = spawnSync(process.execPath, [path.join(projectRoot, 'scripts/command-corpus.mjs'), '--json', ...extra], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (child.error || !child.stdout.trim().startsWith('{')) throw new Error(`command corpus failed: ${child.stderr || child.error}`);
  const report = JSON.parse(child.stdout);
  const group = (key) => report.groups[key] ?? { total: 0, refused: 0, usable: 0 };
  const refusedShare = (key) => (group(key).total === 0 ? 0 : group(key).refused / group(key).total);
  const piped = ['agent piped tables', 'tldr piped tables'].map(group).reduce((a, b) => ({ total: a.total + b.total, usable: a.usable + b.usable }), { total: 0, usable: 0 });
  return [
    row('corpus: accepted non-read-only commands', 'tables and kernel', report.escapes.length, '≤', 0, 'int'),
    row('corpus: false refusals, agent single', `${group('agent single tables').refused}/${group('agent single tables').total} (tables)`, refusedShare('agent single tables'), '≤', 0.1),
    row('corpus: false refusals, tldr single', `${group('tldr single tables').refused}/${group('tldr single tables').total} (tables)`, refusedShare('tldr single tables'), '≤', 0.2),
    row('corpus: piped read-only answered usably', `${piped.usable}/${piped.total}`, piped.total === 0 ? 1 : piped.usable / piped.total, '≥', 0.8),
  ];
}

function row(name, detail, value, op, target, format = 'ratio') {
  const pass = op === '≤' ? value <= target : value >= target;
  const shown = format === 'int' ? value.toLocaleString('en') : value.toFixed(3);
  const targetShown = `${op} ${format === 'int' ? target.toLocaleString('en') : target}`;
  return { name, detail, value: shown, target: targetShown, pass };
}

function log(line) {
  process.stderr.write(`${line}\n`);
}
function ms(value) {
  return `${Math.round(value)} ms`;
}
function seconds(value) {
  return `${(value / 1000).toFixed(1)} s`;
}
function mib(kb) {
  return (kb / 1024).toFixed(1);
}

/** The real checkouts of SPELUNK_BENCH_REPOS with at least 10,000 files (the "real 10k+ repository"). */
function realIndexRepos(env, log) {
  return benchRepos(env, () => {}).filter(({ name, root }) => {
    // Counted as locate lists them (the bundled rg, no config read), not by git, which would read the checkout's config.
    const listed = spawnSync(rgPath, ['--files', '--no-config', '--no-require-git', '--no-ignore-global', '--hidden', '-g', '!.git', '--null'], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28 });
    const files = listed.stdout?.split('\0').filter(Boolean).length ?? 0;
    if (files < 10_000) log(`  ${name}: ${files.toLocaleString('en')} files listed, under 10,000: no index rows`);
    return files >= 10_000;
  });
}

/** The index's targets on a real checkout (no edit row: the checkout is not written to). */
function realIndexRows(name, m) {
  const baselineMs = m.baseline.listMs + m.baseline.readMs;
  return [
    row(`locate index: warm locate, median ms (${name})`, `CPU ${m.warm.medianCpuMs} ms; ${m.baseline.files.toLocaleString('en')} files`, m.warm.medianMs, '≤', 200, 'int'),
    row(`locate index: cold locate / (rg --files + read) (${name})`, `${m.cold.ms} ms vs ${baselineMs} ms`, m.cold.ms / baselineMs, '≤', 3),
    row(`locate index: same answer without it (${name})`, m.sameAnswerWithoutIndex ? 'yes' : 'NO', m.sameAnswerWithoutIndex ? 1 : 0, '≥', 1, 'int'),
  ];
}

/** The index's targets (issue 37) on the 100k-file repository; wall times, with CPU (rg included) beside them. */
function indexRows(m) {
  const baselineMs = m.baseline.listMs + m.baseline.readMs;
  return [
    row('locate index: warm locate, median ms (100k files)', `CPU ${m.warm.medianCpuMs} ms; start-up alone ${m.startupMs.ms} ms`, m.warm.medianMs, '≤', 200, 'int'),
    row('locate index: cold locate / (rg --files + read)', `${m.cold.ms} ms vs ${baselineMs} ms (${m.baseline.files} files)`, m.cold.ms / baselineMs, '≤', 3),
    row('locate index: one edit, ms over warm', `${m.edited.ms} ms after the edit, ${m.warm.medianMs} ms warm`, m.edited.ms - m.warm.medianMs, '≤', 100, 'int'),
    row('locate index: same answer without it', m.sameAnswerWithoutIndex ? 'yes' : 'NO', m.sameAnswerWithoutIndex ? 1 : 0, '≥', 1, 'int'),
  ];
}
