import { describe, expect, it } from 'vitest';
import { Conversation } from '../../src/agent/conversation.js';
import type { AgentEvent, Usage } from '../../src/agent/events.js';
import { ABORT_TIMEOUT, askQuestion, type LoopConfig } from '../../src/agent/loop.js';
import { ModelAbortError, ModelError, type ModelChunk, type ModelClient, type ModelRequest, type ModelResponse } from '../../src/agent/model.js';
import { testLoopConfig } from '../support/loop-config.js';
import { scriptedClient, text, toolUse, type Step } from '../support/scripted-client.js';

/**
 * The events and `done`s of the loop that the front ends read as data: paragraphs between requests, the stream's
 * notices and first token, what a cancelled request bills, how each failure ends, the assistant message as the API
 * sent it, the effort and the cache diagnostics carried, and the facts a `done` leaves out.
 */

const USAGE: Usage = { input_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 10 };


/** A client whose every request streams `chunks(n)` (n: the request's number, from 1); requests are recorded. */
function chunkClient(chunks: (n: number) => AsyncIterable<ModelChunk>): ModelClient & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    requests,
    stream(request) {
      requests.push(structuredClone(request));
      return chunks(requests.length);
    },
    countTokens: async () => 1000,
  };
}

const response = (over: Partial<ModelResponse> = {}): ModelResponse => ({ content: [text('ok')], stopReason: 'end_turn', usage: USAGE, requestId: 'req_1', ...over });

async function run(config: LoopConfig, signal = new AbortController().signal, conversation = new Conversation()): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const e of askQuestion('q', conversation, config, signal)) events.push(e);
  return events;
}

const of = <T extends AgentEvent['type']>(events: AgentEvent[], type: T) => events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);
const doneOf = (events: AgentEvent[]) => of(events, 'done').at(-1)!;

describe('askQuestion: the stream as events', () => {
  it('text of a later request starts a new paragraph; a request without text adds none', async () => {
    const steps: Step[] = [{ blocks: [text('Let me look.'), toolUse('echo', { say: 'a' }, 't1')] }, { blocks: [toolUse('echo', { say: 'b' }, 't2')] }, { blocks: [text('Answer.')] }];
    const events = await run(testLoopConfig(scriptedClient(steps)));
    expect(of(events, 'text').map((e) => e.text)).toEqual(['Let me look.', '\n\n', 'Answer.']);
    expect(doneOf(events)).toMatchObject({ stop: 'end_turn', text: 'Answer.', turns: 3 });
  });

  it('the first answer of a question starts without a paragraph break, even after a request that showed none', async () => {
    const steps: Step[] = [{ blocks: [toolUse('echo', { say: 'a' }, 't1')] }, { blocks: [text('One'), text(' answer.')] }];
    const events = await run(testLoopConfig(scriptedClient(steps)));
    expect(of(events, 'text').map((e) => e.text)).toEqual(['One', ' answer.']);
  });

  it('notices are retries, thinking is its own event, and first_token comes once per request, before the first delta', async () => {
    const client = chunkClient(async function* () {
      yield { type: 'notice', message: 'retry 1/4 in ~0.5 s (overloaded)' };
      yield { type: 'thinking', text: 'hmm' };
      yield { type: 'text', text: 'a' };
      yield { type: 'text', text: 'b' };
      yield { type: 'message', response: response({ content: [text('ab')] }) };
    });
    const events = await run(testLoopConfig(client));
    expect(events.map((e) => e.type).slice(0, 6)).toEqual(['request_start', 'retry', 'first_token', 'thinking', 'text', 'text']);
    // Thinking is never answer text.
    expect(of(events, 'text').map((e) => e.text)).toEqual(['a', 'b']);
    expect(of(events, 'retry')).toEqual([{ type: 'retry', message: 'retry 1/4 in ~0.5 s (overloaded)' }]);
    expect(of(events, 'thinking')).toEqual([{ type: 'thinking', text: 'hmm' }]);
    expect(of(events, 'first_token')).toEqual([{ type: 'first_token', turn: 1 }]);
  });
});

describe('askQuestion: how a request can end', () => {
  it('a cancelled request the API had begun to bill yields its usage, marked interrupted, then the abort', async () => {
    const controller = new AbortController();
    const client = chunkClient(async function* () {
      yield { type: 'text', text: 'par' };
      controller.abort('interrupt');
      throw new ModelAbortError({ ...USAGE, output_tokens: 3 }, 'req_cut');
    });
    const events = await run(testLoopConfig(client, { effort: 'high' }), controller.signal);
    expect(of(events, 'usage')).toEqual([
      { type: 'usage', turn: 1, model: 'claude-sonnet-5-5', usage: { ...USAGE, output_tokens: 3 }, durationMs: expect.any(Number), requestId: 'req_cut', interrupted: true, effort: 'high' },
    ]);
    expect(doneOf(events)).toMatchObject({ stop: 'aborted' });
  });

  it('a cancel before the API billed anything yields no usage', async () => {
    const controller = new AbortController();
    const client = chunkClient(async function* () {
      controller.abort('interrupt');
      throw new ModelAbortError();
    });
    const events = await run(testLoopConfig(client), controller.signal);
    expect(of(events, 'usage')).toEqual([]);
    expect(doneOf(events).stop).toBe('aborted');
  });

  it.each<[string, () => never, Record<string, unknown>]>([
    ['an unexpected exception', () => { throw new TypeError('boom'); }, { stop: 'api_error', error: 'unexpected failure: TypeError: boom' }],
    ['a prompt too long for the context window', () => { throw new ModelError('prompt is too long', 400, 'invalid_request_error', null, false, true); }, { stop: 'context_exceeded', error: 'prompt is too long' }],
    ['any other API failure', () => { throw new ModelError('API 500', 500, 'api_error', null, false); }, { stop: 'api_error', error: 'API 500' }],
  ])('%s ends the question as data', async (_name, fail, expected) => {
    // eslint-disable-next-line require-yield
    const client = chunkClient(async function* () {
      fail();
    });
    expect(doneOf(await run(testLoopConfig(client)))).toEqual({ type: 'done', text: '', turns: 1, ...expected });
  });

  it('a stream that ends without a message is an API failure', async () => {
    const client = chunkClient(async function* () {
      yield { type: 'text', text: 'half' };
    });
    expect(doneOf(await run(testLoopConfig(client)))).toEqual({ type: 'done', stop: 'api_error', text: '', turns: 1, error: 'the API stream ended without a message' });
  });

  it('a timeout says its limit only when the run has one', async () => {
    for (const [timeoutMs, facts] of [[1500, { limit: 'timeoutMs', value: 1500 }], [null, {}]] as const) {
      const controller = new AbortController();
      const client = chunkClient(async function* () {
        controller.abort(ABORT_TIMEOUT);
        throw new ModelAbortError();
      });
      const done = doneOf(await run(testLoopConfig(client, { timeoutMs }), controller.signal));
      expect(done).toEqual({ type: 'done', stop: 'timeout', text: '', turns: 1, ...facts });
    }
  });
});

describe('askQuestion: what the events carry', () => {
  it('the assistant message as the API sent it: its id, model and stop_sequence, or null and the configured model', async () => {
    const cached = { type: 'text' as const, text: 'ok', cache_control: { type: 'ephemeral' as const } };
    const client = chunkClient(async function* (n) {
      yield { type: 'message', response: n === 1 ? response({ content: [toolUse('echo', { say: 'a' }, 't1')], stopReason: 'tool_use', id: 'msg_1', model: 'served-model', stopSequence: 'STOP' }) : response({ content: [cached] }) };
    });
    const events = await run(testLoopConfig(client));
    const [first, second] = of(events, 'assistant_message').map((e) => e.message);
    expect(first).toMatchObject({ id: 'msg_1', type: 'message', role: 'assistant', model: 'served-model', stop_reason: 'tool_use', stop_sequence: 'STOP', usage: USAGE });
    expect(second).toMatchObject({ id: null, model: 'claude-sonnet-5-5', stop_reason: 'end_turn', stop_sequence: null });
    expect(second!.content).toEqual([{ type: 'text', text: 'ok' }]);
    // The next request asks the API about the previous response's cache: by its id.
    expect(client.requests[1]!.diagnostics).toEqual({ previous_message_id: 'msg_1' });
    expect(client.requests[0]!.diagnostics).toEqual({ previous_message_id: null });
  });

  it('usage carries the effort when one is sent, and no effort key when none is', async () => {
    for (const [effort, expected] of [['low', { effort: 'low' }], [null, {}]] as const) {
      const events = await run(testLoopConfig(scriptedClient([{ blocks: [text('ok')] }]), { effort }));
      const [usage] = of(events, 'usage');
      // Strict: an `effort` key holding null or undefined would still reach the JSON consumers' field list.
      expect(usage).toStrictEqual({ type: 'usage', turn: 1, model: 'claude-sonnet-5-5', usage: USAGE, durationMs: expect.any(Number), requestId: 'req_1', ...expected });
    }
  });

  it('a max_tokens answer keeps only its text in the conversation, and names the limit', async () => {
    const conversation = new Conversation();
    const client = chunkClient(async function* () {
      yield { type: 'message', response: response({ content: [text('cut'), toolUse('echo', { say: 'a' }, 't1')], stopReason: 'max_tokens' }) };
    });
    const events = await run(testLoopConfig(client, { maxTokens: 64 }), undefined, conversation);
    expect(doneOf(events)).toEqual({ type: 'done', stop: 'max_tokens', text: 'cut', turns: 1, limit: 'maxTokens', value: 64 });
    expect(conversation.messages.at(-1)).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'cut' }] });
  });

  it('the prompt size of the last response is kept for the next compaction check', async () => {
    const conversation = new Conversation();
    const client = chunkClient(async function* () {
      yield { type: 'message', response: response({ usage: { input_tokens: 7, cache_creation_input_tokens: 11, cache_read_input_tokens: 13, output_tokens: 1 } }) };
    });
    await run(testLoopConfig(client), undefined, conversation);
    expect(conversation.lastPromptTokens).toBe(31);
  });
});
