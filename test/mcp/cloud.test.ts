import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { reply, text, toolUse } from '../support/mock-api.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';
import { errorText, structured, useMcp } from './harness.js';

// `spelunk mcp` on a cloud (issue 35): no ANTHROPIC_API_KEY needed, and a missing region is said the way a missing key is.
const repo = useRepo(APP_FILES, { git: true });
const mcp = useMcp(repo);

/** No Anthropic credential, no account files, no instance metadata: only what each row gives. */
const noAnthropic = (): Record<string, string> => ({
  ANTHROPIC_API_KEY: '',
  ANTHROPIC_BASE_URL: '',
  HOME: path.dirname(repo.root),
  AWS_CONFIG_FILE: path.join(repo.root, '..', 'no-aws-config'),
  AWS_SHARED_CREDENTIALS_FILE: path.join(repo.root, '..', 'no-aws-credentials'),
  AWS_EC2_METADATA_DISABLED: 'true',
});

describe('spelunk mcp with a cloud provider', () => {
  it('on Bedrock without ANTHROPIC_API_KEY: ask reaches the Bedrock stand-in and answers', { timeout: 60_000 }, async () => {
    const api = await mcp.api({ minCacheTokens: 256, cloud: { kind: 'bedrock', region: 'us-east-1', accessKeyId: 'AKIDMCP', secretAccessKey: 's3cr3t' } });
    api.enqueue(reply(toolUse('read_file', { path: 'src/server.js' })), reply(text('createServer is in src/server.js:4.')));
    const env = { ...noAnthropic(), CLAUDE_CODE_USE_BEDROCK: '1', AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'AKIDMCP', AWS_SECRET_ACCESS_KEY: 's3cr3t', ANTHROPIC_BEDROCK_BASE_URL: api.url };
    const { client } = await mcp.connect([], env);
    const answer = structured(await client.callTool({ name: 'ask', arguments: { question: 'where is createServer?' } }));
    expect(JSON.stringify(answer)).toContain('src/server.js:4');
    expect(api.requests.map((r) => r.path)).toEqual([
      '/model/global.anthropic.claude-sonnet-5-5/invoke-with-response-stream',
      '/model/global.anthropic.claude-sonnet-5-5/invoke-with-response-stream',
    ]);
    expect(mcp.stderr).not.toContain('only locate works');
  });

  it('on Vertex AI without CLOUD_ML_REGION: starts, serves locate, and ask names the variable to set', async () => {
    const api = await mcp.api();
    const { client } = await mcp.connect([], { ...noAnthropic(), CLAUDE_CODE_USE_VERTEX: '1', ANTHROPIC_VERTEX_PROJECT_ID: 'p' });
    const found = structured(await client.callTool({ name: 'locate', arguments: { question: 'where does createServer start?', k: 1 } }));
    expect(found.results[0].path).toBe('src/server.js');
    const message = errorText(await client.callTool({ name: 'ask', arguments: { question: 'q?' } }));
    expect(message).toMatch(/^spelunk: ask calls the model, and Claude on Vertex AI needs a region: export CLOUD_ML_REGION=.*--env CLOUD_ML_REGION=… -- spelunk mcp/);
    expect(message).not.toContain('ANTHROPIC_API_KEY');
    expect(api.requests).toHaveLength(0);
    expect(mcp.stderr).toContain('spelunk mcp: only locate works: Claude on Vertex AI needs a region');
  });
});
