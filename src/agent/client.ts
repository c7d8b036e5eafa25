import { BaseAnthropic } from '@anthropic-ai/sdk/client';
import * as Errors from '@anthropic-ai/sdk/core/error';
import { Messages } from '@anthropic-ai/sdk/resources/messages/messages';
import type * as API from '@anthropic-ai/sdk/resources/messages/messages';
import type { Usage } from './events.js';
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
  baseURL?: string;
  /** Lets a caller observe retried responses (429 wait times) without the SDK's console logger. */
  fetchImpl?: typeof fetch;
}

/** The real model client: the only runtime user of @anthropic-ai/sdk. */
export function createAnthropicClient(opts: ClientOptions): ModelClient {
  const notices: string[] = [];
  const baseFetch = opts.fetchImpl ?? fetch;
  const observingFetch: typeof fetch = async (input, init) => {
    const response = await baseFetch(input, init);
    const notice = retryNotice(response);
    if (notice) notices.push(notice);
    return response;
  };
  // Only the Messages resource: the full client pulls in every API resource (~1 MB more to compile at start-up).
  const base = new BaseAnthropic({
    apiKey: opts.apiKey,
    baseURL: opts.baseURL ?? null,
    maxRetries: MAX_RETRIES,
    timeout: REQUEST_TIMEOUT_MS,
    fetch: observingFetch,
    logLevel: 'off',
  });
  const sdk = { messages: new Messages(base) };

  async function* streamOnce(request: ModelRequest, signal: AbortSignal, shown: { text: boolean }): AsyncGenerator<ModelChunk> {
    const stream = sdk.messages.stream(request as API.MessageStreamParams, { signal });
    try {
      for await (const event of stream) {
        while (notices.length > 0) yield { type: 'notice', message: notices.shift()! };
        if (event.type !== 'content_block_delta') continue;
        if (event.delta.type === 'text_delta') {
          shown.text = true;
          yield { type: 'text', text: event.delta.text };
        } else if (event.delta.type === 'thinking_delta') {
          yield { type: 'thinking', text: event.delta.thinking };
        }
      }
      const message = await stream.finalMessage();
      yield {
        type: 'message',
        response: {
          content: message.content as unknown as Block[],
          stopReason: message.stop_reason,
          usage: normaliseUsage(message.usage),
          requestId: stream.request_id ?? null,
        },
      };
    } finally {
      while (notices.length > 0) notices.shift();
    }
  }

  return {
    async *stream(request, signal) {
      const shown = { text: false };
      try {
        yield* streamOnce(request, signal, shown);
      } catch (error) {
        if (signal.aborted) throw new ModelAbortError();
        // The SDK never retries once a response has started; a cut before any visible text is safe to repeat once.
        if (!shown.text && isMidStreamFailure(error)) {
          yield { type: 'notice', message: `stream interrupted (${describe(error)}); retrying once` };
          try {
            yield* streamOnce(request, signal, shown);
            return;
          } catch (again) {
            if (signal.aborted) throw new ModelAbortError();
            throw toModelError(again, shown.text);
          }
        }
        throw toModelError(error, shown.text);
      }
    },
    async countTokens(request, signal) {
      try {
        const { model, system, tools, messages, thinking } = request;
        const params = { model, system, tools, messages, ...(thinking ? { thinking } : {}) };
        const counted = await sdk.messages.countTokens(params as API.MessageCountTokensParams, { signal, maxRetries: 1 });
        return counted.input_tokens;
      } catch {
        return null;
      }
    },
  };
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
function isMidStreamFailure(error: unknown): boolean {
  if (error instanceof Errors.APIUserAbortError) return false;
  if (error instanceof Errors.APIError) return error.status === undefined && !(error instanceof Errors.APIConnectionError);
  return error instanceof Error;
}

function retryNotice(response: Response): string | null {
  const status = response.status;
  if (status !== 408 && status !== 409 && status !== 429 && status < 500) return null;
  if (response.headers.get('x-should-retry') === 'false') return null;
  const ms = Number(response.headers.get('retry-after-ms'));
  const seconds = Number(response.headers.get('retry-after'));
  const wait = Number.isFinite(ms) && ms > 0 ? `${(ms / 1000).toFixed(1)} s` : Number.isFinite(seconds) && seconds >= 0 && response.headers.has('retry-after') ? `${seconds} s` : 'a moment';
  const what = status === 429 ? 'rate limited (429)' : status === 529 ? 'API overloaded (529)' : `API error ${status}`;
  return `${what}; retrying after ${wait} if retries remain`;
}

function describe(error: unknown): string {
  if (error instanceof Errors.APIError) return error.type ?? error.message;
  return error instanceof Error ? error.message : String(error);
}

/** One line per failure, with status, type and request id; 401 says how to fix the key. */
function toModelError(error: unknown, afterOutput: boolean): ModelError {
  if (error instanceof ModelError) return error;
  if (error instanceof Errors.APIConnectionTimeoutError) {
    return new ModelError('the API did not answer in time (connection timeout); check ANTHROPIC_BASE_URL and your network', undefined, 'timeout', null, afterOutput);
  }
  if (error instanceof Errors.APIConnectionError) {
    return new ModelError(`could not reach the API (${error.cause instanceof Error ? error.cause.message : 'connection error'}); check ANTHROPIC_BASE_URL and your network`, undefined, 'connection_error', null, afterOutput);
  }
  if (error instanceof Errors.APIError) {
    const requestId = error.requestID ?? null;
    const type = error.type ?? null;
    const detail = error.apiMessage ?? error.message;
    const where = requestId ? ` (request ${requestId})` : '';
    if (error.status === 401) {
      return new ModelError(`API 401 authentication_error: ${detail}${where}; set a valid key with export ANTHROPIC_API_KEY=sk-ant-…`, 401, type, requestId, afterOutput);
    }
    if (error.status === undefined) {
      const when = afterOutput ? 'after the answer had started' : 'mid-stream';
      return new ModelError(`API stream failed ${when}: ${type ?? 'error'}: ${detail}${where}`, undefined, type, requestId, afterOutput);
    }
    return new ModelError(`API ${error.status} ${type ?? 'error'}: ${detail}${where}`, error.status, type, requestId, afterOutput);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ModelError(`API stream failed: ${message}`, undefined, null, null, afterOutput);
}
