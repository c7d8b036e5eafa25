// Sandbox costs measured in the bench's run: the read-only proof against the `git status` snapshot it replaced, and
// the per-call overhead of the kernel limits (prlimit) on a tool call. The sandbox modules are bundled from src/ on
// the fly (esbuild) into the bench's temp directory, so what is measured is the current source.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/** Bundles the sandbox modules into `tmp` and imports them. */
export async function loadSandbox(projectRoot, tmp) {
  const entry = path.join(tmp, 'sandbox-entry.ts');
  const src = (rel) => JSON.stringify(path.join(projectRoot, 'src', rel));
  writeFileSync(
    entry,
    `export { execCapped } from ${src('sandbox/exec.ts')};\n` +
      `export { chooseSandbox } from ${src('sandbox/choose.ts')};\n` +
      `export { TABLES_ONLY } from ${src('sandbox/kernel.ts')};\n` +
      `export { programWorld } from ${src('sandbox/world.ts')};\n` +
      `export { snapshotRepoState, verifyReadOnly } from ${src('sandbox/readonly.ts')};\n` +
      `export { createBashTool } from ${src('tools/bash.ts')};\n` +
      `export { resolvePrograms } from ${src('sandbox/programs.ts')};\n` +
      `export { createGitTool } from ${src('tools/git.ts')};\n` +
      `export { GIT_BINARY } from ${src('sandbox/git.ts')};\n` +
      `export { GIT_POLICIES, GIT_COMMON_DENY, GIT_GLOBAL_DENY, GIT_REFUSED_SUBCOMMANDS } from ${src('sandbox/policy/git-tables.ts')};\n`,
  );
  const outfile = path.join(tmp, 'sandbox-bench.mjs');
  await build({ entryPoints: [entry], outfile, bundle: true, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning',
    banner: { js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);" } });
  return import(pathToFileURL(outfile).href);
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function timed(fn) {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/**
 * Read-only proof on `repo`: the old snapshot (one `git status` of the work tree, untracked files included) against
 * the new one (start time and HEAD), and the old check after the run (the same status again) against the new one
 * (one `find -newerct` walk plus HEAD). Interleaved, `runs` times each.
 */
export async function measureSandbox(projectRoot, tmp, repo, runs, log) {
  const sandbox = await loadSandbox(projectRoot, tmp);
  const status = () => {
    const r = spawnSync('git', ['--no-optional-locks', 'status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignored=no', '--', '.'],
      { cwd: repo, env: { PATH: '/usr/bin:/bin', GIT_OPTIONAL_LOCKS: '0' }, maxBuffer: 256 * 1024 * 1024 });
    if (r.status !== 0) throw new Error(`git status failed: ${r.stderr}`);
  };
  const times = { status: [], snapshot: [], verify: [] };
  for (let i = 0; i < runs + 1; i++) {
    const statusMs = await timed(status);
    let before;
    const snapshotMs = await timed(async () => (before = await sandbox.snapshotRepoState(repo)));
    let verdict;
    const verifyMs = await timed(async () => (verdict = await sandbox.verifyReadOnly(before)));
    if (!verdict.verified) throw new Error(`the read-only check failed on an untouched repository: ${verdict.detail}`);
    if (i === 0) continue; // warm-up
    times.status.push(statusMs);
    times.snapshot.push(snapshotMs);
    times.verify.push(verifyMs);
  }
  log(`  git status (ms): ${times.status.map(Math.round).join(' ')}`);
  log(`  snapshot (ms): ${times.snapshot.map((x) => x.toFixed(1)).join(' ')}; verify (ms): ${times.verify.map(Math.round).join(' ')}`);

  // Tool overhead: the same bash tool call with and without the kernel limits, and the whole call against the bash
  // tool as it was before the sandbox hardening (BASH_BASELINE_COMMIT), interleaved.
  const programs = await sandbox.resolvePrograms();
  const wc = programs.get('wc');
  const call = { with: [], without: [], tool: [], baseline: [], kernel: [] };
  // The kernel sandbox (bwrap) against the same call without it, prlimit in both; skipped where bwrap cannot run.
  const probeStart = performance.now();
  const choice = await sandbox.chooseSandbox('auto');
  const probeMs = performance.now() - probeStart;
  const kernel = choice.ok && choice.sandbox.kind === 'kernel' ? choice.sandbox : null;
  if (kernel === null) log(`  kernel sandbox skipped: ${choice.ok ? choice.notice : choice.error}`);
  const bash = sandbox.createBashTool(programs);
  const old = await baselineBash(projectRoot, tmp, log);
  const ctx = { root: repo, signal: new AbortController().signal, timeoutMs: 30_000 };
  const command = { command: 'wc -l README.md packages/../README.md' };
  for (let i = 0; i < 10 * runs; i++) {
    // prlimit alone (setpriv's parent-death signal is measured in world.mjs).
    call.with.push(await timed(() => sandbox.execCapped(wc, ['-l', 'README.md'], { cwd: repo, timeoutMs: 30_000, sandbox: sandbox.TABLES_ONLY, parentDeath: null })));
    if (kernel) call.kernel.push(await timed(() => sandbox.execCapped(wc, ['-l', 'README.md'], { cwd: repo, timeoutMs: 30_000, sandbox: kernel })));
    call.without.push(await timed(() => sandbox.execCapped(wc, ['-l', 'README.md'], { cwd: repo, timeoutMs: 30_000, limiter: null, sandbox: sandbox.TABLES_ONLY })));
    call.tool.push(await timed(() => bash.run(command, ctx)));
    if (old) call.baseline.push(await timed(() => old.run(command, ctx)));
  }
  return {
    statusMs: median(times.status),
    snapshotMs: median(times.snapshot),
    verifyMs: median(times.verify),
    limitsMs: median(call.with) - median(call.without),
    kernelMs: kernel ? median(call.kernel) - median(call.with) : null,
    plainMs: median(call.with),
    probeMs,
    toolMs: median(call.tool),
    baselineToolMs: old ? median(call.baseline) : null,
  };
}

/** The commit before the sandbox hardening of issue 7 (component-wise confinement, hard links, kernel limits). */
export const BASH_BASELINE_COMMIT = '1e5ad4e';

/** The bash tool at BASH_BASELINE_COMMIT, bundled from git history; null (with the reason logged) when unavailable. */
async function baselineBash(projectRoot, tmp, log) {
  const dir = path.join(tmp, 'bash-baseline');
  mkdirSync(dir, { recursive: true });
  const archive = spawnSync('git', ['-C', projectRoot, 'archive', '--format=tar', BASH_BASELINE_COMMIT, 'src'], { maxBuffer: 64 * 1024 * 1024 });
  if (archive.status !== 0 || spawnSync('tar', ['-x', '-C', dir], { input: archive.stdout }).status !== 0) {
    log(`  bash tool baseline skipped: src at ${BASH_BASELINE_COMMIT} is not available`);
    return null;
  }
  const entry = path.join(dir, 'entry.ts');
  writeFileSync(entry, `export { createBashTool } from './src/tools/bash.ts';\nexport { resolvePrograms } from './src/sandbox/programs.ts';\n`);
  const outfile = path.join(tmp, 'bash-baseline.mjs');
  await build({ entryPoints: [entry], outfile, bundle: true, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning',
    nodePaths: [path.join(projectRoot, 'node_modules')],
    banner: { js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);" } });
  const old = await import(pathToFileURL(outfile).href);
  // No rg: the measured call is wc, and the bundled copy could not find ripgrep's binary from the temp directory.
  return old.createBashTool(await old.resolvePrograms(Promise.resolve(null)));
}
