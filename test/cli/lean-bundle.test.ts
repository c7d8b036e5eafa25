import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBinary } from '../support/binary.js';
import { reply, startMockApi, text, type MockApi } from '../support/mock-api.js';
import { PtySession } from '../support/pty.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

// The start-up bundle (issue 22): what every start reads and hashes stays small, and what moved into chunks still
// works through the built binary when a command needs it.
const DIST = path.resolve(import.meta.dirname, '../../dist');
// 1,050,000 since issue 32/36 (the minimal worlds, the special-file walk, roots, the secrets gate and redactor: about
// 80 KB); the bundle was 946,659 bytes before them and 1,029,366 after; 1,041,550 with the cloud providers (issue 35:
// provider settings, id mapping, the clouds' wording; their SDKs are in vendor-cloud.cjs). 1,100,000 since issue 37: locate's
// content index (src/locate/index/) and git-history signal add ~30 KB; the merged bundle is 1,073,844 bytes.
const MAIN_MAX_BYTES = 1_100_000;
const dist = (name: string): string => readFileSync(path.join(DIST, name), 'latin1');

let api: MockApi | null = null;
afterEach(async () => {
  await api?.close();
  api = null;
});

const repo = useRepo(
  {
    ...APP_FILES,
    'pnpm-workspace.yaml': "packages:\n  - 'web/*'\n",
    'web/site/package.json': '{ "name": "site" }\n',
    'Cargo.toml': '[workspace]\nmembers = ["crates/*"]\n',
    'crates/core/Cargo.toml': '[package]\nname = "core"\n',
  },
  { git: true },
);

describe('the start-up bundle', () => {
  it(`is at most ${MAIN_MAX_BYTES.toLocaleString('en')} bytes, without the YAML and TOML parsers, cli-table3 or the cloud SDKs`, () => {
    expect(statSync(path.join(DIST, 'spelunk-main.cjs')).size).toBeLessThanOrEqual(MAIN_MAX_BYTES);
    const main = dist('spelunk-main.cjs');
    expect(main).toContain('require("./vendor-manifests.cjs")');
    expect(main).not.toMatch(/node_modules\/(yaml|smol-toml|cli-table3)\//);
    // The clouds' SDKs (issue 35) are in vendor-cloud.cjs, read only for a run on Bedrock, Vertex AI or Foundry.
    expect(main).toContain('require("./vendor-cloud.cjs")');
    expect(main).not.toMatch(/node_modules\/(@aws-sdk|@smithy|@aws-crypto|google-auth-library|gaxios|@anthropic-ai\/(bedrock|vertex|foundry)-sdk)\//);
  });

  it('ships cli-table3 once and no emoji table', () => {
    const files = readdirSync(DIST).filter((f) => f.endsWith('.cjs'));
    expect(files.filter((f) => dist(f).includes('node_modules/cli-table3/src/table.js'))).toEqual(['vendor-table.cjs']);
    expect(files.filter((f) => /node_modules\/(emojilib|node-emoji)\//.test(dist(f)))).toEqual([]);
  });

  it('answers a one-shot question without loading undici, the ES module resolver, node:assert or node:readline', async () => {
    // A preload that says at exit which of Node's own modules the process loaded: the run itself is unchanged. undici
    // is Node 20's fetch (20-40 ms); the resolver is what an "exports" map in a resolved package.json loads (~4 ms);
    // node:assert is what yargs checks with (~3 ms; scripts/build/lazy-assert.mjs); node:readline is the REPL's.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'spelunk-undici-'));
    const probe = path.join(dir, 'probe.cjs');
    const modules = [['undici', 'undici'], ['esm resolver', 'esm/resolve'], ['node:assert', 'NativeModule assert'], ['node:readline', 'NativeModule readline']];
    const said = modules.map(([name, part]) => `'${name} loaded: ' + process.moduleLoadList.some((m) => m.includes('${part}')) + '\\n'`);
    writeFileSync(probe, `process.on('exit', () => process.stderr.write(${said.join(' + ')}));\n`);
    try {
      api = await startMockApi({ minCacheTokens: 256 });
      api.enqueue(reply(text('The login is in src/auth.js:4.')));
      const env = { HOME: path.dirname(repo.root), ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, NODE_OPTIONS: `--require ${probe}` };
      const run = await runBinary(['-C', repo.root, 'where is the login?'], { cwd: repo.root, env });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('src/auth.js:4');
      for (const [name] of modules) expect(run.stderr).toContain(`${name} loaded: false`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads YAML and TOML workspace declarations through the chunk', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('done')));
    const run = await runBinary(['-C', repo.root, 'q'], { cwd: repo.root, env: { HOME: path.dirname(repo.root), ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } });
    expect(run.code, run.stderr).toBe(0);
    const system = JSON.stringify(api.requests.at(-1)?.body.system);
    expect(system).toContain('pnpm-workspace.yaml');
    expect(system).toContain('Cargo.toml [workspace]');
  });

  it('draws the REPL usage table through the table chunk', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('The login is in src/auth.js:4.')));
    const pty = new PtySession(['-C', repo.root], { HOME: path.dirname(repo.root), ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url });
    try {
      await pty.waitFor(/\/help for commands[\s\S]*› $/);
      pty.type('where is the login?\r');
      const at = await pty.waitFor(/src\/auth\.js:4/);
      pty.type('/usage\r');
      await pty.waitFor(/┌.*┐/, { from: at });
    } finally {
      pty.kill();
    }
  });

  it('renders a markdown table on a terminal (marked-terminal through the shared table chunk)', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('| file | role |\n|---|---|\n| src/auth.js | login :smile: |\n')));
    const pty = new PtySession(['-C', repo.root, 'which files?'], { HOME: path.dirname(repo.root), ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url });
    try {
      await pty.waitFor(/│ src\/auth\.js │ login :smile: │/);
      expect(await pty.exited).toBe(0);
    } finally {
      pty.kill();
    }
  });
});
