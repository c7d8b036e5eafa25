import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reply, startMockApi, text, toolUse } from '../support/mock-api.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

/**
 * The package as a consumer gets it: `npm pack` of a copy of the checkout (prepack builds dist/ there), then the
 * tarball installed globally into a temporary prefix, and run through `npm exec` (npx), each with a fresh npm cache and
 * home. No network: the runtime dependency (@vscode/ripgrep and its platform package, packed from node_modules) comes
 * from a registry served by this test; nothing else is fetched, so a consumer needs neither esbuild nor the bundled
 * packages.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; bin: Record<string, string>; dependencies: Record<string, string> };
const run = promisify(execFile);
const repo = useRepo(APP_FILES, { git: true });

let tmp: string;
let tarball: string;
let registry: Server;
let registryUrl: string;

/** npm with nothing from the caller's environment or configuration: a fresh home and cache, the local registry. */
function npm(args: string[], cwd: string) {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: path.join(tmp, 'home') };
  const flags = ['--cache', path.join(tmp, 'cache'), '--registry', registryUrl, '--no-audit', '--no-fund', '--no-update-notifier'];
  // npm's own flags go before a `--`: what follows it is the command's (spelunk refuses flags it does not know).
  const end = args.indexOf('--');
  const argv = end < 0 ? [...args, ...flags] : [...args.slice(0, end), ...flags, ...args.slice(end)];
  return run('npm', argv, { cwd, env, maxBuffer: 16 << 20 });
}

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-package-'));
  await fs.mkdir(path.join(tmp, 'home'));
  registry = await serveRegistry(path.join(tmp, 'registry'));
  registryUrl = `http://127.0.0.1:${(registry.address() as AddressInfo).port}/`;
  // A copy of what a clone holds, with this checkout's node_modules: packing it builds dist/ there, not here, where
  // other test files run the built binary.
  const copy = path.join(tmp, 'checkout');
  await fs.mkdir(copy);
  for (const entry of ['package.json', 'package-lock.json', 'README.md', 'LICENSE', 'tsconfig.json', 'bin', 'schema', 'scripts', 'src']) {
    await fs.cp(path.join(ROOT, entry), path.join(copy, entry), { recursive: true });
  }
  await fs.symlink(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
  const { stdout } = await npm(['pack', '--json', '--pack-destination', tmp], copy);
  tarball = path.join(tmp, (JSON.parse(stdout) as Array<{ filename: string }>)[0]!.filename);
}, 120_000);

afterAll(async () => {
  registry?.close();
  await fs.rm(tmp, { recursive: true, force: true });
});

describe(`the published package (${pkg.name})`, () => {
  it('holds the built command, the schemas and the README, and no sources', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout.trim().split('\n').sort();
    expect(files).toEqual(
      expect.arrayContaining(['package/dist/spelunk.js', 'package/dist/spelunk-main.cjs', 'package/dist/vendor-mcp.cjs', 'package/dist/vendor-render.cjs', 'package/schema/result.schema.json', 'package/README.md', 'package/package.json']),
    );
    expect(files.filter((f) => /^package\/(src|test|scripts|node_modules)\//.test(f))).toEqual([]);
    expect(pkg.bin).toEqual({ spelunk: 'bin/spelunk.cjs' });
    expect(files).toContain('package/bin/spelunk.cjs');
    // Everything else is bundled into dist/: a consumer installs ripgrep and the tree-sitter runtime, nothing more.
    expect(Object.keys(pkg.dependencies)).toEqual(['@vscode/ripgrep', '@vscode/tree-sitter-wasm', 'web-tree-sitter']);
  });

  it('installed globally from the tarball into a fresh prefix: `spelunk` runs, answers a question, uses ripgrep', async () => {
    const prefix = path.join(tmp, 'prefix');
    await npm(['install', '--global', '--prefix', prefix, tarball], tmp);
    const bin = path.join(prefix, 'bin', 'spelunk');
    const env = { PATH: '/usr/bin:/bin', HOME: path.join(tmp, 'home') };
    expect((await run(bin, ['--version'], { env })).stdout).toBe(`${pkg.version}\n`);
    const api = await startMockApi({ minCacheTokens: 256 });
    try {
      api.enqueue(reply(toolUse('bash', { command: 'rg -n exec src' })), reply(text('src/auth.js:4 passes user input to exec.')));
      const { stdout } = await run(bin, ['-C', repo.root, '--output-format', 'json', 'where is exec called?'], { env: { ...env, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } });
      const result = JSON.parse(stdout) as { subtype: string; tool_calls: Array<{ is_error: boolean }> };
      expect(result.subtype).toBe('success');
      expect(result.tool_calls).toEqual([expect.objectContaining({ is_error: false })]);
      expect(JSON.stringify(api.requests.at(-1)?.body.messages)).toContain("exec('grep ' + user");
    } finally {
      await api.close();
    }
  }, 120_000);

  it('npx (npm exec) of the tarball runs `spelunk`', async () => {
    const { stdout } = await npm(['exec', '--yes', `--package=${tarball}`, '--', 'spelunk', '--version'], tmp);
    expect(stdout).toBe(`${pkg.version}\n`);
  }, 60_000);
});

/**
 * A registry holding only the package's dependencies (@vscode/ripgrep and the platform package installed here, and
 * the tree-sitter packages), packed from node_modules. Other
 * platforms' packages are 404s: npm skips an optional dependency it cannot fetch, as it skips one for another platform.
 */
async function serveRegistry(dir: string): Promise<Server> {
  await fs.mkdir(dir, { recursive: true });
  const ripgrep = (await fs.readdir(path.join(ROOT, 'node_modules', '@vscode'))).filter((n) => n.startsWith('ripgrep')).map((n) => `@vscode/${n}`);
  // The symbol layer's runtime packages (not bundled: web-tree-sitter finds its .wasm beside itself).
  const names = [...ripgrep, '@vscode/tree-sitter-wasm', 'web-tree-sitter'];
  const packages = new Map<string, { manifest: Record<string, unknown>; file: string }>();
  for (const name of names) {
    const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir, path.join(ROOT, 'node_modules', name)], { env: { PATH: process.env.PATH ?? '', HOME: dir } });
    const file = path.join(dir, (JSON.parse(stdout) as Array<{ filename: string }>)[0]!.filename);
    packages.set(name, { manifest: JSON.parse(await fs.readFile(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')), file });
  }
  const server = createServer((req, res) => {
    const url = decodeURIComponent(req.url ?? '/').slice(1);
    const tgz = [...packages.values()].find((p) => url === `tarballs/${path.basename(p.file)}`);
    if (tgz) return void fs.readFile(tgz.file).then((body) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body));
    const found = packages.get(url);
    if (!found) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    void fs.readFile(found.file).then((body) => {
      const version = String(found.manifest['version']);
      const dist = { tarball: `http://${req.headers.host}/tarballs/${path.basename(found.file)}`, integrity: `sha512-${createHash('sha512').update(body).digest('base64')}` };
      const packument = { name: url, 'dist-tags': { latest: version }, versions: { [version]: { ...found.manifest, dist } } };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(packument));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
