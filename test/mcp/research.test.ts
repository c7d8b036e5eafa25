import { randomUUID } from 'node:crypto';
import { getEventListeners } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { estimateCostUsd } from '../../src/agent/pricing.js';
import type { EventSink } from '../../src/run/ask.js';
import { currentSandbox } from '../../src/sandbox/exec.js';
import { reply, text, toolUse, type Reply } from '../support/mock-api.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';
import { messagesOf, ok, refused, useResearcher } from './in-process.js';

// The research tool of `spelunk mcp` (src/mcp/research.ts) in this process: ask and ask_followup answers, the
// conversations the server keeps, the read-only note and cancellation, against the local Messages API (the real SDK
// over HTTP) and a real git repository.
const repo = useRepo(APP_FILES, { git: true });
const start = useResearcher(repo);

describe('the research tool in process: ask and ask_followup', () => {
  it('ask answers with checked citations, a fresh session_id, the read-only proof and this call\'s usage', async () => {
    const { api, call, stderr } = await start();
    const cache_creation = { ephemeral_5m_input_tokens: 3, ephemeral_1h_input_tokens: 0 };
    const usage = { input_tokens: 11, cache_creation_input_tokens: 3, cache_read_input_tokens: 5, cache_creation, output_tokens: 7 };
    api.enqueue({ kind: 'message', content: [text('Routing is in src/router.js:3, not src/router.js:99.')], usage });
    const answer = ok(await call('ask', { question: 'Where is routing?' }));
    expect(answer).toEqual({
      answer_markdown: 'Routing is in src/router.js:3, not src/router.js:99.',
      citations: [
        { path: 'src/router.js', start_line: 3, end_line: 3, status: 'ok', excerpt: 'function handle(req, res) {' },
        { path: 'src/router.js', start_line: 99, end_line: 99, status: 'line_out_of_range', excerpt: null },
      ],
      session_id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      truncated: false,
      stop_reason: 'end_turn',
      readonly_verified: true,
      sandbox: currentSandbox().kind,
      notes: [],
      usage: { input: 11, cache_write: 3, cache_read: 5, output: 7, requests: 1, cost_usd: expect.any(Number) },
    });
    // The result object's cost, rounded to a millionth of a dollar.
    expect(Math.abs(answer.usage.cost_usd - estimateCostUsd(messagesOf(api)[0]!.body.model!, usage)!)).toBeLessThanOrEqual(1e-6);
    expect(answer.usage.cost_usd).toBeGreaterThan(0);
    // One log line per call on stderr, the question cut to 60 characters.
    expect(stderr()).toMatch(/^spelunk mcp: Where is routing\? → end_turn, 1 requests, ~\$0\.\d+\n$/);
  });

  it('each ask starts its own conversation, with its own session_id', async () => {
    const { api, call } = await start();
    api.enqueue(reply(text('First.')), reply(text('Second.')));
    const first = ok(await call('ask', { question: 'first question' }));
    const second = ok(await call('ask', { question: 'second question' }));
    expect(second.session_id).not.toBe(first.session_id);
    const sent = messagesOf(api)[1]!.body.messages!;
    expect(sent).toHaveLength(1);
    expect(JSON.stringify(sent)).not.toContain('first question');
  });

  it('ask_followup continues the conversation: earlier turns are sent, the session_id is kept, usage is this call\'s alone', async () => {
    const { api, call } = await start();
    api.enqueue(reply(toolUse('read_file', { path: 'src/server.js' })), reply(text('The server is made at src/server.js:4.')));
    const first = ok(await call('ask', { question: 'Where is the server made?' }));
    expect(first.usage).toMatchObject({ requests: 2 });
    api.enqueue({ kind: 'message', content: [text('It routes with src/router.js:3.')], usage: { output_tokens: 9 } });
    const second = ok(await call('ask_followup', { session_id: ` ${first.session_id} `, question: 'And routing?' }));
    expect(second).toMatchObject({ answer_markdown: 'It routes with src/router.js:3.', session_id: first.session_id, stop_reason: 'end_turn' });
    expect(second.usage).toMatchObject({ requests: 1, output: 9 });
    const sent = messagesOf(api).at(-1)!.body.messages!;
    expect(JSON.stringify(sent[0])).toContain('Where is the server made?');
    expect(JSON.stringify(sent.at(-1))).toContain('And routing?');
    expect(sent).toHaveLength(5);
  });

  it('ask_followup with an id this server never returned is refused, the id cut to 80 characters, without a request', async () => {
    const { api, call } = await start();
    const id = `${'x'.repeat(80)}TAIL`;
    expect(refused(await call('ask_followup', { session_id: id, question: 'q' }))).toBe(
      `unknown session_id "${'x'.repeat(80)}": it was never returned by this server or was forgotten (the server keeps the last 32); start again with ask`,
    );
    expect(refused(await call('ask_followup', { session_id: randomUUID(), question: 'q' }))).toMatch(/^unknown session_id "[0-9a-f-]{36}"/);
    expect(api.requests).toHaveLength(0);
  });

  it('max_turns of an ask bounds that ask; a follow-up gets the server\'s --max-turns', async () => {
    const { api, call } = await start(['--max-turns', '1']);
    api.enqueue(reply(toolUse('read_file', { path: 'src/server.js' })), reply(text('At src/server.js:4.')));
    const first = ok(await call('ask', { question: 'where?', max_turns: 3 }));
    expect(first).toMatchObject({ answer_markdown: 'At src/server.js:4.', stop_reason: 'end_turn', usage: { requests: 2 } });
    api.enqueue(reply(toolUse('read_file', { path: 'src/router.js' })));
    const followup = refused(await call('ask_followup', { session_id: first.session_id, question: 'and the router?' }));
    expect(followup).toBe('stopped after 1 model request (max_turns 1) before a final answer; raise max_turns or ask a narrower question');
    api.enqueue(reply(toolUse('read_file', { path: 'src/router.js' })));
    expect(refused(await call('ask', { question: 'no max_turns given' }))).toMatch(/^stopped after 1 model request \(max_turns 1\)/);
    expect(messagesOf(api)).toHaveLength(4);
  });

  it('progress: the call\'s sink sees the run live, from the first request to done', async () => {
    const { api, call } = await start();
    api.enqueue(reply(toolUse('read_file', { path: 'src/server.js' })), reply(text('At src/server.js:4.')));
    const seen: string[] = [];
    const progress: EventSink = { handle: (e) => void seen.push(e.type) };
    ok(await call('ask', { question: 'where?' }, { progress }));
    expect(seen.filter((t) => t === 'request_start')).toHaveLength(2);
    expect(seen).toContain('tool_end');
    expect(seen.at(-1)).toBe('done');
  });
});

describe('the research tool in process: the repository, cancellation and the log', () => {
  const planted = (): string => path.join(repo.root, 'src', 'planted.js');
  /** The reply held 400 ms while an editor writes 150 ms into it (between tool calls, as another program's save). */
  const plant = (then: Reply): (() => Reply) => () => {
    setTimeout(() => writeFileSync(planted(), 'changed while spelunk answered\n'), 150);
    return { kind: 'slow', delayMs: 400, then };
  };

  it('a repository another program changes during the call: the answer stands, readonly_verified true, a note names the change', async () => {
    const { api, call } = await start();
    api.enqueue(reply(toolUse('read_file', { path: 'src/server.js' })), plant(reply(text('The server is in src/server.js:4.'))));
    try {
      const answer = ok(await call('ask', { question: 'where is the server?' }));
      expect(answer).toMatchObject({ answer_markdown: 'The server is in src/server.js:4.', stop_reason: 'end_turn', readonly_verified: true });
      expect(answer.notes).toEqual([expect.stringMatching(/^other programs changed the repository during the run: .*src\/planted\.js .*\(not spelunk: /)]);
    } finally {
      rmSync(planted(), { force: true });
    }
  });

  it('a call that ends without text is an error that gives the stop and the change, joined in one line', async () => {
    const { api, call } = await start();
    // The change comes with the second response: the first may be asked before the "before" state is recorded.
    api.enqueue(reply(toolUse('read_file', { path: 'src/server.js' })), plant(reply(toolUse('read_file', { path: 'src/router.js' }))));
    try {
      const message = refused(await call('ask', { question: 'where is the server?', max_turns: 2 }));
      expect(message).toMatch(
        /^stopped after 2 model requests \(max_turns 2\) before a final answer; raise max_turns or ask a narrower question; other programs changed the repository during the run: .*src\/planted\.js/,
      );
      expect(message).not.toContain('\n');
    } finally {
      rmSync(planted(), { force: true });
    }
  });

  it('a cancel aborts the model request in flight (the API sees the client leave) and the call says "cancelled"', async () => {
    const { api, call } = await start();
    api.enqueue({ kind: 'hang' });
    const controller = new AbortController();
    void api.waitForRequests(1).then(() => controller.abort());
    expect(refused(await call('ask', { question: 'q' }, { signal: controller.signal }))).toBe('cancelled');
    await expect.poll(() => messagesOf(api)[0]?.clientLeft, { timeout: 5000 }).toBe(true);
  });

  it('a cancel after the model said something is still "cancelled", not a partial answer', async () => {
    const { api, call } = await start();
    api.enqueue(reply(text('Looking at the server.'), toolUse('read_file', { path: 'src/server.js' })), { kind: 'hang' });
    const controller = new AbortController();
    void api.waitForRequests(2).then(() => controller.abort());
    expect(refused(await call('ask', { question: 'q' }, { signal: controller.signal }))).toBe('cancelled');
  });

  it.each([
    ['ask', reply(text('Fine.'))],
    ['audit', reply(text('Nothing to report.'))],
  ])('a finished %s leaves no listener on the client\'s signal (one per call would pile up on a shared signal)', async (tool, script) => {
    const { api, call } = await start();
    api.enqueue(script);
    const signal = new AbortController().signal;
    await call(tool, { question: 'q' }, { signal });
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('a cancelled follow-up leaves its conversation idle: the next follow-up is answered', async () => {
    const { api, call } = await start();
    api.enqueue(reply(text('First.')), { kind: 'hang' }, reply(text('Third.')));
    const first = ok(await call('ask', { question: 'q' }));
    const controller = new AbortController();
    void api.waitForRequests(2).then(() => controller.abort());
    expect(refused(await call('ask_followup', { session_id: first.session_id, question: 'hang' }, { signal: controller.signal }))).toBe('cancelled');
    expect(ok(await call('ask_followup', { session_id: first.session_id, question: 'again' })).answer_markdown).toBe('Third.');
  });

  it('a signal already aborted sends no request', async () => {
    const { api, call } = await start();
    const signal = AbortSignal.abort();
    expect(refused(await call('ask', { question: 'q' }, { signal }))).toBe('cancelled');
    expect(refused(await call('audit', { question: 'q' }, { signal }))).toBe('cancelled');
    expect(refused(await call('locate', { question: 'where is the server?' }, { signal }))).toBe('cancelled');
    expect(messagesOf(api)).toHaveLength(0);
  });

  it('the log line escapes control characters in the question, and cuts it to 60 characters', async () => {
    const { api, call, stderr } = await start();
    api.enqueue(reply(text('Fine.')));
    ok(await call('ask', { question: `\u001b[31mred${'y'.repeat(70)}` }));
    expect(stderr()).toBe(`spelunk mcp: \\x1b[31mred${'y'.repeat(52)} → end_turn, 1 requests, ${/~\$[0-9.]+/.exec(stderr())![0]}\n`);
  });

  it('the audit and locate log lines cut the question to 60 characters too', async () => {
    const { api, call, stderr } = await start();
    api.enqueue(reply(toolUse('report_findings', { verdict: 'pass', summary: 'fine', findings: [] })), reply(text('Done.')));
    const long = `where is the server ${'z'.repeat(70)}`;
    ok(await call('audit', { question: long }), 'audit');
    ok(await call('locate', { question: long }), 'locate');
    const lines = stderr().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^spelunk mcp: audit ${long.slice(0, 60)} → pass, ~\\$`));
    expect(lines[1]).toMatch(new RegExp(`^spelunk mcp: locate ${long.slice(0, 60)} → \\d+ files$`));
  });

  it('an answer that ends with no text is served as an empty answer, not an error', async () => {
    const { api, call } = await start();
    api.enqueue(reply(text('')));
    expect(ok(await call('ask', { question: 'q' }))).toMatchObject({ answer_markdown: '', stop_reason: 'end_turn', notes: [] });
  });

  it('locate ranks files with no model request and no budget, and logs the count', async () => {
    const { api, call, stderr } = await start();
    const found = ok(await call('locate', { question: 'where does createServer start the http server?', k: 2 }), 'locate');
    expect(found).toMatchObject({ type: 'locate', query: 'where does createServer start the http server?' });
    expect(found.results.length).toBeLessThanOrEqual(2);
    expect(found.results[0]).toMatchObject({ path: 'src/server.js', symbols: [{ name: 'createServer', kind: 'function', line: 4 }] });
    expect(stderr()).toBe(`spelunk mcp: locate where does createServer start the http server? → ${found.results.length} files\n`);
    expect(api.requests).toHaveLength(0);
  });
});
