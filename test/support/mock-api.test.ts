import Anthropic, {
  APIConnectionError,
  APIError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ContentTooLargeError,
  InternalServerError,
  OverloadedError,
  RateLimitError,
  type ClientOptions,
} from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tokensOf } from './mock-api-cache.js';
import { httpError, reply, startMockApi, text, thinking, toolUse, type MockApi, type MockOptions, type Reply } from './mock-api.js';

const MODEL = 'claude-sonnet-5-5';
const CC = { type: 'ephemeral' } as const;
/** A system block well over the 1024-token minimum (8,000 chars ≈ 2,006 tokens). */
const BIG = { type: 'text', text: 'x'.repeat(8000) } as const;

type Params = Record<string, unknown>;
const base = { model: MODEL, max_tokens: 1024, messages: [{ role: 'user', content: 'Where is the router built?' }] };
const user = <T>(content: T) => ({ role: 'user', content });
const assistant = <T>(content: T) => ({ role: 'assistant', content });
const useTurn = (...ids: string[]) => assistant(ids.map((id) => ({ type: 'tool_use', id, name: 'bash', input: { command: 'ls' } })));
const result = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' });
const block = (s: string, cache?: object) => (cache ? { type: 'text', text: s, cache_control: cache } : { type: 'text', text: s });

let api: MockApi;
beforeEach(async () => {
  api = await startMockApi();
});
afterEach(async () => {
  await api.close();
});

async function restart(opts: MockOptions): Promise<void> {
  await api.close();
  api = await startMockApi(opts);
}
const client = (opts: Partial<ClientOptions> = {}) => new Anthropic({ apiKey: 'test-key', baseURL: api.url, maxRetries: 0, ...opts });
const stream = (params: Params, opts: Partial<ClientOptions> = {}) =>
  client(opts).messages.stream({ ...base, ...params } as unknown as Anthropic.MessageCreateParamsStreaming);
const failure = (p: Promise<unknown>): Promise<any> => p.then(() => expect.fail('expected a rejection'), (e: unknown) => e);

describe('messages', () => {
  it('streams a text reply the SDK assembles, in several deltas', async () => {
    api.enqueue(reply(text('The router is built in lib/app.js:12, by createServer.')));
    const s = stream({});
    const deltas: string[] = [];
    s.on('text', (d) => deltas.push(d));
    const message = await s.finalMessage();
    expect(message).toMatchObject({ id: 'msg_mock_1', role: 'assistant', model: MODEL, stop_reason: 'end_turn' });
    expect(message.content).toEqual([{ type: 'text', text: 'The router is built in lib/app.js:12, by createServer.' }]);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('The router is built in lib/app.js:12, by createServer.');
    expect(s.request_id).toBe('req_mock_1');
    const [seen] = api.requests;
    expect(seen?.headers).toMatchObject({ authorization: 'Bearer test-key', 'anthropic-version': '2026-10-21' });
    expect(seen?.body).toMatchObject({ model: MODEL, stream: true, messages: base.messages });
  });

  it('streams tool_use input as partial JSON the SDK parses', async () => {
    api.enqueue(
      reply(
        text('Let me look.'),
        toolUse('bash', { command: 'rg -n "createServer" lib' }),
        toolUse('read_file', { path: 'a.js' }, 'toolu_given'),
      ),
    );
    const s = stream({});
    const partials: string[] = [];
    s.on('inputJson', (partial) => partials.push(partial));
    const message = await s.finalMessage();
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content.slice(1)).toEqual([
      // `caller` as the real API sends it on every tool_use.
      { type: 'tool_use', id: 'toolu_mock_1', name: 'bash', input: { command: 'rg -n "createServer" lib' }, caller: { type: 'direct' } },
      { type: 'tool_use', id: 'toolu_given', name: 'read_file', input: { path: 'a.js' }, caller: { type: 'direct' } },
    ]);
    expect(partials.length).toBeGreaterThan(2);
  });

  it('streams thinking blocks with their signature, and honours stop_reason and usage overrides', async () => {
    const content = [thinking('Look in lib/.', 'sig_1'), text('Cut')];
    api.enqueue({ kind: 'message', content, stop_reason: 'max_tokens', usage: { output_tokens: 999 } });
    const message = await stream({}).finalMessage();
    expect(message.content[0]).toEqual({ type: 'thinking', thinking: 'Look in lib/.', signature: 'sig_1' });
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage.output_tokens).toBe(999);
    expect(api.requests[0]?.usage?.output_tokens).toBe(999);
  });

  it('answers stream:false with a JSON message', async () => {
    api.enqueue(reply(toolUse('bash', { command: 'ls' })));
    const message = await client().messages.create(base as Anthropic.MessageCreateParamsNonStreaming);
    expect(message).toMatchObject({ id: 'msg_mock_1', stop_reason: 'tool_use', content: [{ id: 'toolu_mock_1', input: { command: 'ls' } }] });
  });

  it('computes replies from the request when given a function, and after a delay', async () => {
    api.enqueue((req) => reply(text(`saw ${req.body.messages?.length} message(s)`)));
    api.enqueue({ kind: 'slow', delayMs: 20, then: { kind: 'message', content: [text('late and slow')], chunkDelayMs: 2 } });
    expect((await stream({}).finalMessage()).content).toEqual([{ type: 'text', text: 'saw 1 message(s)' }]);
    expect((await stream({}).finalMessage()).content).toEqual([{ type: 'text', text: 'late and slow' }]);
  });

  it('fails loudly, without SDK retries, when no scripted reply is left', async () => {
    const err = await failure(stream({}, { maxRetries: 2 }).finalMessage());
    expect(err).toBeInstanceOf(InternalServerError);
    expect(err.apiMessage).toBe('mock: no scripted reply left');
    expect(api.requests).toHaveLength(1);
  });

  it('plays the fallback reply when the queue is empty, if one is given', async () => {
    await restart({ fallback: reply(text('default answer')) });
    for (const _ of [1, 2]) expect((await stream({}).finalMessage()).content).toEqual([{ type: 'text', text: 'default answer' }]);
  });
});

describe('validation like the real API', () => {
  const rows: Array<{ name: string; params: Params; message: string; headers?: Record<string, null> }> = [
    { name: 'model missing', params: { model: undefined }, message: 'model: Field required' },
    { name: 'max_tokens missing', params: { max_tokens: undefined }, message: 'max_tokens: Field required' },
    { name: 'messages missing', params: { messages: undefined }, message: 'messages: Field required' },
    { name: 'temperature', params: { temperature: 1 }, message: '`temperature` is deprecated for this model.' },
    { name: 'top_p', params: { top_p: 0.9 }, message: '`top_p` is deprecated for this model.' },
    { name: 'top_k', params: { top_k: 5 }, message: '`top_k` is deprecated for this model.' },
    { name: 'no messages', params: { messages: [] }, message: 'messages: at least one message is required' },
    { name: 'first message from assistant', params: { messages: [assistant('Hi'), user('q')] }, message: 'messages: first message must use the "user" role' },
    { name: 'empty text block', params: { messages: [user([block('')])] }, message: 'messages: text content blocks must be non-empty' },
    { name: 'whitespace text block', params: { messages: [user([block(' \n')])] }, message: 'messages: text content blocks must contain non-whitespace text' },
    { name: 'empty string content', params: { messages: [user('')] }, message: 'messages.0: all messages must have non-empty content' },
    { name: 'empty system', params: { system: '' }, message: 'system: text content blocks must be non-empty' },
    { name: 'whitespace system block', params: { system: [block('  ')] }, message: 'system: text content blocks must contain non-whitespace text' },
    {
      name: 'empty text inside a tool_result',
      params: { messages: [user('q'), useTurn('toolu_1'), user([{ ...result('toolu_1'), content: [block('')] }])] },
      message: 'messages: text content blocks must be non-empty',
    },
    {
      name: 'five breakpoints',
      params: { system: [block('a', CC), block('b', CC)], messages: [user([block('c', CC), block('d', CC), block('e', CC)])] },
      message: 'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    },
    {
      name: 'tool_use without tool_result',
      params: { messages: [user('q'), useTurn('toolu_1'), user('next question')] },
      message:
        'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. ' +
        'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    },
    {
      name: 'one of two tool_uses unanswered',
      params: { messages: [user('q'), useTurn('toolu_1', 'toolu_2'), user([result('toolu_1')])] },
      message: 'immediately after: toolu_2.',
    },
    {
      name: 'tool_result after text',
      params: { messages: [user('q'), useTurn('toolu_1'), user([block('note'), result('toolu_1')])] },
      message: 'messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message.',
    },
    {
      name: 'two results for one tool_use',
      params: { messages: [user('q'), useTurn('toolu_1'), user([result('toolu_1'), result('toolu_1')])] },
      message: 'messages.2.content.1: each tool_use must have a single result.',
    },
    {
      name: 'tool_result for an unknown id',
      params: { messages: [user('q'), useTurn('toolu_1'), user([result('toolu_1'), result('toolu_9')])] },
      message: 'messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9.',
    },
    {
      name: 'tool_result with no tool_use before it',
      params: { messages: [user([result('toolu_1')])] },
      message:
        'messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1. ' +
        'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
    },
    {
      name: 'conversation ending with an assistant message',
      params: { messages: [user('q'), assistant('The answer is')] },
      message: 'This model does not support assistant message prefill. The conversation must end with a user message.',
    },
    { name: 'no anthropic-version header', params: {}, headers: { 'anthropic-version': null }, message: 'anthropic-version: header is required' },
  ];

  it.each(rows)('$name → 400 invalid_request_error', async ({ params, message, headers }) => {
    const body = { ...base, ...params } as unknown as Anthropic.MessageCreateParamsNonStreaming;
    const err = await failure(client().messages.create(body, headers ? { headers } : {}));
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.type).toBe('invalid_request_error');
    expect(err.apiMessage).toContain(message);
    expect(api.requests[0]).toMatchObject({ status: 400, error: expect.stringContaining(message) });
  });

  it('surfaces a rejection from the stream helper too, without consuming a scripted reply', async () => {
    api.enqueue(reply(text('still queued')));
    const err = await failure(stream({ temperature: 0 }).finalMessage());
    expect(err).toBeInstanceOf(BadRequestError);
    expect((await stream({}).finalMessage()).content).toEqual([{ type: 'text', text: 'still queued' }]);
  });

  it('accepts a valid multi-tool conversation with four breakpoints', async () => {
    api.enqueue(reply(text('Done.')));
    const messages = [
      user('q'),
      assistant([block('Checking.'), ...useTurn('toolu_1', 'toolu_2').content]),
      user([result('toolu_1'), { ...result('toolu_2'), is_error: true, cache_control: CC }, block('and also this')]),
      useTurn('toolu_3'),
      user([{ ...result('toolu_3'), content: [block('found it')], cache_control: CC }]),
    ];
    const tools = [{ name: 'bash', description: 'run', input_schema: { type: 'object' }, cache_control: CC }];
    const message = await stream({ tools, system: [block('You are spelunk.', CC)], messages }).finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'Done.' }]);
  });
});

describe('auth and faults', () => {
  it.each([
    { name: 'no Authorization header', opts: { defaultHeaders: { Authorization: null } }, key: undefined },
    { name: 'x-api-key instead of Bearer', opts: { defaultHeaders: { Authorization: null, 'x-api-key': 'test-key' } }, key: undefined },
    { name: 'a wrong key', opts: { apiKey: 'wrong' }, key: 'right' },
  ])('$name → 401 AuthenticationError', async ({ opts, key }) => {
    if (key) await restart({ expectedKey: key });
    const err = await failure(stream({}, opts).finalMessage());
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toMatchObject({ status: 401, type: 'authentication_error', requestID: 'req_mock_1' });
  });

  it('accepts the expected key', async () => {
    await restart({ expectedKey: 'right' });
    api.enqueue(reply(text('ok')));
    expect((await stream({}, { apiKey: 'right' }).finalMessage()).content).toEqual([{ type: 'text', text: 'ok' }]);
  });

  it.each([
    { status: 400, type: 'invalid_request_error', cls: BadRequestError },
    { status: 401, type: 'authentication_error', cls: AuthenticationError },
    { status: 413, type: 'request_too_large', cls: ContentTooLargeError },
    { status: 429, type: 'rate_limit_error', cls: RateLimitError },
    { status: 500, type: 'api_error', cls: InternalServerError },
    { status: 529, type: 'overloaded_error', cls: OverloadedError },
  ])('scripted HTTP $status reaches the caller as $cls.name with the API error body', async ({ status, type, cls }) => {
    api.enqueue(httpError(status, type, `scripted ${status}`));
    const err = await failure(stream({}).finalMessage());
    expect(err).toBeInstanceOf(cls);
    expect(err).toMatchObject({ status, type, apiMessage: `scripted ${status}`, requestID: 'req_mock_1' });
    expect(err.error).toEqual({ type: 'error', error: { type, message: `scripted ${status}` }, request_id: 'req_mock_1' });
  });

  it.each([
    httpError(429, 'rate_limit_error', 'Slow down', { 'retry-after': '0', 'retry-after-ms': '1' }),
    httpError(529, 'overloaded_error', 'Overloaded', { 'retry-after-ms': '1' }),
  ])('the SDK retries $status then succeeds', async (fault) => {
    api.enqueue(fault, reply(text('after the retry')));
    const message = await stream({}, { maxRetries: 2 }).finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'after the retry' }]);
    expect(api.requests.map((r) => [r.status, r.headers['x-stainless-retry-count']])).toEqual([
      [fault.kind === 'http_error' && fault.status, '0'],
      [200, '1'],
    ]);
  });

  it('delivers an in-stream error event as APIError with no status, after the text before it, unretried', async () => {
    api.enqueue({ kind: 'stream_error', errorType: 'overloaded_error', afterText: 'The router is' });
    const s = stream({}, { maxRetries: 2 });
    const deltas: string[] = [];
    s.on('text', (d) => deltas.push(d));
    const err = await failure(s.finalMessage());
    expect(err).toBeInstanceOf(APIError);
    expect(err).not.toBeInstanceOf(OverloadedError);
    expect(err).toMatchObject({ status: undefined, type: 'overloaded_error' });
    expect(deltas.join('')).toBe('The router is');
    expect(api.requests).toHaveLength(1);
  });

  it.each<{ name: string; cut: Reply; blocks: number; text: string }>([
    { name: 'mid-text', cut: { kind: 'stream_cut', afterText: 'Half an ans' }, blocks: 0, text: 'Half an ans' },
    {
      name: 'after a block',
      cut: { kind: 'stream_cut', content: [text('whole'), text('never sent')], afterBlocks: 1 },
      blocks: 1,
      text: 'whole',
    },
  ])('a stream cut $name rejects finalMessage and is not retried', async ({ cut, blocks, text: shown }) => {
    api.enqueue(cut);
    const s = stream({}, { maxRetries: 2 });
    const deltas: string[] = [];
    let finished = 0;
    s.on('text', (d) => deltas.push(d)).on('contentBlock', () => finished++);
    const err = await failure(s.finalMessage());
    expect(err).not.toBeInstanceOf(APIUserAbortError);
    expect(deltas.join('')).toBe(shown);
    expect(finished).toBe(blocks);
    expect(api.requests).toHaveLength(1);
  });

  it('without streaming, a cut body rejects create() and an error event becomes a 529', async () => {
    api.enqueue({ kind: 'stream_cut' }, { kind: 'stream_error' });
    const body = base as Anthropic.MessageCreateParamsNonStreaming;
    expect((await failure(client().messages.create(body))).message).toBe('terminated');
    expect(await failure(client().messages.create(body))).toBeInstanceOf(OverloadedError);
  });

  it('hangs until the client aborts', async () => {
    api.enqueue({ kind: 'hang' });
    const abort = new AbortController();
    const done = failure(client().messages.stream(base as Anthropic.MessageCreateParamsStreaming, { signal: abort.signal }).finalMessage());
    await api.waitForRequests(1);
    abort.abort();
    expect(await done).toBeInstanceOf(APIUserAbortError);
  });

  it('stall: reports message_start usage and text, then waits for the client to abort', async () => {
    api.enqueue({ kind: 'stall', afterText: 'partial' });
    const abort = new AbortController();
    const s = client().messages.stream(base as Anthropic.MessageCreateParamsStreaming, { signal: abort.signal });
    const deltas: string[] = [];
    let usage: unknown = null;
    s.on('streamEvent', (e) => {
      if (e.type === 'message_start') usage = e.message.usage;
    });
    s.on('text', (d) => {
      deltas.push(d);
      if (deltas.join('') === 'partial') abort.abort();
    });
    expect(await failure(s.finalMessage())).toBeInstanceOf(APIUserAbortError);
    expect(usage).toMatchObject({ output_tokens: 1 });
    expect(api.requests[0]!.status).toBe(200);
  });

  it('stream_malformed: an event whose data is not JSON reaches the client as a parse failure', async () => {
    api.enqueue({ kind: 'stream_malformed', afterText: 'partial' });
    const err = await failure(stream({}).finalMessage());
    expect(err.cause).toBeInstanceOf(SyntaxError);
    expect(api.requests[0]!.error).toBe('malformed event');
  });

  it('closes while a request hangs, ending its connection', async () => {
    api.enqueue({ kind: 'hang' });
    const done = failure(stream({}).finalMessage());
    await api.waitForRequests(1);
    await api.close();
    expect(await done).toBeInstanceOf(APIConnectionError);
  });
});

describe('prompt cache accounting', () => {
  const usageOf = async (params: Params) => {
    api.enqueue(reply(text('ok')));
    return (await stream(params).finalMessage()).usage;
  };
  const t = (b: object) => tokensOf(b);

  it('a second identical request reads what the first wrote', async () => {
    const params = { system: [{ ...BIG, cache_control: CC }] };
    const first = await usageOf(params);
    const second = await usageOf(params);
    const question = t({ type: 'text', text: base.messages[0]?.content });
    expect(first).toMatchObject({ cache_creation_input_tokens: t(BIG), cache_read_input_tokens: 0, input_tokens: question });
    expect(second).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: t(BIG), input_tokens: question });
    expect(second).toMatchObject(api.requests[1]?.usage ?? {});
  });

  it('an extended conversation reads the old prefix and writes the new part', async () => {
    const system = [{ ...BIG, cache_control: CC }];
    const first = await usageOf({ system, messages: [user([block('q1', CC)])] });
    expect(first).toMatchObject({ cache_creation_input_tokens: t(BIG) + t(block('q1')), cache_read_input_tokens: 0, input_tokens: 0 });
    const second = await usageOf({ system, messages: [user([block('q1')]), assistant([block('a1')]), user([block('q2', CC)])] });
    expect(second).toMatchObject({
      cache_read_input_tokens: t(BIG) + t(block('q1')),
      cache_creation_input_tokens: t(block('a1')) + t(block('q2')),
      input_tokens: 0,
    });
  });

  it.each([
    { distance: 20, reads: true },
    { distance: 21, reads: false },
  ])('a breakpoint $distance blocks after the last written entry reads: $reads', async ({ distance, reads }) => {
    await usageOf({ system: [BIG], messages: [user([block('t0', CC)])] });
    const later = Array.from({ length: distance }, (_, i) => block(`t${i + 1}`, i + 1 === distance ? CC : undefined));
    const second = await usageOf({ system: [BIG], messages: [user([block('t0'), ...later])] });
    const written = t(BIG) + t(block('t0'));
    expect(second.cache_read_input_tokens).toBe(reads ? written : 0);
  });

  it.each([
    { minCacheTokens: undefined, written: 0 }, // the default, 1024
    { minCacheTokens: 10, written: t(block('A short system prompt.')) },
  ])('with a minimum of $minCacheTokens tokens a small prefix writes $written', async ({ minCacheTokens, written }) => {
    if (minCacheTokens) await restart({ minCacheTokens });
    const params = { system: [block('A short system prompt.', CC)] };
    expect((await usageOf(params)).cache_creation_input_tokens).toBe(written);
    expect((await usageOf(params)).cache_read_input_tokens).toBe(written);
  });

  it('splits writes by TTL and counts tools first', async () => {
    const cache_control = { type: 'ephemeral', ttl: '1h' };
    const tool = { name: 'bash', description: 'd'.repeat(6000), input_schema: { type: 'object' }, cache_control };
    const { cache_control: _, ...plainTool } = tool;
    const usage = await usageOf({ tools: [tool], system: [{ ...BIG, cache_control: CC }] });
    expect(usage.cache_creation).toEqual({ ephemeral_1h_input_tokens: t(plainTool), ephemeral_5m_input_tokens: t(BIG) });
  });

  it('clearCache forgets every entry, as a TTL expiry would', async () => {
    const params = { system: [{ ...BIG, cache_control: CC }] };
    await usageOf(params);
    api.clearCache();
    expect(await usageOf(params)).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: t(BIG) });
  });

  it('one changed byte in the prefix invalidates the cache', async () => {
    await usageOf({ system: [{ ...BIG, cache_control: CC }] });
    const changed = await usageOf({ system: [{ ...BIG, text: `${BIG.text}y`, cache_control: CC }] });
    expect(changed).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: t({ ...BIG, text: `${BIG.text}y` }) });
  });

  it('message_start carries the prompt numbers; message_delta the final cumulative ones', async () => {
    api.enqueue(reply(text('four words of output')));
    const events: Anthropic.MessageStreamEvent[] = [];
    // Cloned as they arrive: the SDK accumulates into the message_start object afterwards.
    const s = stream({ system: [{ ...BIG, cache_control: CC }] }).on('streamEvent', (e) => events.push(structuredClone(e)));
    await s.done();
    const start = events.find((e) => e.type === 'message_start');
    const delta = events.find((e) => e.type === 'message_delta');
    const recorded = api.requests[0]?.usage;
    expect(start?.message.usage).toMatchObject({ output_tokens: 1, cache_creation_input_tokens: t(BIG), input_tokens: recorded?.input_tokens });
    expect(delta?.usage).toMatchObject({ output_tokens: 5, cache_creation_input_tokens: t(BIG), cache_read_input_tokens: 0 });
    expect(recorded?.output_tokens).toBe(5);
  });
});

describe('count_tokens', () => {
  it('estimates tools + system + messages deterministically, matching the request total', async () => {
    const params = { model: MODEL, system: [BIG], messages: base.messages };
    const counted = await client().messages.countTokens(params as Anthropic.MessageCountTokensParams);
    const again = await client().messages.countTokens(params as Anthropic.MessageCountTokensParams);
    expect(counted).toEqual(again);
    const usage = (api.enqueue(reply(text('ok'))), await stream(params).finalMessage()).usage;
    expect(counted.input_tokens).toBe(usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0));
    expect(counted.input_tokens).toBeGreaterThan(2000);
  });
});
