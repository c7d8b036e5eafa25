// Loads the project's local Messages API server (test/support/mock-api.ts) by bundling it on the fly: one server,
// the one the test suite validates, rather than a copy that could drift.
import { build } from 'esbuild';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** Bundles the mock server (and the cache accounting's token estimate) into `dir` and imports it. */
export async function loadMockApi(projectRoot, dir) {
  const support = path.join(projectRoot, 'test', 'support');
  const outfile = path.join(dir, 'mock-api.mjs');
  await build({
    stdin: {
      contents:
        `export * from ${JSON.stringify(path.join(support, 'mock-api.ts'))};\n` +
        `export { tokensOf, promptTokens } from ${JSON.stringify(path.join(support, 'mock-api-cache.ts'))};\n`,
      resolveDir: support,
      loader: 'ts',
      sourcefile: 'bench-mock-entry.ts',
    },
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // The cloud stand-ins' CommonJS dependencies (@smithy, for Bedrock's signatures) require node's built-ins, which an
    // ES module bundle cannot do without a require of its own ("Dynamic require of \"buffer\" is not supported").
    banner: { js: "import { createRequire as __benchRequire } from 'node:module'; const require = __benchRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  return import(pathToFileURL(outfile).href);
}
