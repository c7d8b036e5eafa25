/**
 * A local server that speaks the Anthropic Messages API wire format (SSE and JSON), validates requests the way the
 * real API does, simulates prompt-cache accounting and injects scripted faults. Integration tests point the real SDK
 * at it through ANTHROPIC_BASE_URL; nothing here is mocked at the module level.
 *
 *   const api = await startMockApi();
 *   api.enqueue(reply(toolUse('bash', { command: 'ls' })), reply(text('Done.')));
 *   // run with ANTHROPIC_BASE_URL=api.url ANTHROPIC_API_KEY=test-key, then inspect api.requests
 *   await api.close();
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { accountCache, outputTokensOf, promptTokens, type MockUsage } from './mock-api-cache.js';
import { cloudDoor, type CloudStandIn } from './mock-api-cloud.js';
import { checkRequest } from './mock-api-rules.js';
import * as wire from './mock-api-stream.js';
import type { Exchange, OutBlock, OutMessage } from './mock-api-stream.js';

export type { MockUsage } from './mock-api-cache.js';
export type { CloudStandIn } from './mock-api-cloud.js';

/** Smallest prefix (tokens) a breakpoint must cover to be written, as for Sonnet/Opus 4.x–5 models. */
const DEFAULT_MIN_CACHE_TOKENS = 1024;

export type StopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded';

/** A content block the mock "model" produces. tool_use ids default to toolu_mock_<n>. */
export type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id?: string; name: string; input: unknown }
  | { type: 'thinking'; thinking: string; signature: string };

/** What the server does with one /v1/messages request. */
export type Reply =
  | {
      kind: 'message';
      content: Block[];
      /** Default: tool_use when any tool_use block is present, else end_turn. */
      stop_reason?: StopReason;
      /** Overrides the computed usage numbers (reported and recorded). */
      usage?: Partial<MockUsage>;
      /** Wait before the response starts. */
      delayMs?: number;
      /** Wait between SSE events. */
      chunkDelayMs?: number;
    }
  | { kind: 'http_error'; status: number; errorType: string; message: string; headers?: Record<string, string> }
  /** message_start, `afterBlocks` complete blocks of `content`, `afterText` as an unfinished text block, then the socket dies. */
  | { kind: 'stream_cut'; content?: Block[]; afterBlocks?: number; afterText?: string }
  /** message_start, optional `afterText`, then an `event: error` (default overloaded_error). */
  | { kind: 'stream_error'; errorType?: string; message?: string; afterText?: string }
  /** Streaming only: message_start, optional `afterText`, then an event whose data is not JSON (a malformed event). */
  | { kind: 'stream_malformed'; afterText?: string }
  /** Streaming only: message_start (usage reported, so billed), optional `afterText`, then silence until the client aborts. */
  | { kind: 'stall'; afterText?: string }
  /** Accepts the request and never answers, until the client aborts or the server closes. */
  | { kind: 'hang' }
  | { kind: 'slow'; delayMs: number; then: Reply };

/** A reply, or a function computing one from the request (dynamic scripts). */
export type Scripted = Reply | ((req: RecordedRequest) => Reply);

/** The JSON body of a request, loosely typed for assertions. */
export interface RequestBody {
  model?: string;
  max_tokens?: number;
  stream?: boolean;
  system?: string | Array<Record<string, any>>;
  tools?: Array<Record<string, any>>;
  messages?: Array<{ role: string; content: string | Array<Record<string, any>> }>;
  [key: string]: unknown;
}

/** Everything the server saw and answered, in arrival order. */
export interface RecordedRequest {
  /** 1-based, shared by all endpoints; also the n of `request-id: req_mock_<n>`. */
  n: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body ({} when it was not JSON). */
  body: RequestBody;
  /** HTTP status sent (200 for streams, even ones later cut or errored); undefined while pending or hanging. */
  status?: number;
  /** The error message sent, for rejected requests and faults. */
  error?: string;
  /** The usage the server reported, when it produced (part of) a message. */
  usage?: MockUsage;
  /** True once the client closed the connection before the response ended (an aborted request), not the server. */
  clientLeft?: boolean;
}

export interface MockOptions {
  /** When set, any other Bearer key gets 401. */
  expectedKey?: string;
  /** Minimum cacheable prefix in tokens (default 1024). */
  minCacheTokens?: number;
  /** What to do when the queue is empty (default: a non-retryable 500 "mock: no scripted reply left"). */
  fallback?: Scripted;
  /** Stand in for a cloud (mock-api-cloud.ts): its paths, credential and stream framing in front of the same model. */
  cloud?: CloudStandIn;
}

export interface MockApi {
  /** Base URL for ANTHROPIC_BASE_URL / baseURL, without a trailing slash. */
  url: string;
  requests: RecordedRequest[];
  /** Queues replies, consumed one per accepted /v1/messages request (rejected requests consume none). */
  enqueue(...replies: Scripted[]): void;
  /** Resolves once `count` requests (any endpoint) have arrived. */
  waitForRequests(count: number): Promise<void>;
  /** Forgets every cache entry (what a TTL expiry does). */
  clearCache(): void;
  /** Stops the server and destroys open connections, hanging ones included. */
  close(): Promise<void>;
}

/** A text block. */
export const text = (s: string): Block => ({ type: 'text', text: s });
/** A tool_use block; the id defaults to toolu_mock_<n>. */
export const toolUse = (name: string, input: unknown, id?: string): Block =>
  id === undefined ? { type: 'tool_use', name, input } : { type: 'tool_use', id, name, input };
/** A thinking block. */
export const thinking = (thought: string, signature = 'sig_mock'): Block => ({ type: 'thinking', thinking: thought, signature });
/** A message reply made of these blocks. */
export const reply = (...content: Block[]): Reply => ({ kind: 'message', content });
/** An HTTP error reply with the API's error body. */
export const httpError = (status: number, errorType: string, message: string, headers?: Record<string, string>): Reply =>
  headers === undefined
    ? { kind: 'http_error', status, errorType, message }
    : { kind: 'http_error', status, errorType, message, headers };

/** Answers with an error: records it and sends the API's error body. */
type Fail = (status: number, type: string, message: string, headers?: Record<string, string>) => void;

/** Starts the server on 127.0.0.1 with an ephemeral port. */
export async function startMockApi(opts: MockOptions = {}): Promise<MockApi> {
  const minCacheTokens = opts.minCacheTokens ?? DEFAULT_MIN_CACHE_TOKENS;
  const queue: Scripted[] = [];
  const requests: RecordedRequest[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const cache = new Set<string>();
  const sockets = new Set<Socket>();
  const closing = new AbortController();
  const ids = { message: 0, toolUse: 0 };

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      // A broken script (e.g. a reply function that throws) must fail the test at once, not after SDK retries.
      const error = { type: 'api_error', message: `mock: internal failure: ${String(err)}` };
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json', 'x-should-retry': 'false' });
      res.end(JSON.stringify({ type: 'error', error }));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.on('error', () => {}); // a client that vanished mid-write is a scenario, not a server failure
    const raw = await readBody(req);
    const parsed = parseJson(raw);
    const record: RecordedRequest = {
      n: requests.length + 1,
      method: req.method ?? '',
      path: (req.url ?? '').split('?')[0] ?? '',
      headers: req.headers,
      body: (parsed ?? {}) as RequestBody,
    };
    requests.push(record);
    for (const w of waiters.filter((w) => requests.length >= w.count)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
    const left = new AbortController();
    res.on('close', () => {
      if (!res.writableEnded && !closing.signal.aborted) record.clientLeft = true;
      left.abort();
    });
    const x: Exchange = { res, signal: AbortSignal.any([left.signal, closing.signal]), requestId: `req_mock_${record.n}` };
    const fail: Fail = (status, type, message, headers) => {
      Object.assign(record, { status, error: message });
      wire.sendError(x, status, type, message, headers);
    };

    if (opts.cloud) {
      const door = await cloudDoor(opts.cloud, record.method, record.path, (req.url ?? '').split('?')[1] ?? '', req.headers, raw, parsed);
      if (door.kind === 'refused') return fail(door.status, door.type, door.message);
      if (door.kind === 'answered') {
        record.status = door.status;
        return wire.sendJson(x, door.status, door.body);
      }
      record.body = door.request.body;
      x.framing = door.request.framing;
    } else {
      const route = `${record.method} ${record.path}`;
      if (route !== 'POST /v1/messages' && route !== 'POST /v1/messages/count_tokens') {
        return fail(404, 'not_found_error', `Not found: ${route}`);
      }
      const auth = authProblem(req.headers, opts.expectedKey);
      if (auth) return fail(401, 'authentication_error', auth);
      if (!req.headers['anthropic-version']) return fail(400, 'invalid_request_error', 'anthropic-version: header is required');
    }
    if (raw !== '' && parsed === undefined) {
      return fail(400, 'invalid_request_error', 'There was an error parsing the body of your request: invalid JSON');
    }
    const counting = record.path.endsWith('/count_tokens');
    const problem = checkRequest(opts.cloud ? record.body : parsed, { requireMaxTokens: !counting, forbidPrefill: !counting });
    if (problem) return fail(400, 'invalid_request_error', problem);
    if (counting) {
      record.status = 200;
      return wire.sendJson(x, 200, { input_tokens: promptTokens(record.body) });
    }
    const next = queue.shift() ?? opts.fallback;
    if (next === undefined) {
      // Not retryable, so a test that makes one request too many fails at once instead of after SDK backoff.
      return fail(500, 'api_error', 'mock: no scripted reply left', { 'x-should-retry': 'false' });
    }
    await answer(typeof next === 'function' ? next(record) : next, record, x, fail);
  }

  async function answer(r: Reply, record: RecordedRequest, x: Exchange, fail: Fail): Promise<void> {
    const streaming = record.body.stream === true;
    switch (r.kind) {
      case 'slow':
        if (await wire.pause(r.delayMs, x.signal)) await answer(r.then, record, x, fail);
        return;
      case 'hang':
        if (x.signal.aborted) return;
        await new Promise<void>((resolve) => x.signal.addEventListener('abort', () => resolve(), { once: true }));
        return;
      case 'http_error':
        return fail(r.status, r.errorType, r.message, r.headers);
      case 'message': {
        const message = compose(record, r.content, r.stop_reason, r.usage);
        if (!(await wire.pause(r.delayMs ?? 0, x.signal))) return;
        record.status = 200;
        if (!streaming) return wire.sendJson(x, 200, toJson(message));
        return wire.streamMessage(x, message, r.chunkDelayMs ?? 0);
      }
      case 'stream_cut': {
        const content = r.content ?? Array.from({ length: r.afterBlocks ?? 0 }, (_, i) => text(`block ${i} before the cut`));
        const message = compose(record, content, undefined, undefined);
        Object.assign(record, { status: 200, error: 'stream cut' });
        if (!streaming) return wire.cutJson(x, toJson(message));
        return wire.streamCut(x, message, message.content.slice(0, r.afterBlocks ?? 0), r.afterText);
      }
      case 'stream_malformed':
      case 'stall': {
        const message = compose(record, [], undefined, undefined);
        Object.assign(record, { status: 200 }, r.kind === 'stream_malformed' ? { error: 'malformed event' } : {});
        if (r.kind === 'stall') return wire.streamStall(x, message, r.afterText);
        return wire.streamMalformed(x, message, r.afterText);
      }
      case 'stream_error': {
        const error = { type: r.errorType ?? 'overloaded_error', message: r.message ?? 'Overloaded' };
        if (!streaming) return fail(error.type === 'overloaded_error' ? 529 : 500, error.type, error.message);
        const message = compose(record, [], undefined, undefined);
        Object.assign(record, { status: 200, error: error.message });
        return wire.streamError(x, message, error, r.afterText);
      }
    }
  }

  /** The final message for a reply: ids assigned, usage computed (and the cache map updated), overrides applied. */
  function compose(
    record: RecordedRequest,
    content: Block[],
    stop: StopReason | undefined,
    override: Partial<MockUsage> | undefined,
  ): OutMessage {
    // Every tool_use carries `caller`, as the real API's do (a client that drops it on a resume misses the cache).
    const blocks: OutBlock[] = content.map((b) =>
      b.type === 'tool_use' ? { ...b, id: b.id ?? `toolu_mock_${++ids.toolUse}`, caller: { type: 'direct' } } : b,
    );
    const prompt = accountCache(record.body, cache, minCacheTokens);
    const usage: MockUsage = { ...prompt, output_tokens: outputTokensOf(blocks), ...override };
    record.usage = usage;
    return {
      id: `msg_mock_${++ids.message}`,
      model: String(record.body.model),
      content: blocks,
      stop_reason: stop ?? (blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn'),
      usage,
    };
  }

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...replies) => void queue.push(...replies),
    waitForRequests: (count) =>
      requests.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
    clearCache: () => cache.clear(),
    close: () =>
      new Promise<void>((resolve) => {
        closing.abort();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

/** The Bearer key check; the SDK sends `Authorization: Bearer <key>`. */
function authProblem(headers: IncomingHttpHeaders, expectedKey: string | undefined): string | null {
  const match = /^Bearer (\S+)$/.exec(headers.authorization ?? '');
  if (!match) return 'missing authentication: send the API key as "Authorization: Bearer <key>"';
  if (expectedKey !== undefined && match[1] !== expectedKey) return 'invalid bearer token';
  return null;
}

function toJson(message: OutMessage): object {
  const { id, model, content, stop_reason, usage } = message;
  const usageOut = { ...usage, service_tier: 'standard' };
  return { id, type: 'message', role: 'assistant', model, content, stop_reason, stop_sequence: null, stop_details: null, usage: usageOut };
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
