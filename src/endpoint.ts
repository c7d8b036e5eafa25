import { UsageError } from './errors.js';
import { escapeControls } from './escape.js';
import { PROVIDERS, type Provider, type ProviderSettings } from './agent/providers.js';

// Where requests go and with which credential, read from the environment once (config.ts calls these).

/**
 * ANTHROPIC_API_KEY, else ANTHROPIC_AUTH_TOKEN: the SDK's own order (the key wins when both are set). Both reach the
 * API as `Authorization: Bearer <value>` in SDK 1.x; the difference is which variable a message tells the user to fix.
 */
export function resolveCredential(env: Readonly<Record<string, string | undefined>>): {
  apiKey: string;
  credential: 'apiKey' | 'authToken';
} {
  const key = env.ANTHROPIC_API_KEY?.trim();
  if (key) return { apiKey: headerSafe('ANTHROPIC_API_KEY', key), credential: 'apiKey' };
  const token = env.ANTHROPIC_AUTH_TOKEN?.trim();
  if (token) return { apiKey: headerSafe('ANTHROPIC_AUTH_TOKEN', token), credential: 'authToken' };
  throw new UsageError(
    'ANTHROPIC_API_KEY is not set; export ANTHROPIC_API_KEY=sk-ant-… (get a key at console.anthropic.com), or ANTHROPIC_AUTH_TOKEN for a bearer token',
  );
}

/** A credential goes into an HTTP header: a line break or space in it (a bad paste) is said here, without echoing it. */
function headerSafe(name: string, value: string): string {
  if (/^[\x21-\x7e]+$/.test(value)) return value;
  throw new UsageError(`${name} contains a space, line break or other character an HTTP header cannot carry; export it again without them`);
}

/** ANTHROPIC_BASE_URL must be an http(s) URL; anything else would fail every request with a less helpful message. */
export function resolveBaseUrl(raw: string | undefined): string | undefined {
  const value = raw?.trim();
  if (!value) return undefined;
  if (URL.canParse(value) && ['http:', 'https:'].includes(new URL(value).protocol)) return value;
  throw new UsageError(`ANTHROPIC_BASE_URL is not an http(s) URL (got "${escapeControls(value)}"); e.g. https://api.anthropic.com, or unset it`);
}

type Env = Readonly<Record<string, string | undefined>>;

/** Claude Code's switches, in the order Claude Code reads them. */
const PROVIDER_SWITCHES: ReadonlyArray<readonly [string, Exclude<Provider, 'anthropic'>]> = [
  ['CLAUDE_CODE_USE_BEDROCK', 'bedrock'],
  ['CLAUDE_CODE_USE_VERTEX', 'vertex'],
  ['CLAUDE_CODE_USE_FOUNDRY', 'foundry'],
];

/**
 * The provider: `--provider` when given, else the first CLAUDE_CODE_USE_* switch that is on (as Claude Code chooses),
 * else Anthropic's API. Each cloud's settings come from the variables its SDK and Claude Code read; a missing region or
 * project is a usage error naming the variable, before any request.
 */
export function resolveProvider(flag: string | undefined, env: Env): ProviderSettings {
  const chosen = flag?.trim() ?? PROVIDER_SWITCHES.find(([name]) => truthy(env[name]))?.[1] ?? 'anthropic';
  if (!(PROVIDERS as readonly string[]).includes(chosen)) {
    throw new UsageError(`--provider must be ${PROVIDERS.slice(0, -1).join(', ')} or ${PROVIDERS.at(-1)} (got "${escapeControls(chosen)}")`);
  }
  switch (chosen as Provider) {
    case 'anthropic':
      return { provider: 'anthropic' };
    case 'bedrock':
      return bedrockSettings(env);
    case 'vertex':
      return vertexSettings(env);
    case 'foundry':
      return foundrySettings(env);
  }
}

/** Claude Code's reading of a switch: 1, true, yes or on, in any case. */
function truthy(value: string | undefined): boolean {
  return ['1', 'true', 'yes', 'on'].includes(value?.trim().toLowerCase() ?? '');
}

function bedrockSettings(env: Env): ProviderSettings {
  const region = env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim();
  if (!region) {
    throw new UsageError('Claude on Bedrock needs a region: export AWS_REGION=us-east-1 (a region where your account has Bedrock model access)');
  }
  const accessKeyId = env.AWS_ACCESS_KEY_ID?.trim();
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY?.trim();
  const token = env.AWS_BEARER_TOKEN_BEDROCK?.trim();
  return {
    provider: 'bedrock',
    region,
    baseURL: resolveUrl('ANTHROPIC_BEDROCK_BASE_URL', env.ANTHROPIC_BEDROCK_BASE_URL, 'https://bedrock-runtime.us-east-1.amazonaws.com'),
    bearerToken: token ? headerSafe('AWS_BEARER_TOKEN_BEDROCK', token) : undefined,
    // Keys of the run's environment are passed on explicitly (the SDK's own chain reads the process environment).
    keys:
      accessKeyId && secretAccessKey
        ? { accessKeyId, secretAccessKey, sessionToken: env.AWS_SESSION_TOKEN?.trim() || undefined }
        : undefined,
    skipAuth: truthy(env.CLAUDE_CODE_SKIP_BEDROCK_AUTH),
  };
}

function vertexSettings(env: Env): ProviderSettings {
  const region = env.CLOUD_ML_REGION?.trim();
  if (!region) throw new UsageError('Claude on Vertex AI needs a region: export CLOUD_ML_REGION=global (or a region such as us-east5)');
  // As Claude Code documents: GCLOUD_PROJECT and GOOGLE_CLOUD_PROJECT win over ANTHROPIC_VERTEX_PROJECT_ID; a
  // credentials file may name the project itself.
  const projectId = [env.GCLOUD_PROJECT, env.GOOGLE_CLOUD_PROJECT, env.ANTHROPIC_VERTEX_PROJECT_ID].map((v) => v?.trim()).find(Boolean);
  const keyFile = env.GOOGLE_APPLICATION_CREDENTIALS?.trim() || undefined;
  if (!projectId && !keyFile) {
    throw new UsageError('Claude on Vertex AI needs a Google Cloud project: export ANTHROPIC_VERTEX_PROJECT_ID=your-project-id');
  }
  return {
    provider: 'vertex',
    region,
    projectId,
    baseURL: resolveUrl('ANTHROPIC_VERTEX_BASE_URL', env.ANTHROPIC_VERTEX_BASE_URL, 'https://aiplatform.googleapis.com/v1'),
    keyFile,
    skipAuth: truthy(env.CLAUDE_CODE_SKIP_VERTEX_AUTH),
  };
}

function foundrySettings(env: Env): ProviderSettings {
  const apiKey = env.ANTHROPIC_FOUNDRY_API_KEY?.trim();
  if (!apiKey) throw new UsageError('Claude on Microsoft Foundry needs a key: export ANTHROPIC_FOUNDRY_API_KEY=… (Microsoft Entra ID sign-in is not supported)');
  const baseURL = resolveUrl('ANTHROPIC_FOUNDRY_BASE_URL', env.ANTHROPIC_FOUNDRY_BASE_URL, 'https://my-resource.services.ai.azure.com/anthropic/');
  const resource = env.ANTHROPIC_FOUNDRY_RESOURCE?.trim() || undefined;
  if (!baseURL && !resource) {
    throw new UsageError('Claude on Microsoft Foundry needs its resource: export ANTHROPIC_FOUNDRY_RESOURCE=my-resource (or ANTHROPIC_FOUNDRY_BASE_URL)');
  }
  // The SDK takes one of the two: a base URL wins, as it names the endpoint exactly.
  return { provider: 'foundry', apiKey: headerSafe('ANTHROPIC_FOUNDRY_API_KEY', apiKey), baseURL, resource: baseURL ? undefined : resource };
}

/** A base URL variable must be an http(s) URL, or unset. */
function resolveUrl(name: string, raw: string | undefined, example: string): string | undefined {
  const value = raw?.trim();
  if (!value) return undefined;
  if (URL.canParse(value) && ['http:', 'https:'].includes(new URL(value).protocol)) return value;
  throw new UsageError(`${name} is not an http(s) URL (got "${escapeControls(value)}"); e.g. ${example}, or unset it`);
}
