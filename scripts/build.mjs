// Bundles the CLI into dist/ so start-up does not pay for resolving hundreds of unbundled modules.
// The SDK lands in its own chunk (dynamic import) and loads while the repository listing runs.
// @vscode/ripgrep stays external: its binary is found at run time from the installed platform package.
import { build } from 'esbuild';
import { chmod, rm } from 'node:fs/promises';
import path from 'node:path';

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

await rm(new URL('../dist/', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: { spelunk: 'src/bin.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['@vscode/ripgrep'],
  plugins: [lazyStringWidth],
  // Bundled CommonJS dependencies call require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __spelunkRequire } from 'node:module'; const require = __spelunkRequire(import.meta.url);" },
  legalComments: 'none',
  logLevel: 'warning',
});
await chmod(new URL('../dist/spelunk.js', import.meta.url), 0o755);
