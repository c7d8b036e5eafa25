import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runBinary } from '../support/binary.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { PtySession } from '../support/pty.js';
import { leaked, makeSecretRepo, type SecretRepo } from '../support/secret-repo.js';
import { makeRepo } from '../support/temp-repo.js';
import { plantedSecrets } from '../support/planted-secrets.js';

// The built binary (npm run build): the REPL front end, and the scanner kept off the start path.
let repo: SecretRepo;
let api: MockApi | null = null;
beforeAll(async () => {
  repo = await makeSecretRepo();
});
afterAll(async () => {
  await repo?.cleanup();
});
afterEach(async () => {
  await api?.close();
  api = null;
});

describe('the REPL', () => {
  it('a question whose tools read the secrets: the terminal and the requests show markers, no values', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('read_file', { path: '.env' }), toolUse('bash', { command: 'rg -n TOKEN deploy.sh' })), reply(text('The token is at `deploy.sh:1`.')));
    const home = mkdtempSync(path.join(os.tmpdir(), 'spelunk-secret-home-'));
    const pty = new PtySession(['-C', repo.root, '--verbose'], { HOME: home, XDG_STATE_HOME: home, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url });
    try {
      await pty.waitFor(/\/help for commands[\s\S]*› $/);
      pty.type('where are the tokens?\r');
      await pty.waitFor(/deploy\.sh:1/);
      await pty.waitFor(/› $/, { from: 1 });
      const requests = JSON.stringify(api.requests.map((r) => r.body));
      expect(requests).toContain('[redacted: GitHub token, .env:1]');
      expect(leaked(requests + pty.screen(), repo.values)).toEqual([]);
    } finally {
      pty.kill();
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('secretlint is loaded on the first scan, not at start', () => {
  const probeDir = mkdtempSync(path.join(os.tmpdir(), 'spelunk-secret-probe-'));
  const probe = path.join(probeDir, 'probe.cjs');
  writeFileSync(probe, "process.on('exit', () => process.stderr.write('scanner loaded: ' + Object.keys(require.cache).some((k) => k.endsWith('vendor-secrets.cjs')) + '\\n'));\n");
  afterAll(() => rmSync(probeDir, { recursive: true, force: true }));

  it.each([
    ['a question answered without tools, no AGENTS.md', false, {}, [reply(text('Nothing to read.'))]],
    ['an AGENTS.md of prose, no tools', false, { 'AGENTS.md': '# Agents\nRun npm test before a commit.\n' }, [reply(text('Nothing to read.'))]],
    ['an AGENTS.md holding a token', true, { 'AGENTS.md': `# Agents\nToken: ${plantedSecrets(8)[0]!.value}\n` }, [reply(text('Nothing to read.'))]],
    ['a question with one read_file of a file with a long token-like run', true, { 'src/hash.js': 'export const h = "d41d8cd98f00b204e9800998ecf8427e";\n' }, [reply(toolUse('read_file', { path: 'src/hash.js' })), reply(text('src/hash.js:1.'))]],
    ['a question with one read_file of plain code', false, {}, [reply(toolUse('read_file', { path: 'src/app.js' })), reply(text('Port 8080, src/app.js:1.'))]],
  ])('%s → loaded: %s', async (_, loaded, files, replies) => {
    const plain = await makeRepo({ 'src/app.js': 'export const port = 8080;\n', ...files }, { git: true });
    try {
      api = await startMockApi({ minCacheTokens: 256 });
      api.enqueue(...replies);
      const env = { HOME: path.dirname(plain.root), ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, NODE_OPTIONS: `--require ${probe}` };
      const run = await runBinary(['-C', plain.root, 'what port?'], { cwd: plain.root, env });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain(`scanner loaded: ${loaded}`);
    } finally {
      await plain.cleanup();
    }
  });
});
