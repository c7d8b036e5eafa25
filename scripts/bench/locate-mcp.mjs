// locate as an agent calls it: one `spelunk mcp` server (no API key), driven by the MCP SDK's own client over stdio,
// asked several questions in turn on one repository. The first call builds the index (empty cache); the later ones
// are what an agent pays per call once the server runs: the segments stay decoded in the server, the tree is still
// checked for changes on every call.
//   node scripts/bench/locate-mcp.mjs DIST REPO "QUESTION" ["QUESTION" ...]
// Prints one JSON line: the first call's ms, every later call's ms and their median, and the server's peak resident
// set (VmHWM) and its resident set after the last call (VmRSS).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readHwm } from './procs.mjs';

/** Rounds over the questions after the first call. */
const ROUNDS = 3;

export async function measureMcpLocate(dist, repo, questions) {
  const cache = mkdtempSync(path.join(os.tmpdir(), 'spelunk-bench-mcp-'));
  const env = { PATH: '/usr/bin:/bin', HOME: cache, XDG_CACHE_HOME: cache, ANTHROPIC_API_KEY: '' };
  const transport = new StdioClientTransport({ command: process.execPath, args: [dist, 'mcp', '-C', repo], env, stderr: 'ignore' });
  const client = new Client({ name: 'spelunk-bench', version: '1' });
  try {
    await client.connect(transport);
    const call = async (question) => {
      const started = performance.now();
      const result = await client.callTool({ name: 'locate', arguments: { question, k: 10 } }, undefined, { timeout: 600_000 });
      if (result.isError) throw new Error(`locate failed: ${JSON.stringify(result.content).slice(0, 300)}`);
      return performance.now() - started;
    };
    const first = await call(questions[0]);
    const later = [];
    for (let round = 0; round < ROUNDS; round++) for (const question of questions) later.push(await call(question));
    const hwmKb = transport.pid === null ? null : readHwm(transport.pid);
    const rssKb = transport.pid === null ? null : readRss(transport.pid);
    const mib = (kb) => (kb === null ? null : Math.round(kb / 1024));
    return { first: Math.round(first), later: later.map(Math.round), medianMs: Math.round(median(later)), maxMib: mib(hwmKb), endMib: mib(rssKb) };
  } finally {
    await client.close().catch(() => {});
    rmSync(cache, { recursive: true, force: true });
  }
}

/** Resident set (VmRSS, KiB) of a live process now, or null when it is gone. */
function readRss(pid) {
  try {
    const match = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

if (process.argv[1] && path.resolve(process.argv[1]) === new URL(import.meta.url).pathname) {
  const [dist, repo, ...questions] = process.argv.slice(2);
  process.stdout.write(`${JSON.stringify(await measureMcpLocate(path.resolve(dist), path.resolve(repo), questions))}\n`);
}
