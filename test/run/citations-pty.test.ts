import { promises as fs } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { reply, startMockApi, text, type MockApi } from '../support/mock-api.js';
import { PtySession } from '../support/pty.js';
import { APP_FILES, makeRepo } from '../support/temp-repo.js';

// Issue 9 on a real terminal: the built binary in a pseudo-terminal, one-shot (a question on the command line).
let api: MockApi | undefined;
let repo: { root: string; cleanup(): Promise<void> };
let root: string;
let state: string;
let pty: PtySession | null = null;
const servers: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  repo = await makeRepo(APP_FILES);
  root = await fs.realpath(repo.root);
  state = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-state-'));
});
afterAll(async () => {
  await repo.cleanup();
  await fs.rm(state, { recursive: true, force: true });
});
afterEach(async () => {
  pty?.kill();
  pty = null;
  await api?.close();
  api = undefined;
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function ask(question: string, env: Record<string, string> = {}): PtySession {
  pty = new PtySession(['-C', root, question], { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api!.url, XDG_STATE_HOME: state, HOME: state, ...env });
  return pty;
}

/** An OSC 8 hyperlink opener (the URL up to ST); the closer is an opener with an empty URL. */
const OPENER = /\x1b\]8;;([^\x1b\x07]+)(?:\x1b\\|\x07)/g;

describe('hyperlinks on a terminal (the built binary in a pty)', () => {
  it('links a verified path:line to its file:// URL by default, in the answer and in Sources', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('The handler is `src/router.js:3`, not src/router.js:99.\n')));
    const p = ask('where is the handler?', { FORCE_HYPERLINK: '1' });
    await p.waitFor(/Sources[\s\S]*✗ src\/router\.js:99/);
    expect(await p.exited).toBe(0);
    const urls = [...p.output.matchAll(OPENER)].map((m) => m[1]);
    expect(urls).toEqual([`file://${root}/src/router.js`, `file://${root}/src/router.js`]);
    expect(p.output).toMatch(new RegExp(`\\x1b\\]8;;file://${root}/src/router\\.js\\x1b\\\\src/router\\.js:3\\x1b\\]8;;\\x1b\\\\`));
  });

  it('a link\'s text is linked once, not inside other words (See [here](…), where there is more)', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('See [here](src/router.js#L3), where there is more.\n')));
    const p = ask('where is the handler?', { FORCE_HYPERLINK: '1' });
    await p.waitFor(/where there is more[\s\S]*Sources[\s\S]*✓ src\/router\.js:3/);
    expect(await p.exited).toBe(0);
    const answer = p.output.slice(0, p.output.indexOf('Sources'));
    expect([...answer.matchAll(OPENER)].map((m) => m[1])).toEqual([`file://${root}/src/router.js`]);
    expect(answer).toContain('\x1b\\here\x1b]8;;\x1b\\ (src/router.js#L3), where there is more.');
  });
});

describe('progressive rendering (the built binary in a pty)', () => {
  it('draws the first markdown block while the rest of the reply is held back, then the rest once it is sent', async () => {
    const gate = await startGatedApi('# Alpha heading\n\nThe first block.\n\nThe second block is still stream', 'ing.\n\nOmega is the last block.\n');
    servers.push(gate);
    const p = new PtySession(['-C', root, 'explain'], { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: gate.url, XDG_STATE_HOME: state, HOME: state, FORCE_HYPERLINK: '0' });
    pty = p;
    const mark = await p.waitFor(/Alpha heading[\s\S]*The first block\./);
    // The server holds the tail until this point: the first block was drawn from the head alone.
    expect(gate.tailSent()).toBe(false);
    expect(p.screen()).not.toContain('second block');
    gate.release();
    await p.waitFor(/The second block is still streaming\.[\s\S]*Omega is the last block\./, { from: mark });
    expect(await p.exited).toBe(0);
    // Rendered, not raw: the heading's markdown syntax is gone.
    expect(p.screen()).not.toContain('# Alpha');
  });
});

/**
 * A one-reply Messages API that streams `head` as text deltas, then holds the stream open until `release()` and only
 * then sends `tail` and the end of the message: the test, not a clock, decides when the rest arrives.
 */
async function startGatedApi(head: string, tail: string) {
  let release = (): void => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let tailSent = false;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/messages') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'gated mock: messages only' } }));
        return;
      }
      void stream(res);
    });
  });
  const stream = async (res: http.ServerResponse): Promise<void> => {
    const send = (data: { type: string } & Record<string, unknown>): void => {
      res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    const delta = (t: string) => send({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': 'req_gated_1' });
    const usage = { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 };
    send({ type: 'message_start', message: { id: 'msg_gated', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage } });
    send({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    for (let i = 0; i < head.length; i += 16) delta(head.slice(i, i + 16));
    await released;
    tailSent = true;
    delta(tail);
    send({ type: 'content_block_stop', index: 0 });
    send({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { ...usage, output_tokens: 20 } });
    send({ type: 'message_stop' });
    res.end();
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    release,
    tailSent: () => tailSent,
    close: async () => {
      release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
