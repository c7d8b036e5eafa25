import { AnthropicBedrock } from '@anthropic-ai/bedrock-sdk';
import { AnthropicFoundry } from '@anthropic-ai/foundry-sdk';
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
// The cloud SDKs share one copy of @anthropic-ai/sdk (in the bundle: their own chunk), whose errors they throw.
import * as CloudErrors from '@anthropic-ai/vertex-sdk/core/error';
import { GoogleAuth } from 'google-auth-library';
import type * as Errors from '@anthropic-ai/sdk/core/error';
import type { Messages } from '@anthropic-ai/sdk/resources/messages/messages';
import type { ProviderSettings } from './providers.js';

// Reached only through import() from client.ts, for a run on a cloud: scripts/build.mjs puts these SDKs (with the AWS
// and Google libraries they use) in dist/vendor-cloud.cjs, which a run on Anthropic's API never reads.

/** The SDK's error classes: a cloud's client throws those of its own copy of the SDK (in the bundle: this chunk's). */
export type SdkErrors = Pick<typeof Errors, 'APIError' | 'APIConnectionError' | 'APIConnectionTimeoutError' | 'APIUserAbortError'>;

/** What one provider's client is made of: its Messages resource and the error classes it throws. */
export interface ProviderMessages {
  messages: Messages;
  errors: SdkErrors;
}

/** What every provider's client gets from client.ts: retries, the per-attempt timeout and the observed fetch. */
export interface CommonOptions {
  maxRetries: number;
  timeout: number;
  fetch: typeof fetch;
  logLevel: 'off';
}

const GOOGLE_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/**
 * The Messages resource of the cloud's Anthropic client. Every setting is passed explicitly, from the run's environment
 * (endpoint.ts), so the SDKs' own reading of the process environment never decides anything; only the providers'
 * default credential chains do (AWS: profile, SSO, container and instance roles; Google: Application Default Credentials).
 */
export function cloudMessages(settings: Exclude<ProviderSettings, { provider: 'anthropic' }>, common: CommonOptions): ProviderMessages {
  const errors = CloudErrors;
  switch (settings.provider) {
    case 'bedrock': {
      const { region, keys } = settings;
      const client = new AnthropicBedrock({
        ...common,
        awsRegion: region,
        baseURL: settings.baseURL ?? `https://bedrock-runtime.${region}.amazonaws.com`,
        // null: sign with AWS credentials rather than read AWS_BEARER_TOKEN_BEDROCK from the process environment.
        apiKey: settings.bearerToken ?? null,
        skipAuth: settings.skipAuth,
        awsAccessKey: keys?.accessKeyId ?? null,
        awsSecretKey: keys?.secretAccessKey ?? null,
        awsSessionToken: keys?.sessionToken ?? null,
      } as ConstructorParameters<typeof AnthropicBedrock>[0]);
      return { messages: client.messages as unknown as Messages, errors };
    }
    case 'vertex': {
      const { region, projectId } = settings;
      const client = new AnthropicVertex({
        ...common,
        region,
        projectId: projectId ?? null,
        baseURL: settings.baseURL ?? vertexBaseUrl(region),
        googleAuth: settings.skipAuth ? noGoogleAuth() : new GoogleAuth({ scopes: GOOGLE_SCOPE, ...(settings.keyFile ? { keyFilename: settings.keyFile } : {}), ...(projectId ? { projectId } : {}) }),
      });
      return { messages: client.messages as unknown as Messages, errors };
    }
    case 'foundry': {
      const client = new AnthropicFoundry({ ...common, apiKey: settings.apiKey, baseURL: settings.baseURL ?? null, resource: settings.resource ?? null });
      return { messages: client.messages as unknown as Messages, errors };
    }
  }
}

/** The Vertex AI endpoint of a region, as the Vertex SDK chooses it. */
function vertexBaseUrl(region: string): string {
  if (region === 'global') return 'https://aiplatform.googleapis.com/v1';
  if (region === 'us' || region === 'eu') return `https://aiplatform.${region}.rep.googleapis.com/v1`;
  return `https://${region}-aiplatform.googleapis.com/v1`;
}

/** CLAUDE_CODE_SKIP_VERTEX_AUTH: a gateway authenticates, so requests carry no Google token (as Claude Code does). */
function noGoogleAuth(): GoogleAuth {
  const client = { projectId: null, getRequestHeaders: async () => new globalThis.Headers() };
  return { getClient: async () => client } as unknown as GoogleAuth;
}
