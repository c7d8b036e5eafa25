import { UsageError } from './errors.js';
import { escapeControls } from './escape.js';

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
