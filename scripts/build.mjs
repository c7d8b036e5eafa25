// Bundles the CLI into dist/ so start-up does not pay for resolving hundreds of unbundled modules: dist/spelunk.js
// (the command, src/launch.ts) runs dist/spelunk-main.cjs (everything else) through V8's code cache.
// @vscode/ripgrep stays external: its binary is found at run time from the installed platform package. So does
// web-tree-sitter (with the @vscode/tree-sitter-wasm grammars): it finds its .wasm beside itself, and both are read
// only when a command asks for symbols. The vendored tags queries are copied to dist/tags/.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, cp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// `npm i -g .` from a fresh clone: scripts/prepare.mjs installs esbuild and the bundled packages into a folder outside
// the checkout and names it here; the bundle resolves packages there as well.
const modules = process.env.SPELUNK_BUILD_MODULES;
const { build: esbuild } = modules ? createRequire(path.join(modules, 'package.json'))('esbuild') : await import('esbuild');
/** Packages whose published file inlines (some of) their dependencies, so esbuild never reads those. */
const INLINES_DEPENDENCIES = new Set(['marked-terminal']);

/** Every file each build bundled (esbuild's metafile inputs), for the third-party notices. */
const bundledInputs = new Set();
const build = async (options) => {
  const result = await esbuild({ ...options, metafile: true, ...(modules ? { nodePaths: [modules] } : {}) });
  for (const input of Object.keys(result.metafile.inputs)) bundledInputs.add(input);
  return result;
};

/**
 * string-width (yargs and cliui use it to lay out --help) builds an Intl.Segmenter and \p{RGI_Emoji} regexes when
 * its module is evaluated: ~30 ms of ICU set-up on every start, for text that only --help prints. Each ESM import of
 * it becomes a stub that evaluates the real module on the first call (esbuild defers a module reached through
 * require() until that require runs). CommonJS requires of it are left alone.
 */
const lazyStringWidth = {
  name: 'lazy-string-width',
  setup(b) {
    b.onResolve({ filter: /^string-width$/ }, async (args) => {
      if (args.kind !== 'import-statement') return undefined;
      const real = await b.resolve(args.path, { kind: 'require-call', importer: args.importer, resolveDir: args.resolveDir });
      if (real.errors.length > 0) return { errors: real.errors };
      return { path: real.path, namespace: 'lazy-string-width' };
    });
    b.onLoad({ filter: /.*/, namespace: 'lazy-string-width' }, (args) => ({
      contents: `export default function stringWidth(...args) { return require(${JSON.stringify(args.path)}).default(...args); }\n`,
      resolveDir: path.dirname(args.path),
      loader: 'js',
    }));
  },
};

/**
 * yargs' platform shim imports `notStrictEqual` and `strictEqual` from node:assert and calls them while parsing
 * (every command description passes through one). Loading node:assert costs ~3 ms of every start (its AssertionError
 * and helpers, measured under --cpu-prof) for checks that pass: scripts/build/lazy-assert.mjs decides as node:assert
 * does and loads it only to throw.
 */
const lazyAssert = {
  name: 'lazy-assert',
  setup(b) {
    const standIn = fileURLToPath(new URL('./build/lazy-assert.mjs', import.meta.url));
    b.onResolve({ filter: /^assert$/ }, (args) =>
      args.importer.includes(`${path.sep}node_modules${path.sep}yargs${path.sep}`) ? { path: standIn } : undefined,
    );
  },
};

/**
 * Packages that only some commands need, each group built into a file of its own beside the bundle: the MCP server's
 * SDK (with zod and ajv) for `spelunk mcp`; the markdown renderer (marked-terminal pulls in highlight.js, ~2 MB) for
 * answers shown on a terminal; the YAML and TOML parsers (~280 KiB), which only the map's workspace reader uses, for a
 * repository that declares its workspaces in such a file; cli-table3, for the REPL's /cost and the audit tables; the
 * secret scanner, for the first tool result or instructions file. A
 * plain one-shot question reads none of them: a smaller bundle to read, hash and deserialise on every start. In the
 * bundle each import of such a package becomes a one-line stub that requires the vendor file when the importing module
 * is first evaluated (those modules are reached through import(), which the bundle defers); the vendor files are built
 * afterwards from exactly the specifiers the stubs name.
 */
const VENDOR = {
  mcp: /^(@modelcontextprotocol\/sdk|zod|ajv|ajv-formats)(\/|$)/,
  render: /^(marked|marked-terminal|supports-hyperlinks)(\/|$)/,
  manifests: /^(yaml|smol-toml)(\/|$)/,
  table: /^cli-table3$/,
  // secretlint and its recommended preset (~1 MB with node-forge): loaded by the first text that is scanned for
  // secrets (src/secrets/scan.ts, reached through import()), not at start.
  secrets: /^@secretlint\//,
  // Claude on Bedrock, Vertex AI and Foundry: Anthropic's cloud SDKs with the AWS and Google libraries they sign with
  // (several MB, with a copy of @anthropic-ai/sdk of their own), loaded by src/agent/cloud.ts for a run on a cloud only.
  cloud: /^(@anthropic-ai\/(bedrock|vertex|foundry)-sdk|google-auth-library)(\/|$)/,
};
/**
 * Stubs that load their group on first use instead: the text view imports usage.ts (and with it cli-table3) on every
 * start, but builds a table only for /cost. cli-table3's export is a class, so the stub is a constructor that returns
 * an instance of the real one.
 */
const ON_FIRST_USE = {
  table: (spec) =>
    `module.exports = function Table(options) { return new (require('./vendor-table.cjs')[${JSON.stringify(spec)}])(options); };\n`,
};
const vendorSpecifiers = Object.fromEntries(Object.keys(VENDOR).map((chunk) => [chunk, new Set()]));

const vendorStubs = {
  name: 'vendor-stubs',
  setup(b) {
    for (const [chunk, filter] of Object.entries(VENDOR)) {
      b.onResolve({ filter }, (args) => {
        if (args.importer.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        vendorSpecifiers[chunk].add(args.path);
        return { path: args.path, namespace: `vendor-${chunk}` };
      });
      b.onLoad({ filter: /.*/, namespace: `vendor-${chunk}` }, (args) => ({
        contents: ON_FIRST_USE[chunk]?.(args.path) ?? `module.exports = require('./vendor-${chunk}.cjs')[${JSON.stringify(args.path)}];\n`,
        loader: 'js',
      }));
    }
    b.onResolve({ filter: /^\.\/vendor-[a-z]+\.cjs$/ }, (args) => ({ path: args.path, external: true }));
  },
};

/**
 * For the vendor files: marked-terminal's tables use the one cli-table3 of vendor-table.cjs rather than a second copy;
 * and node-emoji (with emojilib, ~310 KiB of emoji names) is left out. marked-terminal calls its `get` only with the
 * `emoji` option on, which src/output/markdown.ts turns off; the stand-in finds no emoji, so text would stay as written.
 */
const vendorShared = {
  name: 'vendor-shared',
  setup(b) {
    b.onResolve({ filter: /^cli-table3$/ }, () => ({ path: 'cli-table3', namespace: 'shared-table' }));
    const table = "module.exports = require('./vendor-table.cjs')['cli-table3'];\n";
    b.onLoad({ filter: /.*/, namespace: 'shared-table' }, () => ({ contents: table, loader: 'js' }));
    b.onResolve({ filter: /^node-emoji$/ }, () => ({ path: 'node-emoji', namespace: 'no-emoji' }));
    b.onLoad({ filter: /.*/, namespace: 'no-emoji' }, () => ({ contents: 'export function get() { return undefined; }\n', loader: 'js' }));
    b.onResolve({ filter: /^\.\/vendor-[a-z]+\.cjs$/ }, (args) => ({ path: args.path, external: true }));
  },
};

await rm(new URL('../dist/', import.meta.url), { recursive: true, force: true });
/** What every file of dist/ is: one CommonJS file for node 20, its packages inlined (but for each build's externals). */
const NODE_FILE = { bundle: true, format: 'cjs', platform: 'node', target: 'node20', legalComments: 'none', logLevel: 'warning' };
// The CLI as one CommonJS file (vm.Script, and so V8's code cache, runs scripts, not ES modules); esbuild wraps the
// SDK's modules so they are evaluated when the first request needs them, not at start.
await build({
  ...NODE_FILE,
  entryPoints: { 'spelunk-main': 'src/bin.ts' },
  outdir: 'dist',
  outExtension: { '.js': '.cjs' },
  external: ['@vscode/ripgrep', 'web-tree-sitter'],
  // A script run by vm.Script has no module loader for import(): the one left (@vscode/ripgrep) becomes a require().
  supported: { 'dynamic-import': false },
  // yargs' ESM build resolves files from import.meta.url, which CommonJS lacks: give it the bundle's own URL.
  define: { 'import.meta.url': '__spelunkImportMetaUrl' },
  banner: { js: "var __spelunkImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  plugins: [lazyStringWidth, lazyAssert, vendorStubs],
  // The SDK's `Headers` and `FormData` from src/agent/fetch-globals.ts instead of Node's lazy globals, which load all
  // of undici on first touch (the requests go through src/agent/http-fetch.ts).
  inject: ['src/agent/fetch-globals.ts'],
  minifySyntax: true,
  minifyWhitespace: true,
});
// The bundle in ASCII, so the launcher reads it as a one-byte string (src/launch.ts). esbuild escapes strings,
// templates and identifiers already; what is left is in comments and regular expression literals, where a \uXXXX
// escape means the same character (astral characters as surrogate pairs, which a /u expression also reads as one).
// A character right after a backslash would change meaning: the build refuses it.
{
  const file = new URL('../dist/spelunk-main.cjs', import.meta.url);
  const text = await readFile(file, 'utf8');
  const escaped = text.replace(/[^\x00-\x7f]/g, (ch, at) => {
    if (text[at - 1] === '\\') throw new Error(`build: an escaped non-ASCII character at offset ${at} of the bundle; write it as \\u${ch.charCodeAt(0).toString(16)} in the source`);
    return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
  await writeFile(file, escaped);
}
// Each vendor file exports an object keyed by the specifiers the bundle's stubs require.
for (const [chunk, specifiers] of Object.entries(vendorSpecifiers)) {
  if (specifiers.size === 0) throw new Error(`build: no import of the ${chunk} vendor group was seen; update VENDOR in scripts/build.mjs`);
  const entries = [...specifiers].sort().map((spec) => `  ${JSON.stringify(spec)}: require(${JSON.stringify(spec)}),`);
  await build({
    stdin: { contents: `module.exports = {\n${entries.join('\n')}\n};\n`, resolveDir: process.cwd(), sourcefile: `vendor-${chunk}.js`, loader: 'js' },
    ...NODE_FILE,
    outfile: `dist/vendor-${chunk}.cjs`,
    external: ['@vscode/ripgrep'],
    define: { 'import.meta.url': '__spelunkImportMetaUrl' },
    banner: { js: "var __spelunkImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
    // The table group is the one the others share: it must not stub its own package.
    plugins: chunk === 'table' ? [] : [vendorShared],
  });
}
// Read beside the bundle at run time (src/symbols/index.ts resolves ./tags/ from its own URL, which is the bundle's).
await cp(new URL('../src/symbols/tags/', import.meta.url), new URL('../dist/tags/', import.meta.url), { recursive: true });
// The command itself: reads the bundle and runs it through the code cache (src/launch.ts), keyed by the bundle's hash
// computed here, once, rather than on every start. CommonJS, like the bundle: an ES module entry sets up Node's ESM
// loader first (~10 ms of main-thread time per start, measured); dist/package.json makes dist/spelunk.js CommonJS
// under this package's "type": "module".
const bundleSha256 = createHash('sha256').update(await readFile(new URL('../dist/spelunk-main.cjs', import.meta.url))).digest('hex');
await writeFile(new URL('../dist/package.json', import.meta.url), '{ "type": "commonjs" }\n');
// The cold index build's worker thread (src/locate/index/build-worker.ts), found beside the bundle at run time.
await build({ ...NODE_FILE, entryPoints: { 'build-worker': 'src/locate/index/build-worker.ts' }, outdir: 'dist', outExtension: { '.js': '.cjs' } });
await build({
  ...NODE_FILE,
  entryPoints: { spelunk: 'src/launch.ts' },
  define: { __SPELUNK_BUNDLE_SHA256__: JSON.stringify(bundleSha256), 'import.meta.url': '__spelunkLaunchUrl' },
  banner: { js: "var __spelunkLaunchUrl = require('node:url').pathToFileURL(__filename).href;" },
  outdir: 'dist',
});
await chmod(new URL('../dist/spelunk.js', import.meta.url), 0o755);
await writeFile(new URL('../dist/THIRD-PARTY-NOTICES.txt', import.meta.url), thirdPartyNotices([...bundledInputs]));

/**
 * The bundles carry code of other packages, whose licences (MIT, ISC, BSD, Apache-2.0) ask that their copyright notice
 * travel with it; minified bundles keep no comments, so each bundled package's name, version, licence and licence file
 * are collected here, from the packages esbuild actually read.
 */
function thirdPartyNotices(inputs) {
  const packages = new Map();
  for (const input of inputs) {
    // A plugin's namespace prefixes its inputs (`lazy-string-width:/…/string-width/index.js`); stubs have no file.
    const file = input.replace(/^[a-z-]+:(?=\/)/, '');
    if (/^[a-z-]+:/.test(file)) continue;
    const dir = packageDir(path.resolve(file));
    if (dir !== null && !packages.has(dir)) packages.set(dir, JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')));
  }
  // A package may ship a prebuilt file with its own dependencies inlined (marked-terminal's index.cjs carries chalk,
  // cli-highlight and highlight.js): for those, the declared dependencies esbuild never read are listed too, transitively.
  const queue = [...packages].filter(([, pkg]) => INLINES_DEPENDENCIES.has(pkg.name)).map(([dir]) => dir);
  while (queue.length > 0) {
    const dir = queue.shift();
    for (const name of Object.keys(packages.get(dir).dependencies ?? {})) {
      const found = installedDir(dir, name);
      if (found === null || packages.has(found)) continue;
      packages.set(found, JSON.parse(readFileSync(path.join(found, 'package.json'), 'utf8')));
      queue.push(found);
    }
  }
  const seen = new Set();
  const entries = [];
  for (const [dir, pkg] of [...packages].sort(([, a], [, b]) => a.name.localeCompare(b.name))) {
    if (seen.has(`${pkg.name}@${pkg.version}`)) continue;
    seen.add(`${pkg.name}@${pkg.version}`);
    const file = readdirSync(dir).find((name) => /^(licen[cs]e|copying|notice)(\.|$)/i.test(name));
    const author = typeof pkg.author === 'string' ? pkg.author : pkg.author?.name;
    const text = file === undefined ? `(no licence file in the package; its package.json says ${pkg.license ?? 'nothing'}${author ? `, author ${author}` : ''})` : readFileSync(path.join(dir, file), 'utf8').trim();
    entries.push(`${pkg.name}@${pkg.version} (${typeof pkg.license === 'string' ? pkg.license : 'see below'})\n\n${text}\n`);
  }
  const head = `spelunk's dist/ bundles code from these ${entries.length} packages. Their licences and notices follow.\n`;
  return [head, ...entries].join(`\n${'-'.repeat(80)}\n\n`);
}

/** Where Node would find package `name` from inside package directory `from`, or null. */
function installedDir(from, name) {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(dir) === dir) return null;
  }
}

/** The root of the installed package a bundled file belongs to (the innermost node_modules/<name> or <@scope/name>). */
function packageDir(file) {
  const parts = file.split(path.sep);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return null;
  const length = parts[at + 1]?.startsWith('@') ? 2 : 1;
  return parts.slice(0, at + 1 + length).join(path.sep);
}
