import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { leaked, makeSecretRepo, readTree, type SecretRepo } from '../support/secret-repo.js';
import { ok, useResearcher } from '../mcp/in-process.js';

let repo: SecretRepo;
let api: MockApi;
let state: string;

beforeAll(async () => {
  repo = await makeSecretRepo();
});
afterAll(async () => {
  await repo?.cleanup();
});
afterEach(async () => {
  await api?.close();
  if (state) await fs.rm(state, { recursive: true, force: true });
});

/** Every tool, every form whose output names its places: reads, searches, a credential file, history. */
const CALLS: Array<[string, unknown]> = [
  ['read_file', { path: '.env' }],
  ['read_file', { path: 'deploy.sh' }],
  ['read_file', { path: 'id_rsa' }],
  ['read_file', { path: 'config/credentials.json' }],
  ['bash', { command: 'cat .env' }],
  ['bash', { command: 'head -n 4 id_rsa' }],
  ['bash', { command: "sed -n '2,4p' .env" }],
  ['bash', { command: 'rg -n TOKEN deploy.sh .env' }],
  ['git', { command: 'log -p' }],
  ['git', { command: 'show HEAD~1:old/deploy-old.sh' }],
];

async function run(argv: string[], stdin?: string): Promise<{ code: number; out: string; requests: string; results: string[] }> {
  api = await startMockApi({ minCacheTokens: 256 });
  state = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-secret-state-'));
  api.enqueue(reply(...CALLS.map(([name, input], i) => toolUse(name, input, `toolu_${i}`))), reply(text('There is a GitHub token at `deploy.sh:1`.')));
  const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, XDG_STATE_HOME: state };
  const cli = await runCli(['-C', repo.root, ...argv], { env, cwd: repo.root, ...(stdin === undefined ? {} : { stdin }) });
  const saved = await readTree(state);
  const requests = JSON.stringify(api.requests.map((r) => r.body));
  const last = api.requests.filter((r) => r.path === '/v1/messages').at(-1)?.body.messages?.at(-1)?.content;
  const results = Array.isArray(last) ? last.filter((b) => b.type === 'tool_result').map((b) => String(b.content)) : [];
  return { code: cli.code, out: `${cli.stdout}\n${cli.stderr}\n${saved}`, requests, results };
}

describe('a scripted model through every tool: nothing secret leaves', () => {
  it.each([
    ['one-shot text', ['where are the tokens?']],
    ['one-shot json', ['--output-format', 'json', 'where are the tokens?']],
    ['one-shot stream-json', ['--output-format', 'stream-json', 'where are the tokens?']],
  ])('%s: requests, outputs and saved sessions hold markers, no values', async (_, argv) => {
    const r = await run(argv, `the failing request used ${repo.planted[6]!.value}\n`);
    expect(r.code, r.out).toBe(0);
    if (process.env.SHOW) console.log(r.results.join('\n=====\n'));
    expect(leaked(r.requests, repo.values)).toEqual([]);
    expect(leaked(r.out, repo.values)).toEqual([]);
    expect(r.results).toHaveLength(CALLS.length);
    expect(r.results.some((c) => c.startsWith('Cannot') || c.includes('denied'))).toBe(false);
    expect(r.requests).toContain('[redacted: GitHub token, deploy.sh:1]');
    expect(r.requests).toContain('[redacted: GitHub token, .env:1]');
    expect(r.requests).toContain('DB_PASSWORD=[redacted: value in a credential file, .env:17]');
    expect(r.requests).toContain('[redacted: Anthropic API key, stdin:1]');
    expect(r.requests).toMatch(/\[redacted: GitHub token, old\/deploy-old\.sh:2 \(removed in commit [0-9a-f]{7,12}\)\]/);
    expect(r.requests).toContain('[redacted: private key, id_rsa:2]');
    expect(r.requests).toContain('[redacted: GitHub token, AGENTS.md:2]');
    expect(r.requests).toContain('\\"client_id\\": [redacted: value in a credential file, config/credentials.json:2]');
  });

  it('--allow-secrets lets them through, and says so once on stderr', async () => {
    const r = await run(['--allow-secrets', 'where are the tokens?']);
    expect(r.code, r.out).toBe(0);
    expect(r.requests).toContain(repo.planted[0]!.value);
    expect(r.requests).not.toContain('[redacted: GitHub token, deploy.sh:1]');
    expect(r.out.match(/--allow-secrets: secrets in the repository go to the model/g)).toHaveLength(1);
  });
});

describe('the MCP server and locate', () => {
  const start = useResearcher({ get root() { return repo.root; } });

  it('MCP ask: the requests and the structured result hold markers, no values', async () => {
    const mcp = await start();
    mcp.api.enqueue(reply(...CALLS.map(([name, input], i) => toolUse(name, input, `toolu_${i}`))), reply(text('There is a GitHub token at `deploy.sh:1`.')));
    const result = ok(await mcp.call('ask', { question: 'where are the tokens?' }));
    const requests = JSON.stringify(mcp.api.requests.map((r) => r.body));
    expect(requests).toContain('[redacted: GitHub token, deploy.sh:1]');
    expect(result.citations).toContainEqual(expect.objectContaining({ path: 'deploy.sh', start_line: 1, status: 'ok', excerpt: 'GITHUB_TOKEN=[redacted: GitHub token, deploy.sh:1]' }));
    expect(leaked(requests + JSON.stringify(result) + mcp.stderr(), repo.values)).toEqual([]);
  });

  it('MCP locate: the quoted lines are redacted', async () => {
    const mcp = await start();
    const result = ok(await mcp.call('locate', { question: 'GITHUB_TOKEN SLACK_BOT deploy' }), 'locate');
    expect(JSON.stringify(result)).toContain('[redacted: GitHub token, deploy.sh:1]');
    expect(leaked(JSON.stringify(result), repo.values)).toEqual([]);
  });

  it.each([
    ['redacted', [], false],
    ['--allow-secrets', ['--allow-secrets'], true],
  ])('spelunk locate: %s', async (_, flags, shown) => {
    const r = await runCli(['locate', '-C', repo.root, ...flags, 'GITHUB_TOKEN SLACK_BOT deploy'], { cwd: repo.root });
    expect(r.code, r.stderr).toBe(0);
    expect(leaked(r.stdout, repo.values).length > 0).toBe(shown);
    if (!shown) expect(r.stdout).toContain('[redacted: GitHub token, deploy.sh:1]');
  });
});
