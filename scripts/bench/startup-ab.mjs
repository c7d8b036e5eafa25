// Start-up only, two builds interleaved: `node scripts/bench/startup-ab.mjs OLD/spelunk.js NEW/spelunk.js` (copy each
// build's dist/ aside first). Main-thread CPU time (/proc/<pid>/schedstat, which waiting for a core does not inflate)
// and wall time from spawn to the first API request on fixtures/sample-repo, with and without the code cache, against
// `node -e 0`; medians of RUNS (default 21). The full `npm run bench` cannot run its start-up rows alone.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './analyse.mjs';
import { loadMockApi } from './mock.mjs';
import { nodeCpu, runSpelunk, timeNode } from './procs.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const builds = process.argv.slice(2);
if (builds.length === 0) throw new Error('usage: node scripts/bench/startup-ab.mjs BUILD/spelunk.js [BUILD/spelunk.js …]');
const RUNS = Number(process.env.RUNS ?? 21);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'spelunk-startup-'));
const mock = await loadMockApi(root, tmp);
const api = await mock.startMockApi({ minCacheTokens: 256 });
try {
  const env = { PATH: '/usr/bin:/bin', HOME: path.join(tmp, 'home'), ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: api.url, NO_COLOR: '1' };
  // A cache directory under a regular file can be neither read nor written: every start compiles the bundle.
  const noCache = path.join(tmp, 'not-a-directory');
  writeFileSync(noCache, '');
  const repo = path.join(root, 'fixtures', 'sample-repo');
  const ask = (dist, runEnv = env) => runSpelunk({ api, dist, repo, env: runEnv, question: 'q', replies: [mock.reply(mock.text('ok'))] });
  // Two warm-ups each: the first run of a build writes its code cache.
  for (const dist of builds) for (let i = 0; i < 2; i++) await ask(dist);
  const runs = builds.map(() => ({ cpu: [], wall: [], uncachedCpu: [] }));
  const node = { cpu: [], wall: [] };
  for (let i = 0; i < RUNS; i++) {
    for (const [b, dist] of builds.entries()) {
      const cached = await ask(dist);
      runs[b].cpu.push(cached.cpuMs);
      runs[b].wall.push(cached.ms);
      runs[b].uncachedCpu.push((await ask(dist, { ...env, XDG_CACHE_HOME: noCache })).cpuMs);
    }
    node.cpu.push(await nodeCpu(env));
    node.wall.push((await timeNode(env)).ms);
  }
  const ms = (values) => Math.round(median(values) * 10) / 10;
  for (const [b, dist] of builds.entries()) {
    console.log(`${dist}: CPU ${ms(runs[b].cpu)} ms (${ms(runs[b].uncachedCpu)} without the code cache), wall ${ms(runs[b].wall)} ms`);
  }
  console.log(`node -e 0: CPU ${ms(node.cpu)} ms, wall ${ms(node.wall)} ms; ${RUNS} runs each, interleaved`);
} finally {
  await api.close();
  rmSync(tmp, { recursive: true, force: true });
}
