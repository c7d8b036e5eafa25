// `node scripts/command-corpus.mjs [--src DIR] [--extra FILE.jsonl] [--json]`: runs the labelled command corpus of
// fixtures/commands/ through the real bash and git tools (bundled from DIR, default src/, so an older commit's src can
// be measured too) on a temporary repository, and prints: accepted non-read-only commands (must be 0), the
// false-refusal rate of read-only single commands (agent vs tldr, installed programs, awk/tr/less/more aside), the
// share of piped read-only commands answered usably, and how many suggestions in refusals the tool accepts.
// Non-read-only commands are only checked by the policy, never run. Exit 1 when a command escapes.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const projectRoot = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const src = path.resolve(option('--src') ?? path.join(projectRoot, 'src'));
const extra = option('--extra');
/** Programs the false-refusal figure leaves aside, as the issue asks (never whitelisted: awk, tr; pagers: less, more). */

/**
 * Programs the false-refusal figure leaves aside: awk, tr, less and more as the issue asks; echo and printf as well,
 * because they read nothing (their answer is the text the model already wrote).
 */
const ASIDE = new Set(['awk', 'tr', 'less', 'more', 'echo', 'printf']);
const TIMEOUT_MS = 5_000;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'spelunk-corpus-'));
try {
  const lib = await bundle();
  const rows = load();
  const root = makeRepo();
  const report = await measure(lib, rows, root);
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else print(report);
  process.exitCode = report.escapes.length > 0 ? 1 : 0;
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

/** The tools, bundled from `src` (the same entry points the CLI uses); the compound splitter only where it exists. */
async function bundle() {
  const hasCompound = existsSync(path.join(src, 'tools', 'compound.ts'));
  const contents = [
    `export { createBashTool } from './tools/bash.ts';`,
    `export { createGitTool } from './tools/git.ts';`,
    `export { resolvePrograms } from './sandbox/programs.ts';`,
    `export { checkCommand } from './sandbox/policy.ts';`,
    `export { checkGitCommand } from './sandbox/git-policy.ts';`,
    `export { GIT_BINARY } from './sandbox/git.ts';`,
    hasCompound ? `export { splitCompound } from './tools/compound.ts';` : '',
  ].join('\n');
  const outfile = path.join(tmp, 'tools.mjs');
  await build({
    stdin: { contents, resolveDir: src, loader: 'ts' },
    bundle: true, platform: 'node', format: 'esm', outfile, logLevel: 'error',
    nodePaths: [path.join(projectRoot, 'node_modules')], external: ['@vscode/ripgrep'],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  // @vscode/ripgrep is resolved from the project's node_modules.
  writeFileSync(path.join(tmp, 'package.json'), '{"type":"module"}');
  execFileSync('ln', ['-s', path.join(projectRoot, 'node_modules'), path.join(tmp, 'node_modules')]);
  return import(pathToFileURL(outfile).href);
}

function load() {
  const files = [path.join(projectRoot, 'fixtures/commands/tldr.jsonl'), path.join(projectRoot, 'fixtures/commands/agent.jsonl'), ...(extra ? [extra] : [])];
  return files.flatMap((file) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line)));
}

function makeRepo() {
  const root = path.join(tmp, 'repo');
  const files = {
    'README.md': '# sample\nneedle here\nanother line\n', 'src/app.js': 'const needle = 1;\nmodule.exports = needle;\n',
    'src/util.js': 'export function util() {}\n', 'docs/guide.md': '# guide\nneedle\n', 'data.json': '{"a": [1, 2], "name": "x"}\n',
    'package.json': '{"name": "sample", "version": "1.0.0"}\n', 'notes.txt': 'one\ntwo\ntwo\nthree\n',
  };
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  }
  const env = { ...process.env, GIT_AUTHOR_NAME: 'alice', GIT_AUTHOR_EMAIL: 'a@e', GIT_COMMITTER_NAME: 'alice', GIT_COMMITTER_EMAIL: 'a@e' };
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: root, env });
  execFileSync('git', ['add', '-A'], { cwd: root, env });
  execFileSync('git', ['commit', '-qm', 'first'], { cwd: root, env });
  writeFileSync(path.join(root, 'README.md'), '# sample\nneedle here\nanother line\nmore\n');
  execFileSync('git', ['commit', '-qam', 'second'], { cwd: root, env });
  return execFileSync('realpath', [root], { encoding: 'utf8' }).trim();
}

/** Paths a read-only command names are made to exist (the measurement is of the policy, not of missing files). */
function plantPaths(root, command) {
  for (const raw of command.split(/\s+/)) {
    const stripped = raw.replace(/^['"]|['"]$/g, '').replace(/[;|&)]+$/, '');
    const word = stripped.startsWith(`${root}/`) ? stripped.slice(root.length + 1) : stripped;
    // A glob names at least one file: dir/*.ext is planted as dir/x.ext.
    const planted = word.replace(/\*\*\//g, '').replace(/\*/g, 'x');
    if (planted.startsWith('-') || planted.startsWith('/') || planted.includes('://') || /[?[\]{}$`~<>=@:\\'"]/.test(planted) || planted.includes('..')) continue;
    if (!planted.includes('/') && !/\.[A-Za-z0-9]{1,6}$/.test(planted)) continue;
    const abs = path.join(root, planted);
    try {
      if (/\.[A-Za-z0-9]{1,6}$/.test(planted)) {
        mkdirSync(path.dirname(abs), { recursive: true });
        if (!existsSync(abs)) writeFileSync(abs, 'needle\n');
      } else mkdirSync(abs, { recursive: true });
    } catch {
      // A path through an existing file: left as it is.
    }
  }
}

// Functions, not constants: the top-level await above runs before any later `const` is initialised.
function headOf(command) {
  return command.replace(/^cd \S+ && /, '').trim().split(/\s+/)[0] ?? '';
}
function isGit(command) {
  return headOf(command) === 'git';
}
function refused(outcome) {
  return outcome.content.startsWith('Command refused');
}

async function measure(lib, rows, root) {
  const programs = await lib.resolvePrograms();
  const bash = lib.createBashTool(programs);
  const git = lib.createGitTool(lib.GIT_BINARY);
  const run = async (command, sandbox) => {
    const tool = isGit(command) ? git : bash;
    const ctx = { root, signal: new AbortController().signal, timeoutMs: TIMEOUT_MS, sandbox };
    return tool.run({ command }, ctx);
  };
  const report = { src: path.relative(projectRoot, src) || '.', escapes: [], groups: {}, piped: {}, suggestions: { given: 0, accepted: 0, rejected: [] }, falseRefusals: [] };
  for (const row of rows) {
    const command = row.command.replaceAll('{ROOT}', root);
    const group = row.source.startsWith('agent:') ? 'agent' : 'tldr';
    if (row.effect !== 'read') {
      for (const sandbox of ['tables', 'kernel']) if (await wouldRunAll(lib, programs, root, command, sandbox)) report.escapes.push(`${sandbox}: ${command}`);
      continue;
    }
    plantPaths(root, command);
    const program = headOf(command);
    // Installed on this machine (the issue's "programs installed here"), whitelisted or not: the same set before and after.
    const installed = ['git', 'rg'].includes(program) || ['/usr/bin', '/bin'].some((dir) => existsSync(`${dir}/${program}`));
    for (const sandbox of ['tables', 'kernel']) {
      const outcome = await run(command, sandbox);
      const usable = !refused(outcome) || (await suggestionAccepted(outcome, run, sandbox, report));
      const key = `${group} ${row.shape === 'piped' ? 'piped' : row.shape === 'chained' ? 'chained' : 'single'} ${sandbox}`;
      const counted = row.shape !== 'single' || (installed && !ASIDE.has(program));
      if (!counted) continue;
      const bucket = (report.groups[key] ??= { total: 0, refused: 0, usable: 0, filtered: 0 });
      bucket.total += 1;
      if (outcome.content.includes('[no shell:')) bucket.filtered += 1;
      if (refused(outcome)) bucket.refused += 1;
      if (usable) bucket.usable += 1;
      if (refused(outcome) && sandbox === 'tables') report.falseRefusals.push(`${group}: ${command} → ${outcome.content.slice(17, 150)}`);
    }
  }
  return report;
}

/** A refusal's backticked suggestions, each run through the tool: usable when one is accepted. */
async function suggestionAccepted(outcome, run, sandbox, report) {
  const suggestions = [...outcome.content.matchAll(/`([^`]+)`/g)].map((m) => m[1]).filter((s) => s.length > 2);
  let any = false;
  for (const suggestion of suggestions) {
    const answer = await run(suggestion, sandbox);
    report.suggestions.given += 1;
    if (!refused(answer)) {
      report.suggestions.accepted += 1;
      any = true;
    } else if (report.suggestions.rejected.length < 20) report.suggestions.rejected.push(suggestion);
  }
  return any;
}

/** Whether the tool would execute every part of a command (checked by the policy only; nothing is run). */
async function wouldRunAll(lib, programs, root, command, sandbox) {
  const parts = lib.splitCompound === undefined ? [{ first: command, stages: [] }] : flatten(lib, lib.splitCompound(command));
  for (const part of parts) {
    // The tool answers `cd ROOT` in a chain itself (nothing runs); anything else must pass the policy.
    if (lib.splitCompound !== undefined && /^cd(\s+\S+)?$/.test(part.first)) continue;
    const verdict = isGit(part.first) ? await lib.checkGitCommand(part.first, root, sandbox) : await lib.checkCommand(part.first, { root, programs });
    if (!verdict.ok) return false;
    // A later stage is checked as one (it reads the stage before it); trees without stages have none.
    for (const stage of part.stages) if (!(await lib.checkCommand(stage, { root, programs, stdin: true })).ok) return false;
  }
  return true;
}

function flatten(lib, compound) {
  if (compound.kind === 'single') return [{ first: compound.command, stages: [] }];
  if (compound.kind === 'pipeline') return [{ first: compound.first, stages: compound.stages }];
  return compound.parts.flatMap((part) => flatten(lib, lib.splitCompound(part.command)));
}

function print(report) {
  const pct = (n, d) => (d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(1)}% (${n}/${d})`);
  process.stdout.write(`command corpus, tools from ${report.src}\n`);
  process.stdout.write(`accepted non-read-only (escapes): ${report.escapes.length}\n`);
  for (const escape of report.escapes) process.stdout.write(`  ESCAPE ${escape}\n`);
  for (const [key, b] of Object.entries(report.groups).sort()) {
    const [, shape] = key.split(' ');
    const figure = shape === 'single' ? `false refusals ${pct(b.refused, b.total)}` : `usable answers ${pct(b.usable, b.total)}${shape === 'piped' ? `, filtered exactly ${pct(b.filtered, b.total)}` : ''}`;
    process.stdout.write(`${key.padEnd(22)} ${figure}\n`);
  }
  process.stdout.write(`suggestions in refusals accepted by the tool: ${pct(report.suggestions.accepted, report.suggestions.given)}\n`);
  for (const s of report.suggestions.rejected) process.stdout.write(`  not accepted: ${s}\n`);
  if (args.includes('--list')) for (const f of report.falseRefusals) process.stdout.write(`  refused: ${f}\n`);
}
