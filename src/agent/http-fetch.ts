import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import type { Readable } from 'node:stream';
import { Headers, type HeadersInitLike } from './fetch-globals.js';

/**
 * A fetch for the SDK on node:http and node:https, so that a run never loads undici (Node's fetch: main-thread work on
 * every start; see fetch-globals.ts). It does what the SDK asks of a fetch and no more:
 * string or byte bodies, the signal (the SDK's timeout and every cancel abort through it, before and after the
 * response starts), a body read once as an async iterable of bytes (the SSE stream) or as text/JSON, connection
 * errors as `TypeError('fetch failed', { cause })` and a cut body as `TypeError('terminated', { cause })`, as undici
 * words them (client.ts and the SDK's retry logic read those). Redirects are not followed: the API does not redirect,
 * and following one would send the key to wherever it points; the 3xx answer reaches the SDK as an error.
 */
export function createHttpFetch(): typeof fetch {
  // One keep-alive pool per client and protocol: the requests of a conversation reuse the connection. Idle sockets
  // are unref'd by the agent, so they never keep a finished run alive.
  const agents = new Map<string, HttpAgent>();
  const agentFor = async (protocol: string): Promise<{ agent: HttpAgent; request: typeof httpRequest }> => {
    // node:https (and TLS) is loaded only for an https endpoint: the local test server speaks plain HTTP.
    const https = protocol === 'https:' ? await import('node:https') : null;
    const agent = agents.get(protocol) ?? (https ? new https.Agent({ keepAlive: true }) : new HttpAgent({ keepAlive: true }));
    agents.set(protocol, agent);
    return { agent, request: https ? https.request : httpRequest };
  };
  return (async (input: string | URL | { url: string }, init: RequestInit = {}) => {
    const url = new URL(typeof input === 'object' && 'url' in input ? input.url : String(input));
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError('fetch failed', { cause: new Error(`unsupported protocol ${url.protocol} (http: and https: only)`) });
    }
    const body = requestBody(init.body);
    const signal = init.signal ?? null;
    signal?.throwIfAborted();
    const { agent, request } = await agentFor(url.protocol);
    const headers: Record<string, string> = {};
    for (const [name, value] of new Headers(init.headers as HeadersInitLike)) headers[name] = value;
    if (body !== null) headers['content-length'] = String(body.byteLength);
    const options: RequestOptions = { method: (init.method ?? 'GET').toUpperCase(), headers, agent };
    return send(request, url, options, body, signal);
  }) as typeof fetch;
}

/** The bodies the SDK sends (JSON text; bytes for completeness); a stream or a form would need more than this fetch does. */
function requestBody(body: RequestInit['body']): Buffer | null {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  throw new TypeError('fetch failed', { cause: new Error('spelunk sends string or byte request bodies only') });
}

/** One HTTP exchange: resolves at the response head, rejects on a connection error or an abort before it. */
function send(
  request: typeof httpRequest,
  url: URL,
  options: RequestOptions,
  body: Buffer | null,
  signal: AbortSignal | null,
): Promise<Response> {
  return new Promise((resolve, reject) => {
    let req: ClientRequest | null = null;
    let res: IncomingMessage | null = null;
    const onAbort = (): void => {
      const reason = abortReason(signal);
      req?.destroy(reason);
      res?.destroy(reason);
      reject(reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const release = (): void => signal?.removeEventListener('abort', onAbort);
    req = request(url, options, (response) => {
      res = response;
      // An abort destroys the response with its reason: the body's reader gets it, and nothing else may (an 'error'
      // with no listener would end the process when the body is not being read at that moment).
      response.on('error', () => {});
      response.once('close', release);
      resolve(new HttpResponse(url.href, response) as unknown as Response);
    });
    req.on('error', (error) => {
      if (signal?.aborted) return reject(abortReason(signal));
      release();
      reject(new TypeError('fetch failed', { cause: error }));
    });
    req.end(body ?? undefined);
  });
}

/** What an aborted fetch rejects with: the signal's reason (the SDK aborts without one: a DOMException AbortError). */
function abortReason(signal: AbortSignal | null): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new DOMException('This operation was aborted', 'AbortError');
}

/**
 * The members of a fetch Response the SDK reads: status, ok, statusText, url, headers, a body iterated once (SSE),
 * text() and json(); the body is readable once, as with fetch.
 */
class HttpResponse {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly headers = new Headers();
  readonly body: AsyncIterable<Uint8Array>;
  #used = false;

  constructor(
    readonly url: string,
    message: IncomingMessage,
  ) {
    this.status = message.statusCode ?? 0;
    this.statusText = message.statusMessage ?? '';
    this.ok = this.status >= 200 && this.status < 300;
    for (let i = 0; i + 1 < message.rawHeaders.length; i += 2) this.headers.append(message.rawHeaders[i]!, message.rawHeaders[i + 1]!);
    const stream = decoded(message, this.headers.get('content-encoding'));
    this.body = {
      [Symbol.asyncIterator]: () => {
        this.#take();
        return bodyIterator(stream);
      },
    };
  }

  get bodyUsed(): boolean {
    return this.#used;
  }

  async text(): Promise<string> {
    const chunks: Uint8Array[] = [];
    for await (const chunk of this.body) chunks.push(chunk);
    return Buffer.concat(chunks).toString('utf8');
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  #take(): void {
    if (this.#used) throw new TypeError('Body is unusable: Body has already been read');
    this.#used = true;
  }
}

/** A compressed body, decompressed (spelunk asks for none, but a gateway may send one anyway). */
function decoded(message: IncomingMessage, encoding: string | null): Readable {
  const coding = encoding?.trim().toLowerCase() ?? 'identity';
  if (coding === 'identity' || coding === '') return message;
  // Loaded only for such a response: no start pays for zlib.
  const zlib = process.getBuiltinModule('node:zlib');
  const inflate =
    coding === 'gzip' || coding === 'x-gzip'
      ? zlib.createGunzip()
      : coding === 'deflate'
        ? zlib.createInflate()
        : coding === 'br'
          ? zlib.createBrotliDecompress()
          : null;
  if (inflate === null) return message;
  message.on('error', (error) => inflate.destroy(error));
  inflate.on('close', () => message.destroy());
  return message.pipe(inflate);
}

/**
 * The body's chunks. A failure while reading becomes `TypeError('terminated')` with the cause, as undici says it (an
 * abort stays the AbortError it is); `return()` (the SDK cancelling a body it does not want) closes the connection.
 */
function bodyIterator(stream: Readable): AsyncIterator<Uint8Array> {
  const inner = stream[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
  return {
    next: () =>
      inner.next().catch((error: unknown) => {
        throw error instanceof Error && error.name === 'AbortError' ? error : new TypeError('terminated', { cause: error });
      }),
    return: async () => {
      await inner.return?.();
      stream.destroy();
      return { done: true, value: undefined };
    },
  };
}
