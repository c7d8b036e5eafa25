import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropicClient } from '../../src/agent/client.js';
import { ModelAbortError, type ModelChunk, type ModelRequest } from '../../src/agent/model.js';
import { reply, startMockApi, text, type MockApi } from '../support/mock-api.js';

let api: MockApi;
afterEach(async () => {
  await api?.close();
});

const request: ModelRequest = { model: 'claude-sonnet-5-5', max_tokens: 100, system: [], tools: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }] };

describe('createAnthropicClient against the local Messages API', () => {
  it('says live that a failed connection is retried, with the attempt and the SDK backoff', async () => {
    api = await startMockApi();
    api.enqueue(reply(text('ok')));
    let calls = 0;
    const flaky: typeof fetch = async (input, init) => {
      if (calls++ === 0) throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') });
      return fetch(input, init);
    };
    const client = createAnthropicClient({ apiKey: 'k', baseURL: api.url, fetchImpl: flaky });
    const chunks: ModelChunk[] = [];
    for await (const chunk of client.stream(request, new AbortController().signal)) chunks.push(chunk);
    expect(chunks[0]).toEqual({ type: 'notice', message: 'retry 1/4 in ~0.5 s (connection failed: connect ECONNREFUSED)' });
    expect(chunks.at(-1)).toMatchObject({ type: 'message', response: { requestId: 'req_mock_1' } });
  });

  it('a cancel after message_start carries the billed usage and the request id', async () => {
    api = await startMockApi();
    api.enqueue({ kind: 'stall', afterText: 'partial' });
    const client = createAnthropicClient({ apiKey: 'k', baseURL: api.url });
    const abort = new AbortController();
    const error = await (async () => {
      try {
        for await (const chunk of client.stream(request, abort.signal)) if (chunk.type === 'text') abort.abort();
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(ModelAbortError);
    expect((error as ModelAbortError).requestId).toBe('req_mock_1');
    expect((error as ModelAbortError).usage).toMatchObject({ output_tokens: 1 });
    expect((error as ModelAbortError).usage!.input_tokens + (error as ModelAbortError).usage!.cache_creation_input_tokens).toBeGreaterThan(0);
  });
});
