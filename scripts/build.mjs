// Bundles the CLI into dist/ so start-up does not pay for resolving hundreds of unbundled modules.
// The SDK lands in its own chunk (dynamic import) and loads while the repository listing runs.
// @vscode/ripgrep stays external: its binary is found at run time from the installed platform package.
import { build } from 'esbuild';
import { chmod, rm } from 'node:fs/promises';

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
  // Bundled CommonJS dependencies call require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __spelunkRequire } from 'node:module'; const require = __spelunkRequire(import.meta.url);" },
  legalComments: 'none',
  logLevel: 'warning',
});
await chmod(new URL('../dist/spelunk.js', import.meta.url), 0o755);
