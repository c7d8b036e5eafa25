import { BaseAnthropic } from '@anthropic-ai/sdk/client';
import * as Errors from '@anthropic-ai/sdk/core/error';
import { Messages } from '@anthropic-ai/sdk/resources/messages/messages';
import type * as API from '@anthropic-ai/sdk/resources/messages/messages';
import { KNOWN_MODELS } from './pricing.js';
import { closest } from '../suggest.js';
import { Headers } from './fetch-globals.js';
import { createHttpFetch } from './http-fetch.js';
import type { Usage } from './events.js';
import type { ProviderMessages, SdkErrors } from './cloud.js';
import { cloudAccess, endpointSetting, PROVIDER_NAMES, providerModelId, type ProviderSettings } from './providers.js';
import {
  ModelAbortError,
  ModelError,
  type Block,
  type ModelChunk,
  type ModelClient,
  type ModelRequest,
} from './model.js';

/** Retries the SDK makes for connection errors, 408/409/429/5xx before a response starts (the SDK default is 2). */
const MAX_RETRIES = 4;
/** Per-attempt HTTP timeout; streaming keeps the connection busy, so this bounds a silent server. */
const REQUEST_TIMEOUT_MS = 10 * 60 * 1000;

export interface ClientOptions {
  apiKey: string;
  /** Which variable `apiKey` came from (default ANTHROPIC_API_KEY); named in the 401 message. */
  credential?: 'apiKey' | 'authToken';
  baseURL?: string;
  /** The transport under the retry observer (tests); default a fetch on node:http (http-fetch.ts: no undici). */
  fetchImpl?: typeof fetch;
  /** A cloud that serves Claude (Bedrock, Vertex AI, Foundry); absent or anthropic: Anthropic's API at `baseURL`. */
  provider?: ProviderSettings;
}

/** How failures are worded for the provider in use: where its endpoint is set and what to check on a 401/403. */
interface Wording {
  errors: SdkErrors;
  credential: ClientOptions['credential'];
  provider: ProviderSettings;
}

/** What one streamed attempt has shown and learned so far (for error messages and cancelled-request usage). */
interface AttemptState {
  text: boolean;
  usage: Usage | null;
  requestId: string | null;
}

/** The real model client: the only runtime user of @anthropic-ai/sdk (a cloud's SDK is loaded by cloud.ts, on first use). */
export function createAnthropicClient(opts: ClientOptions): ModelClient {
  const notices = new NoticeChannel();
  const provider = opts.provider ?? { provider: 'anthropic' };
  const fetch = observingFetch(opts.fetchImpl ?? createHttpFetch(), notices);
  const wording: Wording = { errors: Errors, credential: opts.credential, provider };
  let context: Promise<StreamContext> | null = null;
  const connect = (): Promise<StreamContext> => {
    context ??= providerMessages(opts, provider, fetch).then(({ messages, errors }) => {
      wording.errors = errors;
      return { messages, notices, anthropicEndpoint: provider.provider === 'anthropic' && isAnthropicEndpoint(opts.baseURL), provider };
    });
    return context;
  };

  return {
    async *stream(request, signal) {
      const state: AttemptState = { text: false, usage: null, requestId: null };
      try {
        const sdk = await connect();
        try {
          yield* streamOnce(sdk, request, signal, state);
        } catch (error) {
          if (signal.aborted) throw new ModelAbortError(state.usage, state.requestId);
          // The SDK never retries once a response has started; a cut before any visible text is safe to repeat once.
          if (!state.text && isMidStreamFailure(error, wording.errors)) {
            yield { type: 'notice', message: `stream interrupted before any text (${describe(error, wording.errors)}); retrying once` };
            const again: AttemptState = { text: false, usage: null, requestId: null };
            try {
              yield* streamOnce(sdk, request, signal, again);
              return;
            } catch (second) {
              if (signal.aborted) throw new ModelAbortError(again.usage, again.requestId);
              throw toModelError(second, again, request.model, true, wording);
            }
          }
          throw toModelError(error, state, request.model, false, wording);
        }
      } catch (error) {
        if (error instanceof ModelError || error instanceof ModelAbortError) throw error;
        const why = error instanceof Error ? error.message : String(error);
        throw new ModelError(`could not set up the ${PROVIDER_NAMES[provider.provider]} client: ${why}`, undefined, 'client_setup', null, false);
      }
    },
    async countTokens(request, signal) {
      try {
        const sdk = await connect();
        // Bedrock's client has no token counting: the budget then estimates.
        if (typeof sdk.messages.countTokens !== 'function') return null;
        const { system, tools, messages, thinking } = request;
        const model = providerModelId(provider.provider, request.model);
        const params = { model, system, tools, messages, ...(thinking ? { thinking } : {}) };
        const counted = await sdk.messages.countTokens(params as API.MessageCountTokensParams, { signal, maxRetries: 1 });
        return counted.input_tokens;
      } catch {
        return null;
      }
    },
  };
}


/**
 * The Messages resource of the provider's client. Anthropic's is built here: only the Messages resource (the full
 * client pulls in every API resource, ~1 MB more to compile at start-up); the SDK takes exactly one credential, and
 * passing it explicitly also keeps the SDK from reading the environment. A cloud's comes from cloud.ts, which loads
 * that cloud's SDK (a separate chunk of the bundle) only now.
 */
async function providerMessages(opts: ClientOptions, provider: ProviderSettings, fetch: typeof globalThis.fetch): Promise<ProviderMessages> {
  const common = { maxRetries: MAX_RETRIES, timeout: REQUEST_TIMEOUT_MS, fetch, logLevel: 'off' as const };
  if (provider.provider !== 'anthropic') return (await import('./cloud.js')).cloudMessages(provider, common);
  const credential = opts.credential === 'authToken' ? { authToken: opts.apiKey } : { apiKey: opts.apiKey };
  const base = new BaseAnthropic({ ...credential, baseURL: opts.baseURL ?? null, ...common });
  return { messages: new Messages(base), errors: Errors };
}

/**
 * The SDK retries inside one `stream()` call and says nothing: every HTTP attempt passes through here, so a
 * retryable answer becomes a live "retry 2/4 in 1.0 s (529 overloaded)" line.
 */
function observingFetch(baseFetch: typeof fetch, notices: NoticeChannel): typeof fetch {
  return async (input, init) => {
    const attempt = Number(new Headers(init?.headers as ConstructorParameters<typeof Headers>[0]).get('x-stainless-retry-count') ?? 0);
    // Not `instanceof Request`: touching that global loads undici (see fetch-globals.ts).
    const counted = !String(typeof input === 'object' && 'url' in input ? input.url : input).includes('/count_tokens');
    let response: Response;
    try {
      response = await baseFetch(input, init);
    } catch (error) {
      if (counted && attempt < MAX_RETRIES && !init?.signal?.aborted) {
        notices.push(`retry ${attempt + 1}/${MAX_RETRIES} in ~${seconds(backoffMs(attempt))} (connection failed: ${causeOf(error)})`);
      }
      throw error;
    }
    const notice = counted && attempt < MAX_RETRIES ? retryNotice(response, attempt) : null;
    if (notice) notices.push(notice);
    return response;
  };
}

/** What one streamed attempt uses: the Messages resource, the retry notices and whether the server is Anthropic's. */
interface StreamContext {
  messages: Messages;
  notices: NoticeChannel;
  anthropicEndpoint: boolean;
  provider: ProviderSettings;
}

/** One streamed request: text and thinking as they arrive, retry notices while it waits, then the whole message. */
async function* streamOnce(
  sdk: StreamContext,
  request: ModelRequest,
  signal: AbortSignal,
  state: AttemptState,
): AsyncGenerator<ModelChunk> {
  const { notices } = sdk;
  notices.clear();
  // The diagnostics parameter is Anthropic's; a gateway or another server may reject a field it does not know.
  const { diagnostics, ...rest } = request;
  // A cloud takes its own model ids (providers.ts); everything else in the request is the same.
  const wire = { ...rest, model: providerModelId(sdk.provider.provider, rest.model) };
  const params = sdk.anthropicEndpoint && diagnostics ? { ...wire, diagnostics } : wire;
  const stream = sdk.messages.stream(params as API.MessageStreamParams, { signal });
  const events = stream[Symbol.asyncIterator]();
  let finished = false;
  try {
    for (;;) {
      // Race each event with retry notices, so a request the SDK is still retrying shows why it waits.
      const next = events.next();
      let result: IteratorResult<API.MessageStreamEvent> | null = null;
      while (result === null) {
        result = await Promise.race([next, notices.arrival().then(() => null)]);
        state.requestId ??= stream.request_id ?? null;
        for (const message of notices.drain()) yield { type: 'notice', message };
      }
      if (result.done) break;
      const event = result.value;
      if (event.type === 'message_start') state.usage = normaliseUsage(event.message.usage);
      else if (event.type === 'message_delta' && state.usage) state.usage = mergeDelta(state.usage, event.usage);
      if (event.type !== 'content_block_delta') continue;
      if (event.delta.type === 'text_delta') {
        state.text = true;
        yield { type: 'text', text: event.delta.text };
      } else if (event.delta.type === 'thinking_delta') {
        yield { type: 'thinking', text: event.delta.thinking };
      }
    }
    const message = await stream.finalMessage();
    finished = true;
    yield { type: 'message', response: modelResponse(message, stream.request_id ?? null) };
  } finally {
    state.requestId ??= stream.request_id ?? null;
    // A consumer that stops early (or a failure) must not leave the HTTP stream open.
    if (!finished) stream.abort();
  }
}

/** The loop's view of a finished message. */
function modelResponse(message: API.Message, requestId: string | null): Extract<ModelChunk, { type: 'message' }>['response'] {
  const diagnostics = (message as { diagnostics?: { cache_miss_reason?: { type?: string } | null } | null }).diagnostics;
  return {
    content: message.content as unknown as Block[],
    stopReason: message.stop_reason,
    usage: normaliseUsage(message.usage),
    requestId,
    id: message.id ?? null,
    model: message.model,
    stopSequence: message.stop_sequence,
    cacheMissReason: diagnostics?.cache_miss_reason?.type ?? null,
  };
}

/**
 * A request too large for the model: the API's 400 "prompt is too long: N tokens > M maximum" (and its wordings for
 * the context window), or a 413 for a body over the request size limit. Both mean the same to a user: send less.
 */
function isContextOverflow(status: number, detail: string): boolean {
  if (status === 413) return true;
  return /prompt is too long|context (window|length)|too many (input )?tokens|exceeds? the maximum (number of )?tokens/i.test(detail);
}

/** True for Anthropic's own API (no base URL, or api.anthropic.com), the one endpoint known to accept `diagnostics`. */
export function isAnthropicEndpoint(baseURL: string | undefined): boolean {
  if (baseURL === undefined) return true;
  try {
    return new URL(baseURL).hostname === 'api.anthropic.com';
  } catch {
    return false;
  }
}

/** Retry notices from the fetch observer, waiting to be yielded by the stream that is being retried. */
class NoticeChannel {
  #queue: string[] = [];
  #wake: (() => void) | null = null;
  #arrived: Promise<void> | null = null;

  push(message: string): void {
    this.#queue.push(message);
    this.#wake?.();
    this.#wake = null;
    this.#arrived = null;
  }

  /** Resolves at the next push (at once when notices are queued). */
  arrival(): Promise<void> {
    if (this.#queue.length > 0) return Promise.resolve();
    this.#arrived ??= new Promise<void>((resolve) => (this.#wake = resolve));
    return this.#arrived;
  }

  drain(): string[] {
    return this.#queue.splice(0);
  }

  clear(): void {
    this.#queue.length = 0;
  }
}

function normaliseUsage(usage: API.Usage): Usage {
  const out: Usage = {
    input_tokens: usage.input_tokens ?? 0,
    cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
    output_tokens: usage.output_tokens ?? 0,
  };
  const split = usage.cache_creation;
  if (split) {
    out.cache_creation = {
      ephemeral_5m_input_tokens: split.ephemeral_5m_input_tokens ?? 0,
      ephemeral_1h_input_tokens: split.ephemeral_1h_input_tokens ?? 0,
    };
  }
  return out;
}

/** A failure after the HTTP response began: a cut body or an in-stream `event: error` (status undefined). */
function isMidStreamFailure(error: unknown, errors: SdkErrors): boolean {
  if (error instanceof errors.APIUserAbortError) return false;
  if (error instanceof errors.APIError) return error.status === undefined && !(error instanceof errors.APIConnectionError);
  return error instanceof Error;
}

/** `retry 2/4 in 1.0 s (529 overloaded)` for a response the SDK will retry, else null (as the SDK decides). */
function retryNotice(response: Response, attempt: number): string | null {
  const status = response.status;
  const header = response.headers.get('x-should-retry');
  const retried = header === 'true' || (header !== 'false' && (status === 408 || status === 409 || status === 429 || status >= 500));
  if (!retried) return null;
  const wait = serverWaitMs(response.headers);
  const when = wait === null ? `~${seconds(backoffMs(attempt))}` : seconds(wait);
  return `retry ${attempt + 1}/${MAX_RETRIES} in ${when} (${status} ${STATUS_WORDS[status] ?? (status >= 500 ? 'server error' : 'error')})`;
}

const STATUS_WORDS: Record<number, string> = {
  408: 'request timeout',
  409: 'conflict',
  429: 'rate limited',
  500: 'server error',
  529: 'overloaded',
};

/** The wait the server asked for, read as the SDK reads it (retry-after-ms, then retry-after seconds or date). */
function serverWaitMs(headers: { get(name: string): string | null }): number | null {
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (ms > 0) return ms;
  const after = headers.get('retry-after');
  if (!after) return null;
  const secs = Number.parseFloat(after);
  const wait = Number.isNaN(secs) ? Date.parse(after) - Date.now() : secs * 1000;
  return wait > 0 ? wait : null;
}

/** The SDK's default backoff before retry `attempt + 1` (it subtracts up to 25 % jitter, hence the `~`). */
function backoffMs(attempt: number): number {
  return Math.min(500 * 2 ** attempt, 8000);
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function causeOf(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  return cause instanceof Error ? cause.message : String(cause);
}

function mergeDelta(usage: Usage, delta: API.MessageDeltaUsage): Usage {
  // message_delta usage is cumulative: overwrite what it reports.
  return {
    ...usage,
    input_tokens: delta.input_tokens ?? usage.input_tokens,
    cache_creation_input_tokens: delta.cache_creation_input_tokens ?? usage.cache_creation_input_tokens,
    cache_read_input_tokens: delta.cache_read_input_tokens ?? usage.cache_read_input_tokens,
    output_tokens: delta.output_tokens ?? usage.output_tokens,
  };
}

function describe(error: unknown, errors: SdkErrors): string {
  if (error instanceof errors.APIError) return error.type ?? error.message;
  return error instanceof Error ? error.message : String(error);
}

/** One line per failure that says what happened and what to do, ending with the request id when there is one. */
function toModelError(
  error: unknown,
  state: AttemptState,
  model: string,
  retriedOnce: boolean,
  wording: Wording,
): ModelError {
  if (error instanceof ModelError) return error;
  const afterOutput = state.text;
  const { errors } = wording;
  const where = endpointSetting(wording.provider);
  if (error instanceof errors.APIConnectionTimeoutError) {
    return new ModelError(
      `the API did not answer in time (connection timeout); check ${where} and your network`,
      undefined,
      'timeout',
      null,
      afterOutput,
    );
  }
  if (error instanceof errors.APIConnectionError) {
    // A cloud's client reports a failed credential lookup (AWS chain, Google token) as a connection error.
    const credentials = /credentials/i.test(error.message) ? cloudAccess(wording.provider, model) : null;
    return new ModelError(
      `could not reach the API (${causeText(error)}); ${credentials ?? `check ${where} and your network`}`,
      undefined,
      'connection_error',
      null,
      afterOutput,
    );
  }
  if (error instanceof errors.APIError) return apiError(error, state, model, wording);
  const message = error instanceof Error ? error.message : String(error);
  const id = state.requestId ? ` (request ${state.requestId})` : '';
  // The SDK re-wraps a JSON.parse failure of an SSE event in an AnthropicError whose cause is the SyntaxError.
  if (error instanceof SyntaxError || (error instanceof Error && error.cause instanceof SyntaxError)) {
    return new ModelError(
      `the API sent an event spelunk could not read (${message}); ask again, and report it if it repeats${id}`,
      undefined,
      'malformed_event',
      state.requestId,
      afterOutput,
    );
  }
  const what = afterOutput ? 'mid-answer (the text above is incomplete)' : retriedOnce ? 'before any text, twice' : 'before any text';
  return new ModelError(
    `the API stream was cut ${what} (${message}); retryable: ask again${id}`,
    undefined,
    'stream_cut',
    state.requestId,
    afterOutput,
  );
}

/** An HTTP error answer of the API, worded for its status. */
function apiError(error: Errors.APIError, state: AttemptState, model: string, wording: Wording): ModelError {
  const afterOutput = state.text;
  const requestId = error.requestID ?? state.requestId;
  const type = error.type ?? null;
  const detail = error.apiMessage ?? error.message;
  const id = requestId ? ` (request ${requestId})` : '';
  const fail = (message: string): ModelError => new ModelError(message, error.status, type, requestId, afterOutput);
  const cloud = cloudAccess(wording.provider, model);
  if (cloud !== null && (error.status === 401 || error.status === 403)) return fail(`API ${error.status} ${type ?? 'error'}: ${detail}; ${cloud}${id}`);
  switch (error.status) {
    case 401:
      return wording.credential === 'authToken'
        ? fail(
            `API 401 authentication_error: ${detail}; the bearer token in ANTHROPIC_AUTH_TOKEN was refused (ANTHROPIC_API_KEY is not set)${id}`,
          )
        : fail(`API 401 authentication_error: ${detail}; set a valid key with export ANTHROPIC_API_KEY=sk-ant-…${id}`);
    case 400:
    case 413:
      if (isContextOverflow(error.status, detail)) {
        return new ModelError(
          `the question does not fit ${model}'s context window (API ${error.status}: ${detail}); ask a narrower question or send less text${id}`,
          error.status,
          type,
          requestId,
          afterOutput,
          true,
        );
      }
      return fail(`API ${error.status} ${type ?? 'error'}: ${detail}${id}`);
    case 403:
      return fail(
        `API 403 ${type ?? 'permission_error'}: ${detail}; this API key is not allowed to use ${model} (or this endpoint): check the key's workspace, model access and limits at console.anthropic.com${id}`,
      );
    case 404:
      return /model/i.test(detail)
        ? fail(
            `unknown model "${model}" (API 404 ${type ?? 'not_found_error'}); pick another with -m or SPELUNK_MODEL, e.g. ${closest(model, KNOWN_MODELS, 3).join(', ')}${id}`,
          )
        : fail(`API 404 ${type ?? 'not_found_error'}: ${detail}; check that ${endpointSetting(wording.provider)} points at the Messages API${id}`);
    case undefined: {
      const when = afterOutput ? 'mid-answer (the text above is incomplete)' : 'before any text';
      return fail(`API stream failed ${when}: ${type ?? 'error'}: ${detail}; retryable: ask again${id}`);
    }
    default:
      return fail(`API ${error.status} ${type ?? 'error'}: ${detail}${id}`);
  }
}

/** A connection error's cause; a cloud's client says what it was doing (resolving credentials), the SDK "Connection error.". */
function causeText(error: Error): string {
  const cause = error.cause instanceof Error ? error.cause.message : null;
  if (error.message.startsWith('Connection error')) return cause ?? 'connection error';
  return cause ? `${error.message.replace(/\.$/, '')}: ${cause}` : error.message;
}
