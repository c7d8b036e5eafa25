// Start-up only, builds interleaved: `node scripts/bench/startup-ab.mjs OLD/spelunk.js NEW/spelunk.js [claude]` (copy
// each build's dist/ aside first, inside the checkout so that @vscode/ripgrep resolves). Wall time and main-thread CPU
// time (/proc/<pid>/schedstat, which waiting for a core does not inflate) from spawn to the first API request, with
// and without the code cache, against the floor (`node -e 0` + `rg --files --max-depth 3` of the same round), and
// each run's ratio to its round's floor; `claude` adds Claude Code's `-p` (scripts/bench/claude-code.mjs). REPO names
// the repository (default fixtures/sample-repo), RUNS the rounds (default 21). The full `npm run bench` cannot run its
// start-up rows alone.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rgPath } from '@vscode/ripgrep';
import { median } from './analyse.mjs';
import { claudeCodeBinary, runClaudeCode } from './claude-code.mjs';
import { loadMockApi } from './mock.mjs';
import { nodeCpu, runSpelunk, timeNode, timeRg } from './procs.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const builds = process.argv.slice(2);
if (builds.length === 0) throw new Error('usage: node scripts/bench/startup-ab.mjs BUILD/spelunk.js [BUILD/spelunk.js …] [claude]');
const RUNS = Number(process.env.RUNS ?? 21);
const repo = path.resolve(process.env.REPO ?? path.join(root, 'fixtures', 'sample-repo'));
const tmp = mkdtempSync(path.join(os.tmpdir(), 'spelunk-startup-'));
const mock = await loadMockApi(root, tmp);
const api = await mock.startMockApi({ minCacheTokens: 256 });
try {
  const env = { PATH: '/usr/bin:/bin', HOME: path.join(tmp, 'home'), ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: api.url, NO_COLOR: '1' };
  // A cache directory under a regular file can be neither read nor written: every start compiles the bundle.
  const noCache = path.join(tmp, 'not-a-directory');
  writeFileSync(noCache, '');
  const claude = builds.includes('claude') ? claudeCodeBinary(root) : null;
  if (claude?.skip) throw new Error(`claude: ${claude.skip}`);
  const replies = () => [mock.reply(mock.text('ok'))];
  const ask = (dist, runEnv = env) =>
    dist === 'claude' ? runClaudeCode({ api, bin: claude.bin, repo, tmp, question: 'q', replies: replies() }) : runSpelunk({ api, dist, repo, env: runEnv, question: 'q', replies: replies() });
  // Two warm-ups each: the first run of a build writes its code cache (and the map's hint).
  for (const dist of builds) for (let i = 0; i < 2; i++) await ask(dist);
  const runs = builds.map(() => ({ cpu: [], wall: [], uncachedCpu: [], ratio: [] }));
  const floor = { cpu: [], wall: [] };
  for (let i = 0; i < RUNS; i++) {
    const nodeMs = (await timeNode(env)).ms;
    const rgMs = (await timeRg(rgPath, repo, env)).ms;
    floor.wall.push(nodeMs + rgMs);
    floor.cpu.push(await nodeCpu(env));
    for (const [b, dist] of builds.entries()) {
      const cached = await ask(dist);
      runs[b].cpu.push(cached.cpuMs);
      runs[b].wall.push(cached.ms);
      runs[b].ratio.push(cached.ms / (nodeMs + rgMs));
      if (dist !== 'claude') runs[b].uncachedCpu.push((await ask(dist, { ...env, XDG_CACHE_HOME: noCache })).cpuMs);
    }
  }
  const ms = (values) => Math.round(median(values) * 10) / 10;
  const quartiles = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    return `${sorted[Math.floor((sorted.length - 1) / 4)].toFixed(2)}–${sorted[Math.floor((3 * (sorted.length - 1)) / 4)].toFixed(2)}`;
  };
  console.log(`${repo}: floor (node -e 0 + rg) ${ms(floor.wall)} ms, node -e 0 CPU ${ms(floor.cpu)} ms; ${RUNS} rounds, interleaved`);
  for (const [b, dist] of builds.entries()) {
    const r = runs[b];
    const uncached = r.uncachedCpu.length > 0 ? ` (${ms(r.uncachedCpu)} without the code cache)` : '';
    console.log(`${dist}: wall ${ms(r.wall)} ms, ratio to the floor ${median(r.ratio).toFixed(2)} (IQR ${quartiles(r.ratio)}); CPU ${ms(r.cpu)} ms${uncached}`);
  }
} finally {
  await api.close();
  rmSync(tmp, { recursive: true, force: true });
}
