import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MockUsage, PromptUsage } from './mock-api-cache.js';
import { eventStreamFrame, type Framing } from './mock-api-cloud.js';

/** Text and thinking arrive in deltas of at most this many characters, so clients see real incremental output. */
const TEXT_CHUNK_CHARS = 16;
/** Tool input JSON arrives in this many input_json_delta pieces (fewer when it is shorter). */
const JSON_PIECES = 3;

/** A content block as it appears in the final message (ids already assigned). */
export type OutBlock =
  | { type: 'text'; text: string }
  /** `caller` as the real API sends it on every tool_use (`{"type":"direct"}` for a call the model made itself). */
  | { type: 'tool_use'; id: string; name: string; input: unknown; caller?: { type: string } }
  | { type: 'thinking'; thinking: string; signature: string };

/** The complete message the mock answers with. */
export interface OutMessage {
  id: string;
  model: string;
  content: OutBlock[];
  stop_reason: string;
  usage: MockUsage;
}

/** One HTTP exchange: where to write, and the signal that fires when the client leaves or the server closes. */
export interface Exchange {
  res: ServerResponse;
  signal: AbortSignal;
  requestId: string;
  /** How stream events are framed: SSE (the API, Vertex, Foundry) or AWS event-stream frames (Bedrock). */
  framing?: Framing;
}

type Event = [name: string, data: object];

/** Streams a whole message as the API does: message_start, ping, the blocks, message_delta, message_stop. */
export async function streamMessage(x: Exchange, message: OutMessage, chunkDelayMs: number): Promise<void> {
  const { output_tokens, ...prompt } = message.usage;
  const events: Event[] = [startEvent(message, prompt)];
  message.content.forEach((block, index) => {
    events.push(...blockEvents(block, index, true));
    if (index === 0) events.push(['ping', { type: 'ping' }]);
  });
  if (message.content.length === 0) events.push(['ping', { type: 'ping' }]);
  events.push(
    [
      'message_delta',
      {
        type: 'message_delta',
        delta: { stop_reason: message.stop_reason, stop_sequence: null, stop_details: null },
        // message_delta usage is cumulative and repeats the prompt numbers, as the API does.
        usage: {
          input_tokens: prompt.input_tokens,
          cache_creation_input_tokens: prompt.cache_creation_input_tokens,
          cache_read_input_tokens: prompt.cache_read_input_tokens,
          output_tokens,
        },
      },
    ],
    ['message_stop', { type: 'message_stop' }],
  );
  openStream(x);
  if (await sendEvents(x, events, chunkDelayMs)) x.res.end();
}

/**
 * Streams message_start, the first `blocks` completely and `afterText` as an unfinished text block, then destroys the
 * socket: the client sees a body that ends without message_stop.
 */
export async function streamCut(x: Exchange, message: OutMessage, blocks: OutBlock[], afterText?: string): Promise<void> {
  const events = partialEvents(message, blocks, afterText);
  openStream(x);
  if (await sendEvents(x, events, 0)) x.res.socket?.destroy();
}

/** Streams the beginning of a message, then an `event: error` (what the API does when it fails mid-response). */
export async function streamError(
  x: Exchange,
  message: OutMessage,
  error: { type: string; message: string },
  afterText?: string,
): Promise<void> {
  const events = partialEvents(message, [], afterText);
  events.push(['error', { type: 'error', error, request_id: x.requestId }]);
  openStream(x);
  if (await sendEvents(x, events, 0)) x.res.end();
}

/** Streams the beginning of a message, then an event whose data is not JSON, then ends the body. */
export async function streamMalformed(x: Exchange, message: OutMessage, afterText?: string): Promise<void> {
  openStream(x);
  if (!(await sendEvents(x, partialEvents(message, [], afterText), 0))) return;
  if (await write(x, 'event: content_block_delta\ndata: {"type":"content_block_delta",\n\n')) x.res.end();
}

/** Streams the beginning of a message (its usage included), then waits until the client leaves or the server closes. */
export async function streamStall(x: Exchange, message: OutMessage, afterText?: string): Promise<void> {
  openStream(x);
  if (!(await sendEvents(x, partialEvents(message, [], afterText), 0))) return;
  await new Promise<void>((resolve) => (x.signal.aborted ? resolve() : x.signal.addEventListener('abort', () => resolve(), { once: true })));
}

/** A JSON response with the mock's request-id header. */
export function sendJson(x: Exchange, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (x.res.destroyed) return;
  x.res.writeHead(status, { 'content-type': 'application/json', 'request-id': x.requestId, ...headers });
  x.res.end(JSON.stringify(body));
}

/** The API's error body, as a JSON response. */
export function sendError(x: Exchange, status: number, type: string, message: string, headers: Record<string, string> = {}): void {
  sendJson(x, status, { type: 'error', error: { type, message }, request_id: x.requestId }, headers);
}

/** Non-streaming answer: headers and half of the JSON body, then the socket is destroyed. */
export async function cutJson(x: Exchange, body: unknown): Promise<void> {
  const text = JSON.stringify(body);
  const bytes = Buffer.from(text);
  x.res.writeHead(200, { 'content-type': 'application/json', 'request-id': x.requestId, 'content-length': String(bytes.length) });
  if (await write(x, bytes.subarray(0, Math.floor(bytes.length / 2)))) x.res.socket?.destroy();
}

/** Waits `ms`; false when the exchange was abandoned meanwhile (client abort or server close). */
export async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (ms <= 0) return !signal.aborted;
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

function startEvent(message: OutMessage, prompt: PromptUsage): Event {
  return [
    'message_start',
    {
      type: 'message_start',
      message: {
        id: message.id,
        type: 'message',
        role: 'assistant',
        model: message.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        stop_details: null,
        // message_start carries the prompt numbers; output so far is 1 token.
        usage: { ...prompt, output_tokens: 1, service_tier: 'standard' },
      },
    },
  ];
}

function partialEvents(message: OutMessage, blocks: OutBlock[], afterText: string | undefined): Event[] {
  const events: Event[] = [startEvent(message, message.usage), ['ping', { type: 'ping' }]];
  blocks.forEach((block, index) => events.push(...blockEvents(block, index, true)));
  if (afterText !== undefined) events.push(...blockEvents({ type: 'text', text: afterText }, blocks.length, false));
  return events;
}

function blockEvents(block: OutBlock, index: number, finished: boolean): Event[] {
  const delta = (d: object): Event => ['content_block_delta', { type: 'content_block_delta', index, delta: d }];
  const start = (content_block: object): Event => ['content_block_start', { type: 'content_block_start', index, content_block }];
  const events: Event[] = [];
  if (block.type === 'text') {
    events.push(start({ type: 'text', text: '' }));
    for (const text of chunks(block.text)) events.push(delta({ type: 'text_delta', text }));
  } else if (block.type === 'thinking') {
    events.push(start({ type: 'thinking', thinking: '', signature: '' }));
    for (const thinking of chunks(block.thinking)) events.push(delta({ type: 'thinking_delta', thinking }));
    events.push(delta({ type: 'signature_delta', signature: block.signature }));
  } else {
    events.push(start({ type: 'tool_use', id: block.id, name: block.name, input: {}, ...(block.caller ? { caller: block.caller } : {}) }));
    for (const partial_json of pieces(JSON.stringify(block.input) ?? '{}')) {
      events.push(delta({ type: 'input_json_delta', partial_json }));
    }
  }
  if (finished) events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  return events;
}

/** Splits on code points, so a surrogate pair never straddles two deltas. */
function chunks(text: string): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += TEXT_CHUNK_CHARS) out.push(points.slice(i, i + TEXT_CHUNK_CHARS).join(''));
  return out.length > 0 ? out : [''];
}

function pieces(json: string): string[] {
  const size = Math.max(1, Math.ceil(json.length / JSON_PIECES));
  const out: string[] = [];
  for (let i = 0; i < json.length; i += size) out.push(json.slice(i, i + size));
  return out;
}

function openStream(x: Exchange): void {
  if (x.res.destroyed) return;
  x.res.writeHead(200, {
    'content-type': x.framing?.startsWith('eventstream') ? 'application/vnd.amazon.eventstream' : 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'request-id': x.requestId,
  });
}

async function sendEvents(x: Exchange, events: Event[], chunkDelayMs: number): Promise<boolean> {
  for (const [name, data] of events) {
    const frame = x.framing?.startsWith('eventstream') ? eventStreamFrame(data, x.framing === 'eventstream-bad-crc') : `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    if (!(await write(x, frame))) return false;
    if (chunkDelayMs > 0 && !(await pause(chunkDelayMs, x.signal))) return false;
  }
  return true;
}

/** Resolves once the chunk is handed to the socket; false when the exchange is already gone. */
function write(x: Exchange, chunk: string | Uint8Array): Promise<boolean> {
  if (x.res.destroyed || x.signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => x.res.write(chunk, (err) => resolve(!err)));
}
