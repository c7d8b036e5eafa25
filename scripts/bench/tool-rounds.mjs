// The tool-round measure of `npm run bench`: the same 8 scans asked in one turn and one per turn.
import os from 'node:os';
import { median, toolErrors } from './analyse.mjs';
import { runSpelunk } from './procs.mjs';

/**
 * A scripted question whose first reply asks for 8 `find` scans of the large repository, all in one turn, against
 * the same 8 asked one per turn. The time of the tool rounds is from the request that asked for the (first) scans to
 * the request carrying the (last) results, as the server saw them arrive; medians of `runs` runs.
 */
export async function measureToolRounds({ mock, api, dist, repo, env, runs, log }) {
  const { reply, text, toolUse } = mock;
  const scans = ['router', 'auth', 'cache', 'queue', 'parser', 'token', 'billing', 'socket'].map((word, i) =>
    toolUse('bash', { command: `find packages -name '*${word}*'` }, `toolu_scan_${i}`),
  );
  const timedReplies = (replies) => {
    const arrivals = [];
    return { arrivals, scripted: replies.map((r) => () => (arrivals.push(performance.now()), r)) };
  };
  const once = async (replies) => {
    const { arrivals, scripted } = timedReplies(replies);
    const run = await runSpelunk({ api, dist, repo, env, question: 'Which packages mention these words?', replies: scripted });
    if (run.code !== 0) throw new Error(`tool round: spelunk exited ${run.code}: ${run.stderr.trim().split('\n').slice(-3).join(' | ')}`);
    const errors = run.requests.flatMap(toolErrors);
    if (errors.length > 0) throw new Error(`tool round: ${errors.length} scans failed: ${JSON.stringify(errors[0]).slice(0, 200)}`);
    return arrivals.at(-1) - arrivals[0];
  };
  const parallel = [];
  const serial = [];
  for (let i = 0; i < runs; i++) {
    parallel.push(await once([reply(text('Scanning.'), ...scans), reply(text('Done.'))]));
    serial.push(await once([...scans.map((scan) => reply(text('Scanning.'), scan)), reply(text('Done.'))]));
  }
  log(`  one turn (ms): ${parallel.map(Math.round).join(' ')}; one per turn: ${serial.map(Math.round).join(' ')}`);
  return { parallel: median(parallel), serial: median(serial), bound: Math.min(8, Math.max(4, os.availableParallelism())) };
}

