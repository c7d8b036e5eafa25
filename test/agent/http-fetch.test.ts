import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { BaseAnthropic } from '@anthropic-ai/sdk/client';
import * as Errors from '@anthropic-ai/sdk/core/error';
import { Messages } from '@anthropic-ai/sdk/resources/messages/messages';
import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropicClient } from '../../src/agent/client.js';
import { Headers as OwnHeaders } from '../../src/agent/fetch-globals.js';
import { createHttpFetch } from '../../src/agent/http-fetch.js';
import { ModelAbortError, ModelError, type ModelChunk, type ModelRequest } from '../../src/agent/model.js';
import { httpError, reply, startMockApi, text, type MockApi } from '../support/mock-api.js';

// The client's own fetch on node:http (issue 22: no undici at start-up): the real SDK over real HTTP against the local
// Messages API server, and against small servers for what that one does not do (gzip, redirects, refused connections).

let api: MockApi | null = null;
const servers: Array<{ close(): void }> = [];
afterEach(async () => {
  await api?.close();
  api = null;
  for (const server of servers.splice(0)) server.close();
});

const request: ModelRequest = { model: 'claude-sonnet-5-5', max_tokens: 100, system: [], tools: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }] };

async function collect(stream: AsyncIterable<ModelChunk>): Promise<ModelChunk[]> {
  const chunks: ModelChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** A one-route server on 127.0.0.1; resolves with its base URL. */
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push({ close: () => server.close() });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('the client over its node:http fetch', () => {
  it('streams an answer and sends the key, the API version and the JSON body', async () => {
    api = await startMockApi({ expectedKey: 'sk-test' });
    api.enqueue(reply(text('The router is in src/router.ts:1.')));
    const client = createAnthropicClient({ apiKey: 'sk-test', baseURL: api.url });
    const chunks = await collect(client.stream(request, new AbortController().signal));
    expect(chunks.filter((c) => c.type === 'text').map((c) => (c as { text: string }).text).join('')).toBe('The router is in src/router.ts:1.');
    expect(chunks.at(-1)).toMatchObject({ type: 'message', response: { requestId: 'req_mock_1', stopReason: 'end_turn' } });
    const seen = api.requests[0]!;
    expect(seen.headers.authorization).toBe('Bearer sk-test');
    expect(seen.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.body).toMatchObject({ model: 'claude-sonnet-5-5', stream: true });
  });

  it('retries a 529 the server says to retry, with the notice read from the response headers', async () => {
    api = await startMockApi();
    api.enqueue(httpError(529, 'overloaded_error', 'Overloaded', { 'retry-after-ms': '10' }), reply(text('ok')));
    const chunks = await collect(createAnthropicClient({ apiKey: 'k', baseURL: api.url }).stream(request, new AbortController().signal));
    expect(chunks[0]).toEqual({ type: 'notice', message: 'retry 1/4 in 0.0 s (529 overloaded)' });
    expect(chunks.at(-1)).toMatchObject({ type: 'message' });
    expect(api.requests.map((r) => r.status)).toEqual([529, 200]);
    expect(api.requests[1]!.headers['x-stainless-retry-count']).toBe('1');
  });

  it('reads an error body (a 401) into the one-line message with the request id', async () => {
    api = await startMockApi({ expectedKey: 'right' });
    const error = await failure(collect(createAnthropicClient({ apiKey: 'wrong', baseURL: api.url }).stream(request, new AbortController().signal)));
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).message).toMatch(/^API 401 authentication_error: .*ANTHROPIC_API_KEY.*\(request req_mock_1\)$/);
  });

  it('counts tokens through a JSON (not streamed) response', async () => {
    api = await startMockApi();
    const counted = await createAnthropicClient({ apiKey: 'k', baseURL: api.url }).countTokens(request, new AbortController().signal);
    expect(counted).toBeGreaterThan(0);
    expect(api.requests[0]!.path).toBe('/v1/messages/count_tokens');
  });

  it('a cancel mid-answer closes the connection and carries the usage billed so far', async () => {
    api = await startMockApi();
    api.enqueue({ kind: 'stall', afterText: 'partial' });
    const abort = new AbortController();
    const client = createAnthropicClient({ apiKey: 'k', baseURL: api.url });
    const error = await failure(
      (async () => {
        for await (const chunk of client.stream(request, abort.signal)) if (chunk.type === 'text') abort.abort();
      })(),
    );
    expect(error).toBeInstanceOf(ModelAbortError);
    expect((error as ModelAbortError).usage).toMatchObject({ output_tokens: 1 });
    await expect.poll(() => api!.requests[0]!.clientLeft).toBe(true);
  });

  it('a cancel before the response starts ends the request at once', async () => {
    api = await startMockApi();
    api.enqueue({ kind: 'hang' });
    const abort = new AbortController();
    const pending = collect(createAnthropicClient({ apiKey: 'k', baseURL: api.url }).stream(request, abort.signal));
    await api.waitForRequests(1);
    abort.abort();
    expect(await failure(pending)).toBeInstanceOf(ModelAbortError);
    await expect.poll(() => api!.requests[0]!.clientLeft).toBe(true);
  });

  it('a body cut mid-stream is worded as undici words it, and retried once before any text', async () => {
    api = await startMockApi();
    api.enqueue({ kind: 'stream_cut' }, { kind: 'stream_cut', afterText: 'half an ans' });
    const chunks: ModelChunk[] = [];
    const error = await failure(
      (async () => {
        for await (const chunk of createAnthropicClient({ apiKey: 'k', baseURL: api!.url }).stream(request, new AbortController().signal)) chunks.push(chunk);
      })(),
    );
    expect(chunks[0]).toEqual({ type: 'notice', message: 'stream interrupted before any text (terminated); retrying once' });
    expect((error as ModelError).message).toMatch(/^the API stream was cut mid-answer \(the text above is incomplete\) \(terminated\)/);
  });

  it('the SDK timeout aborts a silent server through the signal and becomes a connection timeout', async () => {
    api = await startMockApi();
    api.enqueue({ kind: 'hang' });
    const sdk = new Messages(new BaseAnthropic({ apiKey: 'k', baseURL: api.url, fetch: createHttpFetch(), timeout: 200, maxRetries: 0 }));
    const error = await failure(sdk.create({ model: 'claude-sonnet-5-5', max_tokens: 10, messages: [{ role: 'user', content: 'q' }] }));
    expect(error).toBeInstanceOf(Errors.APIConnectionTimeoutError);
    await expect.poll(() => api!.requests[0]!.clientLeft).toBe(true);
  });
});

describe('createHttpFetch', () => {
  it('refuses a header value with CR/LF before anything is sent (no header injection)', async () => {
    let hits = 0;
    const url = await serve((_req, res) => {
      hits++;
      res.end();
    });
    const error = await failure(createHttpFetch()(url, { headers: { 'x-a': 'v\r\nx-injected: 1' } }));
    expect(error).toBeInstanceOf(TypeError);
    expect(hits).toBe(0);
  });

  it('says "fetch failed" with the socket error as the cause when nothing listens', async () => {
    const url = await serve(() => {});
    servers.pop()!.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const error = await failure(createHttpFetch()(`${url}/v1/messages`, { method: 'POST', body: '{}' }));
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe('fetch failed');
    expect(((error as TypeError).cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
  });

  it('does not follow a redirect (the key would go wherever it points)', async () => {
    let redirectedTo = 0;
    const elsewhere = await serve((_req, res) => {
      redirectedTo++;
      res.end('{}');
    });
    const url = await serve((_req, res) => {
      res.writeHead(307, { location: `${elsewhere}/v1/messages` });
      res.end();
    });
    const response = await createHttpFetch()(`${url}/v1/messages`, { method: 'POST', body: '{}', headers: { 'x-api-key': 'secret' } });
    expect(response.status).toBe(307);
    expect(response.ok).toBe(false);
    expect(redirectedTo).toBe(0);
  });

  it('decompresses a gzip body, reads it once, and joins repeated response headers', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, [
        ['content-type', 'application/json'],
        ['content-encoding', 'gzip'],
        ['x-multi', 'a'],
        ['x-multi', 'b'],
      ]);
      res.end(gzipSync('{"ok":true}'));
    });
    const response = await createHttpFetch()(new URL(`${url}/x`));
    expect(response.headers.get('X-Multi')).toBe('a, b');
    expect(response.url).toBe(`${url}/x`);
    expect(await response.json()).toEqual({ ok: true });
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
  });

  it('an already aborted signal rejects with its AbortError and sends nothing', async () => {
    let hits = 0;
    const url = await serve((_req, res) => {
      hits++;
      res.end();
    });
    const abort = new AbortController();
    abort.abort();
    expect(await failure(createHttpFetch()(url, { signal: abort.signal }))).toMatchObject({ name: 'AbortError' });
    expect(hits).toBe(0);
  });

  it('refuses a stream body rather than send something else', async () => {
    const url = await serve((_req, res) => res.end());
    const body = new ReadableStream();
    await expect(createHttpFetch()(url, { method: 'POST', body, duplex: 'half' } as RequestInit)).rejects.toThrow('fetch failed');
  });
});

// Each row runs against Node's own Headers (undici) and spelunk's: what the SDK sees must not depend on which it got.
const headerRows: Array<[string, (h: Headers) => unknown]> = [
  ['case-insensitive get', (h) => (h.set('Content-Type', 'a'), h.get('content-type'))],
  ['append joins with ", "', (h) => (h.append('x-a', '1'), h.append('X-A', '2'), h.get('x-a'))],
  ['set replaces', (h) => (h.append('x-a', '1'), h.set('x-a', '2'), h.get('x-a'))],
  ['missing is null', (h) => h.get('x-none')],
  ['has and delete', (h) => (h.set('x-a', '1'), h.delete('X-A'), h.has('x-a'))],
  ['values trimmed', (h) => (h.set('x-a', ' \t v \t'), h.get('x-a'))],
  ['entries sorted, lower-cased', (h) => (h.set('b', '2'), h.set('A', '1'), h.append('c', '3'), h.append('c', '4'), [...h.entries()])],
  ['set-cookie kept apart', (h) => (h.append('set-cookie', 'a=1'), h.append('set-cookie', 'b=2'), [[...h], h.getSetCookie()])],
  ['keys and values', (h) => (h.set('b', '2'), h.set('a', '1'), [[...h.keys()], [...h.values()]])],
  ['forEach', (h) => (h.set('a', '1'), ((seen: string[]) => (h.forEach((v, k) => seen.push(`${k}=${v}`)), seen))([]))],
  ['CR/LF in a value throws', (h) => throws(() => h.set('x-a', 'v\r\nx-b: 1'))],
  ['NUL in a value throws', (h) => throws(() => h.append('x-a', 'v\0'))],
  ['a space in a name throws', (h) => throws(() => h.set('x a', 'v'))],
  ['an empty name throws', (h) => throws(() => h.get(''))],
  ['toStringTag', (h) => Object.prototype.toString.call(h)],
];
const initRows: Array<[string, unknown]> = [
  ['a record', { 'X-A': '1', b: '2' }],
  ['pairs', [['x-a', '1'], ['x-a', '2']]],
  ['another Headers', new globalThis.Headers([['x-a', '1']])],
  ['nothing', undefined],
];

function throws(fn: () => unknown): string {
  try {
    fn();
    return 'no throw';
  } catch (error) {
    return error instanceof TypeError ? 'TypeError' : 'other';
  }
}

describe('fetch-globals Headers matches Node’s own', () => {
  it.each(headerRows)('%s', (_name, op) => {
    expect(op(new OwnHeaders() as unknown as Headers)).toEqual(op(new globalThis.Headers()));
  });

  it.each(initRows)('constructed from %s', (_name, init) => {
    expect([...new OwnHeaders(init as never)]).toEqual([...new globalThis.Headers(init as ConstructorParameters<typeof globalThis.Headers>[0])]);
  });

  it('a pair of the wrong length throws', () => {
    expect(throws(() => new OwnHeaders([['a', '1', '2']] as never))).toBe('TypeError');
  });
});
