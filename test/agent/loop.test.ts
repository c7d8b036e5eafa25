import { describe, expect, it } from 'vitest';
import { stopMessage } from '../../src/exit-codes.js';
import { Conversation } from '../../src/agent/conversation.js';
import type { AgentEvent } from '../../src/agent/events.js';
import { ABORT_INTERRUPT, ABORT_TIMEOUT, askQuestion, INTERRUPTED_MARK, type LoopConfig } from '../../src/agent/loop.js';
import { ModelError, type Message } from '../../src/agent/model.js';
import { testLoopConfig } from '../support/loop-config.js';
import { scriptedClient, text, toolUse, type Step } from '../support/scripted-client.js';

function setup(steps: Step[], extra: Partial<LoopConfig> = {}) {
  const client = scriptedClient(steps);
  const config = testLoopConfig(client, extra);
  return { client, config, conversation: new Conversation() };
}

async function collect(gen: AsyncGenerator<AgentEvent>): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const e of gen) events.push(e);
  return events;
}

function lastDone(events: AgentEvent[]) {
  const done = events.at(-1);
  if (done?.type !== 'done') throw new Error('no done event last');
  return done;
}

/** The API's pairing rule: each tool_use is answered by exactly one leading tool_result in the next message. */
function assertValid(messages: Message[]): void {
  expect(messages[0]?.role).toBe('user');
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (i > 0) expect(m.role).not.toBe(messages[i - 1]!.role);
    const uses = m.content.filter((b) => b.type === 'tool_use').map((b) => (b as { id: string }).id);
    if (uses.length === 0) continue;
    const next = messages[i + 1];
    expect(next, 'tool_use must be answered').toBeDefined();
    const results = next!.content.slice(0, uses.length).map((b) => (b.type === 'tool_result' ? b.tool_use_id : null));
    expect(results).toEqual(uses);
  }
  expect(messages.at(-1)?.content.some((b) => 'cache_control' in b)).toBe(false);
}

describe('askQuestion', () => {
  it('streams a plain answer and ends the turn', async () => {
    const { config, conversation } = setup([{ blocks: [text('The router is in src/server.js:12.')] }]);
    const events = await collect(askQuestion('where?', conversation, config, new AbortController().signal));
    expect(events.map((e) => e.type)).toEqual(['request_start', 'first_token', 'text', 'usage', 'assistant_message', 'done']);
    expect(lastDone(events)).toMatchObject({ stop: 'end_turn', text: 'The router is in src/server.js:12.', turns: 1 });
    expect(events.find((e) => e.type === 'assistant_message')).toMatchObject({
      turn: 1,
      message: { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'The router is in src/server.js:12.' }], stop_reason: 'end_turn' },
    });
    expect(conversation.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('runs several tools of one turn and answers them in one message, in request order', async () => {
    const { client, config, conversation } = setup([
      { blocks: [text('Looking.'), toolUse('echo', { say: 'a' }, 't1'), toolUse('echo', { say: 'b' }, 't2'), toolUse('nope', {}, 't3')] },
      { blocks: [text('Done.')] },
    ]);
    const events = await collect(askQuestion('q', conversation, config, new AbortController().signal));
    const ends = events.filter((e) => e.type === 'tool_end');
    expect(ends).toHaveLength(3);
    const second = client.requests[1]!.messages.at(-1)!;
    expect(second.content.map((b) => (b.type === 'tool_result' ? [b.tool_use_id, b.is_error ?? false] : b.type))).toEqual([
      ['t1', false],
      ['t2', false],
      ['t3', true],
    ]);
    expect(JSON.stringify(second.content[2])).toContain('Unknown tool');
    // The round's results are reported as sent, after every tool_end and before the next request.
    const types = events.map((e) => e.type);
    const round = events.find((e) => e.type === 'tool_results');
    expect(types.indexOf('tool_results')).toBeGreaterThan(types.lastIndexOf('tool_end'));
    expect(types.indexOf('tool_results')).toBeLessThan(types.lastIndexOf('request_start'));
    expect(round?.type === 'tool_results' && round.content.map((b) => (b.type === 'tool_result' ? b.tool_use_id : b.type))).toEqual(['t1', 't2', 't3']);
    expect(JSON.stringify(round)).not.toContain('cache_control');
    assertValid(conversation.messages);
    // Text of the second request starts a new paragraph.
    expect(events.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text).join('')).toBe('Looking.\n\nDone.');
  });

  it('feeds malformed tool input back as an error result', async () => {
    const { client, config, conversation } = setup([{ blocks: [toolUse('echo', { say: 7 }, 't1')] }, { blocks: [text('ok')] }]);
    await collect(askQuestion('q', conversation, config, new AbortController().signal));
    const result = client.requests[1]!.messages.at(-1)!.content[0]!;
    expect(result).toMatchObject({ type: 'tool_result', tool_use_id: 't1', is_error: true });
    expect(JSON.stringify(result)).toContain('say must be a string');
  });

  it('never exceeds --max-turns and leaves a valid conversation', async () => {
    const steps: Step[] = Array.from({ length: 5 }, (_, i) => ({ blocks: [toolUse('echo', { say: `${i}` }, `t${i}`)] }));
    const { client, config, conversation } = setup(steps, { maxTurns: 3 });
    const events = await collect(askQuestion('q', conversation, config, new AbortController().signal));
    expect(client.requests).toHaveLength(3);
    expect(lastDone(events)).toMatchObject({ stop: 'max_turns', turns: 3 });
    expect(lastDone(events)).toMatchObject({ limit: 'maxTurns', value: 3, requests: 3 });
    expect(stopMessage(lastDone(events), 'cli')).toContain('--max-turns 3');
    assertValid(conversation.messages);
    expect(conversation.messages.at(-1)?.role).toBe('user');
  });

  it('merges the next question into a trailing user message so roles keep alternating', async () => {
    const { client, config, conversation } = setup([{ blocks: [toolUse('echo', { say: 'x' }, 't1')] }, { blocks: [text('second answer')] }], { maxTurns: 1 });
    await collect(askQuestion('first', conversation, config, new AbortController().signal));
    await collect(askQuestion('second', conversation, config, new AbortController().signal));
    const last = client.requests[1]!.messages.at(-1)!;
    // --max-turns 1: the question is followed by the last-request note, in the same message.
    expect(last.content.map((b) => b.type)).toEqual(['tool_result', 'text', 'text']);
    expect(last.content.map((b) => (b.type === 'text' ? b.text.slice(0, 35) : b.type))).toEqual(['tool_result', 'second', '[spelunk: this is your last request']);
    assertValid(conversation.messages);
  });

  it('cancels mid-stream without recording a half turn', async () => {
    const { config, conversation } = setup([{ hang: true }, { blocks: [text('after')] }]);
    const controller = new AbortController();
    const events: AgentEvent[] = [];
    for await (const e of askQuestion('q', conversation, config, controller.signal)) {
      events.push(e);
      if (e.type === 'request_start') controller.abort(ABORT_INTERRUPT);
    }
    expect(lastDone(events).stop).toBe('aborted');
    assertValid(conversation.messages);
    const next = await collect(askQuestion('again', conversation, config, new AbortController().signal));
    expect(lastDone(next).stop).toBe('end_turn');
    assertValid(conversation.messages);
  });

  it('cancels mid-tool: running tools stop and every tool_use still gets its result', async () => {
    const { config, conversation } = setup([{ blocks: [toolUse('echo', { say: 'x', wait: true }, 't1'), toolUse('echo', { say: 'y' }, 't2')] }]);
    const controller = new AbortController();
    const events: AgentEvent[] = [];
    for await (const e of askQuestion('q', conversation, config, controller.signal)) {
      events.push(e);
      if (e.type === 'tool_start' && e.id === 't2') controller.abort(ABORT_INTERRUPT);
    }
    expect(lastDone(events).stop).toBe('aborted');
    assertValid(conversation.messages);
    expect(conversation.messages.at(-1)!.content.map((b) => b.type)).toEqual(['tool_result', 'tool_result', 'text']);
    expect(conversation.messages.at(-1)!.content.at(-1)).toEqual({ type: 'text', text: INTERRUPTED_MARK });
  });

  it('marks a question cancelled before any answer, so the next one is not read as its continuation', async () => {
    const { config, conversation, client } = setup([{ hang: true }, { blocks: [text('second answer')] }]);
    const controller = new AbortController();
    for await (const e of askQuestion('tell me something long', conversation, config, controller.signal)) {
      if (e.type === 'request_start') controller.abort(ABORT_INTERRUPT);
    }
    await collect(askQuestion('and now?', conversation, config, new AbortController().signal));
    expect(client.requests[1]!.messages[0]!.content.map((b) => (b.type === 'text' ? b.text : b.type))).toEqual(['tell me something long', INTERRUPTED_MARK, 'and now?']);
    assertValid(conversation.messages);
  });

  it('reports a timeout abort as timeout', async () => {
    const { config, conversation } = setup([{ hang: true }]);
    const controller = new AbortController();
    const events: AgentEvent[] = [];
    for await (const e of askQuestion('q', conversation, config, controller.signal)) {
      events.push(e);
      if (e.type === 'request_start') controller.abort(ABORT_TIMEOUT);
    }
    expect(lastDone(events).stop).toBe('timeout');
  });

  it('turns an API failure into a done event and keeps the conversation valid', async () => {
    const error = new ModelError('API 529 overloaded_error: Overloaded (request req_1)', 529, 'overloaded_error', 'req_1', false);
    const { config, conversation } = setup([{ blocks: [toolUse('echo', { say: 'x' }, 't1')] }, { error }]);
    const events = await collect(askQuestion('q', conversation, config, new AbortController().signal));
    expect(lastDone(events)).toMatchObject({ stop: 'api_error', error: error.message });
    assertValid(conversation.messages);
  });

  it.each([
    ['max_tokens', 'max_tokens', '--max-tokens 1000'],
    ['refusal', 'refusal', 'declined'],
    ['model_context_window_exceeded', 'context_exceeded', 'context window'],
  ] as const)('stop_reason %s → %s', async (stop, kind, fragment) => {
    const { config, conversation } = setup([{ blocks: [text('partial'), toolUse('echo', { say: '' }, 't9')], stop }]);
    const events = await collect(askQuestion('q', conversation, config, new AbortController().signal));
    expect(lastDone(events).stop).toBe(kind);
    expect(stopMessage(lastDone(events), 'cli')).toContain(fragment);
    // The event itself is data: no front end's wording rides in it.
    expect(JSON.stringify(lastDone(events))).not.toMatch(/--|\/clear/);
    // A cut tool_use is never kept without a result.
    expect(JSON.stringify(conversation.messages)).not.toContain('t9');
    if (kind === 'refusal') expect(conversation.messages).toEqual([]);
  });

  it('continues after pause_turn with a user nudge', async () => {
    const { client, config, conversation } = setup([{ blocks: [text('thinking about it')], stop: 'pause_turn' }, { blocks: [text('answer')] }]);
    const events = await collect(askQuestion('q', conversation, config, new AbortController().signal));
    expect(lastDone(events)).toMatchObject({ stop: 'end_turn', turns: 2 });
    expect(client.requests[1]!.messages.at(-1)!.role).toBe('user');
    assertValid(conversation.messages);
  });

  it('places cache breakpoints: newest user block, and the previous one while a question runs (≤ 4 in all)', async () => {
    const many = Array.from({ length: 12 }, (_, i) => toolUse('echo', { say: `${i}` }, `m${i}`));
    const { client, config, conversation } = setup([{ blocks: many }, { blocks: [toolUse('echo', { say: 'z' }, 'z1')] }, { blocks: [text('done')] }]);
    await collect(askQuestion('q', conversation, config, new AbortController().signal));
    for (const request of client.requests) {
      const marks = request.messages.flatMap((m, mi) => m.content.map((b, bi) => ('cache_control' in b && b.cache_control ? `${mi}:${bi}` : null))).filter(Boolean);
      const lastMsg = request.messages.length - 1;
      expect(marks).toContain(`${lastMsg}:${request.messages[lastMsg]!.content.length - 1}`);
      expect(marks.length + request.system.filter((s) => s.cache_control).length).toBeLessThanOrEqual(4);
    }
    // The third request re-marks where the second put its rolling breakpoint (12 results + 2 blocks later).
    const third = client.requests[2]!;
    expect(third.messages[2]!.content[11]).toHaveProperty('cache_control');
    // Stored messages never keep markers.
    expect(JSON.stringify(conversation.messages)).not.toContain('cache_control');
  });

  it('stops before a request the money left cannot pay for (its prompt and the least answer)', async () => {
    let spent = 0;
    const { client, config, conversation } = setup(
      [{ blocks: [toolUse('echo', { say: 'x' }, 't1')] }, { blocks: [text('never')] }],
      {
        budget: {
          maxUsd: 0.05,
          spentUsd: () => spent,
        },
      },
    );
    const events: AgentEvent[] = [];
    for await (const e of askQuestion('q', conversation, config, new AbortController().signal)) {
      events.push(e);
      // $0.005 left: the 1,000-token prompt ($0.0025 written) leaves 250 output tokens, under the least answer (1,000).
      if (e.type === 'usage') spent += 0.045;
    }
    expect(client.requests).toHaveLength(1);
    expect(lastDone(events).stop).toBe('max_budget');
    expect(lastDone(events)).toMatchObject({ limit: 'maxBudgetUsd', value: 0.05, budget: { kind: 'next' } });
    expect(stopMessage(lastDone(events), 'cli')).toContain('--max-budget-usd 0.05');
    assertValid(conversation.messages);
  });

  it('elides old tool results when the prompt nears the context window', async () => {
    const big = 'x'.repeat(1000);
    const steps: Step[] = [
      ...Array.from({ length: 4 }, (_, i) => ({ blocks: [toolUse('echo', { say: big }, `c${i}`)], usage: { input_tokens: 200_000 } })),
      { blocks: [text('done')] },
    ];
    const { client, config, conversation } = setup(steps, { maxTurns: 10 });
    const events = await collect(askQuestion('q', conversation, config, new AbortController().signal));
    expect(events.some((e) => e.type === 'warning' && e.message.includes('placeholders'))).toBe(true);
    const lastRequest = JSON.stringify(client.requests.at(-1));
    expect(lastRequest).toContain('earlier tool output removed');
    assertValid(conversation.messages);
  });
});
