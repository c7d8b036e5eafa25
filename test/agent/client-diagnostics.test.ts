import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropicClient, isAnthropicEndpoint } from '../../src/agent/client.js';
import type { ModelChunk, ModelRequest } from '../../src/agent/model.js';
import { reply, startMockApi, text, type MockApi } from '../support/mock-api.js';

let api: MockApi;
afterEach(async () => {
  await api?.close();
});

const request: ModelRequest = {
  model: 'claude-sonnet-5-5',
  max_tokens: 100,
  system: [],
  tools: [],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }],
  diagnostics: { previous_message_id: 'msg_previous' },
};

/** Sends every request of a client configured for `baseURL` to the local server instead. */
function redirected(): typeof fetch {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    return fetch(`${api.url}${url.pathname}${url.search}`, init);
  };
}

async function send(baseURL: string | undefined): Promise<Extract<ModelChunk, { type: 'message' }>['response']> {
  const client = createAnthropicClient({ apiKey: 'k', ...(baseURL ? { baseURL } : {}), fetchImpl: redirected() });
  for await (const chunk of client.stream(request, new AbortController().signal)) if (chunk.type === 'message') return chunk.response;
  throw new Error('no message');
}

describe('the cache diagnostics parameter', () => {
  it.each([
    [undefined, true],
    ['https://api.anthropic.com', true],
    ['https://api.anthropic.com/', true],
    ['https://gateway.example.com/anthropic', false],
    ['http://127.0.0.1:8080', false],
    ['https://api.anthropic.com.evil.example', false],
    ['not a url', false],
  ])('baseURL %s is Anthropic: %s', (baseURL, expected) => {
    expect(isAnthropicEndpoint(baseURL)).toBe(expected);
  });

  it("is sent to Anthropic's endpoint, with the previous response's id; the response's msg id comes back", async () => {
    api = await startMockApi();
    api.enqueue(reply(text('ok')));
    const response = await send(undefined);
    expect(api.requests[0]!.body.diagnostics).toEqual({ previous_message_id: 'msg_previous' });
    expect(response.id).toMatch(/^msg_/);
    expect(response.cacheMissReason).toBeNull();
  });

  it('is never sent to another endpoint (a gateway may reject a field it does not know)', async () => {
    api = await startMockApi();
    api.enqueue(reply(text('ok')));
    await send('https://gateway.example.com');
    expect('diagnostics' in api.requests[0]!.body).toBe(false);
  });
});
