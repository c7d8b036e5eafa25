import { describe, expect, it } from 'vitest';
import { priceFor } from '../../src/agent/pricing.js';
import { anthropicModelId, providerModelId, type Provider } from '../../src/agent/providers.js';
import { resolveProvider } from '../../src/endpoint.js';
import { UsageError } from '../../src/errors.js';

// Which cloud serves Claude and the model ids each takes (issue 35). The runs against each cloud's stand-in are in
// test/cli/cloud-providers.test.ts.

describe('providerModelId: Anthropic ids mapped, a cloud\'s own id passed through', () => {
  it.each<[Provider, string, string]>([
    ['bedrock', 'claude-sonnet-4-5', 'global.anthropic.claude-sonnet-4-5-20250929-v1:0'],
    ['bedrock', 'claude-sonnet-4-5-20250929', 'global.anthropic.claude-sonnet-4-5-20250929-v1:0'],
    ['bedrock', 'claude-haiku-4-5', 'global.anthropic.claude-haiku-4-5-20251001-v1:0'],
    ['bedrock', 'claude-opus-4-5', 'global.anthropic.claude-opus-4-5-20251101-v1:0'],
    ['bedrock', 'claude-opus-4-6', 'global.anthropic.claude-opus-4-6-v1'],
    ['bedrock', 'claude-sonnet-4-6', 'global.anthropic.claude-sonnet-4-6'],
    // Without a row: the pattern of the newest rows.
    ['bedrock', 'claude-sonnet-5-5', 'global.anthropic.claude-sonnet-5-5'],
    // A cloud's own ids, as given: an inference profile, a base id, an ARN.
    ['bedrock', 'eu.anthropic.claude-haiku-4-5-20251001-v1:0', 'eu.anthropic.claude-haiku-4-5-20251001-v1:0'],
    ['bedrock', 'anthropic.claude-sonnet-4-6', 'anthropic.claude-sonnet-4-6'],
    ['bedrock', 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc', 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc'],
    ['vertex', 'claude-sonnet-4-5', 'claude-sonnet-4-5@20250929'],
    ['vertex', 'claude-haiku-4-5-20251001', 'claude-haiku-4-5@20251001'],
    ['vertex', 'claude-opus-4-6', 'claude-opus-4-6'],
    ['vertex', 'claude-opus-5-5', 'claude-opus-5-5'],
    ['vertex', 'claude-opus-5-5-20261101', 'claude-opus-5-5@20261101'],
    ['vertex', 'claude-sonnet-4-5@20250929', 'claude-sonnet-4-5@20250929'],
    ['foundry', 'claude-sonnet-4-5', 'claude-sonnet-4-5'],
    ['anthropic', 'claude-sonnet-4-5', 'claude-sonnet-4-5'],
  ])('%s %s → %s', (provider, model, id) => {
    expect(providerModelId(provider, model)).toBe(id);
  });
});

describe('a cloud id is priced as the Anthropic model it stands for (Bedrock and Vertex list Claude at the same prices)', () => {
  it.each([
    ['global.anthropic.claude-sonnet-4-5-20250929-v1:0', 'claude-sonnet-4-5-20250929', 'claude-sonnet-4-5'],
    ['eu.anthropic.claude-haiku-4-5-20251001-v1:0', 'claude-haiku-4-5-20251001', 'claude-haiku-4-5'],
    ['anthropic.claude-opus-4-6-v1', 'claude-opus-4-6', 'claude-opus-4-6'],
    ['us-gov.anthropic.claude-sonnet-4-6', 'claude-sonnet-4-6', 'claude-sonnet-4-6'],
    ['claude-sonnet-4-5@20250929', 'claude-sonnet-4-5-20250929', 'claude-sonnet-4-5'],
    ['claude-sonnet-5-5', 'claude-sonnet-5-5', 'claude-sonnet-5-5'],
  ])('%s → %s (row %s)', (id, anthropic, row) => {
    expect(anthropicModelId(id)).toBe(anthropic);
    expect(priceFor(id)?.model).toBe(row);
    expect(priceFor(id)?.rates).toEqual(priceFor(row)?.rates);
  });

  it('an ARN or an unknown id has no price (cost unknown, not a guess)', () => {
    expect(priceFor('arn:aws:bedrock:us-east-1:1:application-inference-profile/abc')).toBeNull();
    expect(priceFor('mistral.mistral-large')).toBeNull();
  });
});

describe('resolveProvider: --provider, else Claude Code\'s switches', () => {
  const bedrock = { AWS_REGION: 'eu-west-1' };
  const vertex = { CLOUD_ML_REGION: 'global', ANTHROPIC_VERTEX_PROJECT_ID: 'p' };
  it.each<[string, string | undefined, Record<string, string>, string]>([
    ['nothing set', undefined, {}, 'anthropic'],
    ['CLAUDE_CODE_USE_BEDROCK=1', undefined, { CLAUDE_CODE_USE_BEDROCK: '1', ...bedrock }, 'bedrock'],
    ['CLAUDE_CODE_USE_BEDROCK=true', undefined, { CLAUDE_CODE_USE_BEDROCK: 'TRUE', ...bedrock }, 'bedrock'],
    ['CLAUDE_CODE_USE_BEDROCK=0 is off', undefined, { CLAUDE_CODE_USE_BEDROCK: '0', ...bedrock }, 'anthropic'],
    ['CLAUDE_CODE_USE_VERTEX=yes', undefined, { CLAUDE_CODE_USE_VERTEX: 'yes', ...vertex }, 'vertex'],
    ['both switches: Bedrock first, as Claude Code reads them', undefined, { CLAUDE_CODE_USE_VERTEX: '1', CLAUDE_CODE_USE_BEDROCK: '1', ...bedrock, ...vertex }, 'bedrock'],
    ['the flag wins over a switch', 'vertex', { CLAUDE_CODE_USE_BEDROCK: '1', ...vertex }, 'vertex'],
    ['--provider anthropic wins over a switch', 'anthropic', { CLAUDE_CODE_USE_VERTEX: '1' }, 'anthropic'],
  ])('%s', (_name, flag, env, provider) => {
    expect(resolveProvider(flag, env).provider).toBe(provider);
  });

  it.each<[string, string | undefined, Record<string, string>, RegExp]>([
    ['Bedrock without a region', 'bedrock', {}, /^Claude on Bedrock needs a region: export AWS_REGION=/],
    ['Vertex without a region', 'vertex', { ANTHROPIC_VERTEX_PROJECT_ID: 'p' }, /^Claude on Vertex AI needs a region: export CLOUD_ML_REGION=/],
    ['Vertex without a project', 'vertex', { CLOUD_ML_REGION: 'global' }, /needs a Google Cloud project: export ANTHROPIC_VERTEX_PROJECT_ID=/],
    ['an unknown provider', 'openai', {}, /^--provider must be anthropic, bedrock, vertex or foundry \(got "openai"\)$/],
    ['a Bedrock API key with a line break', 'bedrock', { ...bedrock, AWS_BEARER_TOKEN_BEDROCK: 'ab\ncd' }, /^AWS_BEARER_TOKEN_BEDROCK contains a space, line break/],
    ['a Vertex base URL that is not http(s)', 'vertex', { ...vertex, ANTHROPIC_VERTEX_BASE_URL: 'file:///etc' }, /^ANTHROPIC_VERTEX_BASE_URL is not an http\(s\) URL/],
  ])('%s: a usage error naming what to set', (_name, flag, env, message) => {
    expect(() => resolveProvider(flag, env)).toThrow(UsageError);
    expect(() => resolveProvider(flag, env)).toThrow(message);
  });

  it.each([
    ['AWS_REGION', { AWS_REGION: 'eu-west-1', AWS_DEFAULT_REGION: 'us-east-1' }, 'eu-west-1'],
    ['AWS_DEFAULT_REGION when AWS_REGION is unset', { AWS_DEFAULT_REGION: 'us-east-1' }, 'us-east-1'],
  ])('Bedrock reads its region from %s', (_name, env, region) => {
    expect(resolveProvider('bedrock', env)).toMatchObject({ region });
  });

  it('Bedrock takes the keys of the run\'s environment explicitly; without them the AWS default chain decides', () => {
    const keys = { AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 's', AWS_SESSION_TOKEN: 't' };
    expect(resolveProvider('bedrock', { ...bedrock, ...keys })).toMatchObject({ keys: { accessKeyId: 'AKID', secretAccessKey: 's', sessionToken: 't' } });
    expect(resolveProvider('bedrock', { ...bedrock, AWS_ACCESS_KEY_ID: 'AKID' })).toMatchObject({ keys: undefined });
  });

  it('Vertex: GCLOUD_PROJECT and GOOGLE_CLOUD_PROJECT win over ANTHROPIC_VERTEX_PROJECT_ID, as Claude Code documents', () => {
    expect(resolveProvider('vertex', { ...vertex, GOOGLE_CLOUD_PROJECT: 'g' })).toMatchObject({ projectId: 'g' });
    expect(resolveProvider('vertex', { CLOUD_ML_REGION: 'global', GOOGLE_APPLICATION_CREDENTIALS: '/k.json' })).toMatchObject({ projectId: undefined, keyFile: '/k.json' });
  });
});
