// npm's `prepare`: builds dist/ after `npm install` or `npm ci` in a clone, and makes `npm i -g .` from a fresh clone
// work. npm installs a folder globally as a link to the folder as it is, without installing its dependencies into it
// and never its devDependencies (esbuild among them), then runs this script there; so in a folder without esbuild this
// installs the one runtime dependency (@vscode/ripgrep: the rest is bundled) into it, and what the build needs into a
// temporary folder, each at its locked version, and builds. A registry or tarball install never runs it: the
// published package ships dist/ (built by prepack).
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * devDependencies the build does not need: tests, type checking, mutation testing and the third-party checkers the
 * tests run (the Agent SDK alone is ~400 MB; the SARIF Multitool is a native .NET binary).
 */
const TEST_ONLY =
  /^(@anthropic-ai\/claude-agent-sdk|@stryker-mutator\/.*|@types\/.*|vitest|typescript|ajv-draft-04|@microsoft\/sarif-multitool|@action-validator\/core|@security-alert\/sarif-to-markdown)$/;

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const command = process.env.npm_command;
// `npm pack` and `npm publish` run prepack (the build) and then prepare: building twice would only cost time.
if (command === 'pack' || command === 'publish') process.exit(0);

if (resolvable('esbuild')) {
  run(process.execPath, [path.join(root, 'scripts/build.mjs')], process.env);
  process.exit(0);
}

// The npm that runs this script, with the settings of the global install it is part of removed: the installs below are
// local to this folder and to a temporary one.
const npm = process.env.npm_execpath;
if (!npm) fail('esbuild is not installed and this was not run by npm; run `npm ci` first');
const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_config_(global|prefix|location)$/i.test(key)));
const quiet = ['--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'];
// What the linked command needs at run time: @vscode/ripgrep (everything else is in the bundle). Under `npm ci
// --omit=dev` (the GitHub Action) npm has just installed it: only a global install of the folder has not.
if (!resolvable('@vscode/ripgrep')) run(process.execPath, [npm, 'ci', '--omit=dev', ...quiet], env);
// What the build needs, at the locked versions, in a folder of its own: the devDependencies but the test tools.
const tools = mkdtempSync(path.join(os.tmpdir(), 'spelunk-build-'));
try {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const build = Object.fromEntries(Object.entries(pkg.devDependencies).filter(([name]) => !TEST_ONLY.test(name)));
  writeFileSync(path.join(tools, 'package.json'), JSON.stringify({ name: 'spelunk-build', private: true, dependencies: build }));
  copyFileSync(path.join(root, 'package-lock.json'), path.join(tools, 'package-lock.json'));
  run(process.execPath, [npm, 'install', '--prefix', tools, ...quiet], env);
  const buildEnv = { ...process.env, SPELUNK_BUILD_MODULES: path.join(tools, 'node_modules') };
  run(process.execPath, [path.join(root, 'scripts/build.mjs')], buildEnv);
} finally {
  rmSync(tools, { recursive: true, force: true });
}

function resolvable(name) {
  try {
    createRequire(path.join(root, 'package.json')).resolve(name);
    return true;
  } catch {
    return false;
  }
}

function run(file, args, childEnv) {
  execFileSync(file, args, { cwd: root, env: childEnv, stdio: 'inherit' });
}

function fail(message) {
  process.stderr.write(`spelunk prepare: ${message}\n`);
  process.exit(1);
}
