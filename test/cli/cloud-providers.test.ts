import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runBinary } from '../support/binary.js';
import { reply, startMockApi, text, toolUse, type CloudStandIn, type MockApi, type RecordedRequest } from '../support/mock-api.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

// Claude on Amazon Bedrock, Vertex AI and Microsoft Foundry (issue 35), through the built binary (the clouds' SDKs are
// in dist/vendor-cloud.cjs) against local stand-ins of each cloud's endpoint (test/support/mock-api-cloud.ts): the
// path, model id, credential and stream framing each cloud takes, in front of the same mock model.

const repo = useRepo(APP_FILES, { git: true });
const scratch = mkdtempSync(path.join(os.tmpdir(), 'spelunk-cloud-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let api: MockApi | null = null;
afterEach(async () => {
  await api?.close();
  api = null;
});

/**
 * The environment of every run: HOME, the AWS config and credential files and Google's gcloud folder point at an empty
 * scratch folder, and the EC2 metadata service is off, so no credential chain reads the account's files or the network.
 */
const base = (): Record<string, string> => ({
  HOME: scratch,
  AWS_CONFIG_FILE: path.join(scratch, 'no-aws-config'),
  AWS_SHARED_CREDENTIALS_FILE: path.join(scratch, 'no-aws-credentials'),
  AWS_EC2_METADATA_DISABLED: 'true',
  CLOUDSDK_CONFIG: path.join(scratch, 'no-gcloud'),
  NO_PROXY: '127.0.0.1',
});

const BEDROCK: CloudStandIn = { kind: 'bedrock', region: 'eu-west-1', accessKeyId: 'AKIDSPELUNKTEST', secretAccessKey: 'not-a-real-secret' };
const bedrockEnv = (url: string): Record<string, string> => ({
  ...base(),
  CLAUDE_CODE_USE_BEDROCK: '1',
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'AKIDSPELUNKTEST',
  AWS_SECRET_ACCESS_KEY: 'not-a-real-secret',
  ANTHROPIC_BEDROCK_BASE_URL: url,
});

const VERTEX: CloudStandIn = { kind: 'vertex', project: 'spelunk-test', region: 'us-east5', token: 'ya29.stand-in', subjectToken: 'oidc-subject' };
/** A workload-identity credential file (`external_account`): the subject token from a file, traded at the stand-in. */
function vertexEnv(url: string): Record<string, string> {
  const subject = path.join(scratch, 'oidc-token');
  writeFileSync(subject, 'oidc-subject');
  const credentials = path.join(scratch, 'wif.json');
  writeFileSync(
    credentials,
    JSON.stringify({
      type: 'external_account',
      audience: '//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/ci/providers/github',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      token_url: `${url}/token`,
      credential_source: { file: subject },
    }),
  );
  return {
    ...base(),
    CLAUDE_CODE_USE_VERTEX: '1',
    CLOUD_ML_REGION: 'us-east5',
    ANTHROPIC_VERTEX_PROJECT_ID: 'spelunk-test',
    GOOGLE_APPLICATION_CREDENTIALS: credentials,
    ANTHROPIC_VERTEX_BASE_URL: url,
  };
}

const FOUNDRY: CloudStandIn = { kind: 'foundry', apiKey: 'foundry-test-key' };
const foundryEnv = (url: string): Record<string, string> => ({
  ...base(),
  CLAUDE_CODE_USE_FOUNDRY: '1',
  ANTHROPIC_FOUNDRY_API_KEY: 'foundry-test-key',
  ANTHROPIC_FOUNDRY_BASE_URL: url,
});

/** One json question with a tool call on the cloud; the requests that reached the model. */
async function ask(cloud: CloudStandIn, env: (url: string) => Record<string, string>, args: string[]) {
  api = await startMockApi({ minCacheTokens: 256, cloud });
  api.enqueue(reply(toolUse('read_file', { path: 'src/auth.js' })), reply(text('The login is in src/auth.js:4.')));
  const run = await runBinary(['-C', repo.root, '--output-format', 'json', ...args, 'where is the login?'], { cwd: repo.root, env: env(api.url) });
  const answered = api.requests.filter((r) => r.status === 200 && r.usage !== undefined);
  return { run, answered, result: run.stdout.trim() === '' ? null : JSON.parse(run.stdout) };
}

describe('a one-shot question on each cloud, with a tool call', () => {
  it.each([
    // [cloud, env, -m, path of the requests, model id the cloud got]
    ['bedrock', BEDROCK, bedrockEnv, 'claude-sonnet-4-5', '/model/global.anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream', 'global.anthropic.claude-sonnet-4-5-20250929-v1:0'],
    ['bedrock, an inference profile given as is', BEDROCK, bedrockEnv, 'eu.anthropic.claude-haiku-4-5-20251001-v1:0', '/model/eu.anthropic.claude-haiku-4-5-20251001-v1:0/invoke-with-response-stream', 'eu.anthropic.claude-haiku-4-5-20251001-v1:0'],
    ['vertex', VERTEX, vertexEnv, 'claude-sonnet-4-5', '/projects/spelunk-test/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict', 'claude-sonnet-4-5@20250929'],
    ['vertex, an alias', VERTEX, vertexEnv, 'haiku', '/projects/spelunk-test/locations/us-east5/publishers/anthropic/models/claude-haiku-5-5:streamRawPredict', 'claude-haiku-5-5'],
    ['foundry', FOUNDRY, foundryEnv, 'claude-sonnet-4-6', '/v1/messages', 'claude-sonnet-4-6'],
  ] as const)('%s: the mapped id in the path, cache breakpoints kept, usage and cost in the result', async (_name, cloud, env, model, wirePath, wireModel) => {
    const { run, answered, result } = await ask(cloud, env, ['-m', model]);
    expect(run.code, run.stderr).toBe(0);
    expect(answered.map((r) => [r.path, r.body.model])).toEqual([
      [wirePath, wireModel],
      [wirePath, wireModel],
    ]);
    const [first, second] = answered as [RecordedRequest, RecordedRequest];
    // The request is the Messages API's: a breakpoint after the system prompt (tools come before it) and in the conversation.
    expect((first.body.system as Array<{ cache_control?: unknown }>).at(-1)!.cache_control).toEqual({ type: 'ephemeral' });
    expect(JSON.stringify(second.body.messages)).toContain('"cache_control"');
    expect(second.usage!.cache_read_input_tokens).toBeGreaterThan(0);
    // The cloud's usage reaches the result with the same fields, priced at the model's list prices.
    expect(result).toMatchObject({ subtype: 'success', is_error: false, num_turns: 2 });
    expect(result.result).toContain('src/auth.js:4');
    expect(result.tool_calls).toEqual([expect.objectContaining({ name: 'read_file', is_error: false })]);
    const reported = answered.reduce((sum, r) => sum + r.usage!.output_tokens, 0);
    expect(result.usage.output_tokens).toBe(reported);
    expect(result.usage.cache_read_input_tokens).toBe(second.usage!.cache_read_input_tokens);
    expect(result.total_cost_usd).toBeGreaterThan(0);
  });

  it('bedrock: the SigV4 signature is checked by the stand-in (a wrong secret is refused with 403, said in one line)', async () => {
    const { run, answered } = await ask(BEDROCK, (url) => ({ ...bedrockEnv(url), AWS_SECRET_ACCESS_KEY: 'wrong' }), ['-m', 'claude-sonnet-4-5']);
    expect(run.code).toBe(1);
    expect(answered).toEqual([]);
    expect(api!.requests.at(-1)!.error).toBe('signature does not match the request (SigV4)');
    expect(run.stderr).toContain('API 403');
    expect(run.stderr).toContain('check the AWS credentials');
  });

  it('bedrock: the stream\'s frames carry CRC32s the SDK checks (a wrong one fails the answer, nothing is taken from it)', async () => {
    const { run, result } = await ask({ ...BEDROCK, badCrc: true } as CloudStandIn, bedrockEnv, ['-m', 'claude-sonnet-4-5']);
    expect(run.code).toBe(1);
    expect(result).toMatchObject({ subtype: 'error_during_execution', is_error: true });
    expect(result.error.message).toMatch(/checksum/i);
    expect(result.tool_calls ?? []).toEqual([]);
  });

  it('vertex: without the token service\'s token the request is refused; the stand-in saw the exchange', async () => {
    const { run } = await ask({ ...VERTEX, subjectToken: 'another-subject' } as CloudStandIn, vertexEnv, ['-m', 'claude-sonnet-4-5']);
    expect(run.code).toBe(1);
    expect(api!.requests.map((r) => r.path)).toContain('/token');
    expect(api!.requests.some((r) => r.usage !== undefined)).toBe(false);
    expect(run.stderr).toContain('(Failed to acquire Google OAuth credentials: Error code invalid_grant: subject_token is not the one this test issued); check the Google credentials');
  });
});

describe('choosing a cloud', () => {
  it.each([
    // [what is missing, env, the one line]
    ['AWS_REGION', { CLAUDE_CODE_USE_BEDROCK: '1' }, 'Claude on Bedrock needs a region: export AWS_REGION='],
    ['CLOUD_ML_REGION', { CLAUDE_CODE_USE_VERTEX: '1', ANTHROPIC_VERTEX_PROJECT_ID: 'p' }, 'Claude on Vertex AI needs a region: export CLOUD_ML_REGION='],
    ['the Vertex project', { CLAUDE_CODE_USE_VERTEX: 'true', CLOUD_ML_REGION: 'global' }, 'Claude on Vertex AI needs a Google Cloud project: export ANTHROPIC_VERTEX_PROJECT_ID='],
    ['the Foundry key', { CLAUDE_CODE_USE_FOUNDRY: '1' }, 'Claude on Microsoft Foundry needs a key: export ANTHROPIC_FOUNDRY_API_KEY='],
    ['the Foundry resource', { CLAUDE_CODE_USE_FOUNDRY: '1', ANTHROPIC_FOUNDRY_API_KEY: 'k' }, 'Claude on Microsoft Foundry needs its resource: export ANTHROPIC_FOUNDRY_RESOURCE='],
    ['a bad base URL', { CLAUDE_CODE_USE_BEDROCK: '1', AWS_REGION: 'us-east-1', ANTHROPIC_BEDROCK_BASE_URL: 'ftp://x' }, 'ANTHROPIC_BEDROCK_BASE_URL is not an http(s) URL'],
    ['a provider nobody serves', { SPELUNK_TEST_PROVIDER: 'azure' }, '--provider must be anthropic, bedrock, vertex or foundry (got "azure")'],
  ])('without %s: exit 2 (usage), one line, no request, no ANTHROPIC_API_KEY asked for', async (_what, extra, line) => {
    api = await startMockApi();
    const { SPELUNK_TEST_PROVIDER: provider, ...env } = extra as Record<string, string>;
    const args = provider ? ['--provider', provider] : [];
    const run = await runBinary(['-C', repo.root, ...args, 'q'], { cwd: repo.root, env: { ...base(), ...env } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(line);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).not.toContain('ANTHROPIC_API_KEY');
    expect(api.requests).toEqual([]);
  });

  it('--provider wins over the environment: --provider anthropic with CLAUDE_CODE_USE_BEDROCK=1 asks Anthropic\'s API', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('Anthropic answered.')));
    const env = { ...base(), CLAUDE_CODE_USE_BEDROCK: '1', ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url };
    const run = await runBinary(['-C', repo.root, '--provider', 'anthropic', 'q'], { cwd: repo.root, env });
    expect(run.code, run.stderr).toBe(0);
    expect(api.requests.map((r) => [r.path, r.body.model])).toEqual([['/v1/messages', 'claude-sonnet-5-5']]);
  });

  it('stream-json on a cloud: the init line says no Anthropic API key was used', async () => {
    api = await startMockApi({ minCacheTokens: 256, cloud: BEDROCK });
    api.enqueue(reply(text('Bedrock answered.')));
    const run = await runBinary(['-C', repo.root, '--output-format', 'stream-json', 'q'], { cwd: repo.root, env: bedrockEnv(api.url) });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.split('\n')[0]!)).toMatchObject({ type: 'system', subtype: 'init', apiKeySource: 'none' });
  });

  it('--provider bedrock without CLAUDE_CODE_USE_BEDROCK reaches Bedrock, with no ANTHROPIC_API_KEY', async () => {
    api = await startMockApi({ minCacheTokens: 256, cloud: BEDROCK });
    api.enqueue(reply(text('Bedrock answered.')));
    const { CLAUDE_CODE_USE_BEDROCK: _, ...env } = bedrockEnv(api.url);
    const run = await runBinary(['-C', repo.root, '--provider', 'bedrock', 'q'], { cwd: repo.root, env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Bedrock answered.');
    expect(api.requests.map((r) => r.path)).toEqual(['/model/global.anthropic.claude-sonnet-5-5/invoke-with-response-stream']);
  });
});
