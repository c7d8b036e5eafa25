// Which service serves Claude, the model ids each one takes, and how messages name its settings. Pure: the clouds'
// SDKs are loaded by cloud.ts, only when a request goes to a cloud.

/** Where requests go: Anthropic's API (or a gateway at ANTHROPIC_BASE_URL), Amazon Bedrock, Google Vertex AI, Microsoft Foundry. */
export const PROVIDERS = ['anthropic', 'bedrock', 'vertex', 'foundry'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** A provider and what it needs, resolved from the environment by endpoint.ts (no secret is read twice). */
export type ProviderSettings =
  | { provider: 'anthropic' }
  | {
      provider: 'bedrock';
      region: string;
      baseURL: string | undefined;
      /** AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key); else SigV4 with the keys below or the AWS default chain. */
      bearerToken: string | undefined;
      /** AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY(/AWS_SESSION_TOKEN) of the run's environment; absent: the default chain. */
      keys: { accessKeyId: string; secretAccessKey: string; sessionToken: string | undefined } | undefined;
      /** CLAUDE_CODE_SKIP_BEDROCK_AUTH: a gateway in front of Bedrock signs instead. */
      skipAuth: boolean;
    }
  | {
      provider: 'vertex';
      region: string;
      projectId: string | undefined;
      baseURL: string | undefined;
      /** GOOGLE_APPLICATION_CREDENTIALS of the run's environment: the credentials file (else Application Default Credentials). */
      keyFile: string | undefined;
      /** CLAUDE_CODE_SKIP_VERTEX_AUTH: a gateway in front of Vertex authenticates instead. */
      skipAuth: boolean;
    }
  | { provider: 'foundry'; apiKey: string; baseURL: string | undefined; resource: string | undefined };

/**
 * The clouds' ids of the models spelunk knows, from Anthropic's model tables for Bedrock (InvokeModel) and Vertex AI
 * (Nov 2026). A model without a row takes the pattern the newest rows follow: `anthropic.<id>` on Bedrock, `<id>` on
 * Vertex (not checked against a cloud: pass the cloud's own id with --model when it differs).
 */
const CLOUD_IDS: ReadonlyMap<string, { bedrock: string; vertex: string }> = new Map([
  ['claude-opus-4-6', { bedrock: 'anthropic.claude-opus-4-6-v1', vertex: 'claude-opus-4-6' }],
  ['claude-sonnet-4-6', { bedrock: 'anthropic.claude-sonnet-4-6', vertex: 'claude-sonnet-4-6' }],
  ['claude-opus-4-5', { bedrock: 'anthropic.claude-opus-4-5-20251101-v1:0', vertex: 'claude-opus-4-5@20251101' }],
  ['claude-sonnet-4-5', { bedrock: 'anthropic.claude-sonnet-4-5-20250929-v1:0', vertex: 'claude-sonnet-4-5@20250929' }],
  ['claude-haiku-4-5', { bedrock: 'anthropic.claude-haiku-4-5-20251001-v1:0', vertex: 'claude-haiku-4-5@20251001' }],
]);

/**
 * Bedrock serves these models on demand only through an inference profile: `global.` routes to any region with
 * capacity and is the one profile every model above has (the geographic `us.`/`eu.`/`jp.`/`apac.` ones each lack some).
 */
const BEDROCK_PROFILE = 'global.';

/** A date-stamped Anthropic id (`claude-sonnet-4-5-20250929`) names the same model as its alias. */
const DATED = /^(claude-[a-z0-9-]+?)-(\d{8})$/;
/** Anthropic's own id form; anything else (`us.anthropic.…`, `…@20250929`, an ARN) is the cloud's id and passes as given. */
const ANTHROPIC_ID = /^claude-[a-z0-9-]+$/;

/** The id to send to `provider` for `model`: Anthropic ids are mapped, a cloud's own id passes through unchanged. */
export function providerModelId(provider: Provider, model: string): string {
  if ((provider !== 'bedrock' && provider !== 'vertex') || !ANTHROPIC_ID.test(model)) return model;
  const dated = DATED.exec(model);
  const base = dated?.[1] ?? model;
  const row = CLOUD_IDS.get(base);
  if (provider === 'vertex') return row?.vertex ?? (dated ? `${base}@${dated[2]}` : model);
  return BEDROCK_PROFILE + (row?.bedrock ?? `anthropic.${model}`);
}

/** Bedrock's inference-profile prefixes (and `anthropic.`), Vertex's `@date`, Bedrock's `-v1:0`: what to strip for pricing. */
const BEDROCK_PREFIX = /^(?:(?:global|us|us-gov|eu|apac|jp|au|ca)\.)?anthropic\./;

/**
 * The Anthropic id a cloud's model id stands for (`global.anthropic.claude-haiku-4-5-20251001-v1:0` →
 * `claude-haiku-4-5-20251001`), so prices and model facts apply to an id given with --model; other ids unchanged.
 */
export function anthropicModelId(model: string): string {
  const bare = BEDROCK_PREFIX.test(model) ? model.replace(BEDROCK_PREFIX, '').replace(/-v\d+(?::\d+)?$/, '') : model;
  return bare.replace(/@(\d{8})$/, '-$1');
}

/** How messages name each provider. */
export const PROVIDER_NAMES: Record<ProviderSettings['provider'], string> = {
  anthropic: 'Anthropic API',
  bedrock: 'Amazon Bedrock',
  vertex: 'Vertex AI',
  foundry: 'Microsoft Foundry',
};

/** The setting that names the endpoint of this provider (what to check when it cannot be reached). */
export function endpointSetting(provider: ProviderSettings): string {
  switch (provider.provider) {
    case 'anthropic':
      return 'ANTHROPIC_BASE_URL';
    case 'bedrock':
      return provider.baseURL ? 'ANTHROPIC_BEDROCK_BASE_URL' : `AWS_REGION (${provider.region})`;
    case 'vertex':
      return provider.baseURL ? 'ANTHROPIC_VERTEX_BASE_URL' : `CLOUD_ML_REGION (${provider.region})`;
    case 'foundry':
      return provider.baseURL ? 'ANTHROPIC_FOUNDRY_BASE_URL' : 'ANTHROPIC_FOUNDRY_RESOURCE';
  }
}

/** What to check when a cloud refuses the credentials or the model (401/403); null for Anthropic's API. */
export function cloudAccess(provider: ProviderSettings, model: string): string | null {
  const id = providerModelId(provider.provider, model);
  switch (provider.provider) {
    case 'anthropic':
      return null;
    case 'bedrock':
      return `check the AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_BEARER_TOKEN_BEDROCK) and that the account may invoke ${id} in ${provider.region}`;
    case 'vertex':
      return `check the Google credentials (gcloud auth application-default login, or GOOGLE_APPLICATION_CREDENTIALS) and that the project may use ${id} in ${provider.region}`;
    case 'foundry':
      return `check ANTHROPIC_FOUNDRY_API_KEY and that the resource has a deployment of ${id}`;
  }
}
