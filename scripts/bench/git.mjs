// The git tool's cost per call, measured in the bench's run: a whole tool call (repository confinement check, policy,
// the filter-driver query, the hardened run, shaping) against the same git command started directly through
// execCapped with the same kernel limits but none of the hardening. Interleaved; medians. Also the policy's size.
import { loadSandbox, median, timed } from './sandbox.mjs';

/** Commands timed on `repo` (which must be a git repository at its root with at least one commit). */
const CALLS = [
  ['rev-parse', 'HEAD'],
  ['log', '--oneline', '-n', '20'],
];

export async function measureGit(projectRoot, tmp, repo, runs) {
  const sandbox = await loadSandbox(projectRoot, tmp);
  const git = sandbox.GIT_BINARY;
  if (git === null) throw new Error('git is not installed: the git tool cannot be measured');
  const tool = sandbox.createGitTool(git);
  const ctx = { root: repo, signal: new AbortController().signal, timeoutMs: 30_000 };
  const results = [];
  for (const argv of CALLS) {
    const plain = [];
    const viaTool = [];
    for (let i = 0; i < 5 * runs + 1; i++) {
      const p = await timed(() => sandbox.execCapped(git, argv, { cwd: repo, timeoutMs: 30_000, env: { HOME: tmp } }));
      let outcome;
      const t = await timed(async () => (outcome = await tool.run({ command: argv.join(' ') }, ctx)));
      if (outcome.isError) throw new Error(`git ${argv.join(' ')} failed through the tool: ${outcome.content}`);
      if (i === 0) continue; // warm-up
      plain.push(p);
      viaTool.push(t);
    }
    results.push({ command: argv.join(' '), plainMs: median(plain), toolMs: median(viaTool) });
  }
  const policies = Object.values(sandbox.GIT_POLICIES);
  const denyIn = (table) => Object.values(table).filter((rule) => rule.type === 'deny').length;
  const size = {
    subcommands: policies.length,
    flagRules: policies.reduce((n, p) => n + Object.keys(p.short).length + Object.keys(p.long).length, 0) + Object.keys(sandbox.GIT_COMMON_DENY).length,
    denyRules: policies.reduce((n, p) => n + denyIn(p.short) + denyIn(p.long), 0) + Object.keys(sandbox.GIT_COMMON_DENY).length +
      Object.keys(sandbox.GIT_GLOBAL_DENY).length + Object.keys(sandbox.GIT_REFUSED_SUBCOMMANDS).length,
  };
  return { calls: results, size };
}

// Standalone: `node scripts/bench/git.mjs REPO [RUNS]` prints the numbers for one repository.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'spelunk-bench-git-'));
  try {
    const projectRoot = path.dirname(path.dirname(path.dirname(new URL(import.meta.url).pathname)));
    const out = await measureGit(projectRoot, tmp, path.resolve(process.argv[2] ?? '.'), Number(process.argv[3] ?? 7));
    console.log(JSON.stringify(out, null, 2));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
