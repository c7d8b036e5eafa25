import { describe, expect, it } from 'vitest';
import { lastRequestWhy, stopMessage } from '../../src/exit-codes.js';
import { estimateCostUsd } from '../../src/agent/pricing.js';
import { Conversation } from '../../src/agent/conversation.js';
import type { AgentEvent } from '../../src/agent/events.js';
import { askQuestion, type LoopConfig } from '../../src/agent/loop.js';
import type { Block, ModelRequest } from '../../src/agent/model.js';
import { testLoopConfig } from '../support/loop-config.js';
import { scriptedClient, text, toolUse, type Step } from '../support/scripted-client.js';

function setup(steps: Step[], extra: Partial<LoopConfig> = {}) {
  const client = scriptedClient(steps);
  const maxTurns = extra.maxTurns ?? 3;
  const config = testLoopConfig(client, { maxTurns, lastRequestWhy: (limit) => lastRequestWhy(limit, maxTurns, 'cli'), ...extra });
  return { client, config, conversation: new Conversation() };
}

async function ask(question: string, conversation: Conversation, config: LoopConfig) {
  const events: AgentEvent[] = [];
  for await (const e of askQuestion(question, conversation, config, new AbortController().signal)) events.push(e);
  const done = events.at(-1);
  if (done?.type !== 'done') throw new Error('no done event last');
  return done;
}

const NOTE = '[spelunk: this is your last request: ';
const lastBlock = (request: ModelRequest): Block => request.messages.at(-1)!.content.at(-1)!;
const noted = (request: ModelRequest): boolean => JSON.stringify(request.messages).includes(NOTE);
const tool = (id: string): Step => ({ blocks: [text('Looking.'), toolUse('echo', { say: id }, id)] });

describe('the last request a limit allows', () => {
  it('--max-turns: only the last request carries the note, after the tool results; the answer is kept, marked incomplete', async () => {
    const { client, config, conversation } = setup([tool('t1'), tool('t2'), { blocks: [text('Partial: it is in a.ts:1.')] }]);
    const done = await ask('where?', conversation, config);
    expect(client.requests.map(noted)).toEqual([false, false, true]);
    const final = client.requests[2]!;
    expect(final.messages.at(-1)!.content.map((b) => b.type)).toEqual(['tool_result', 'text']);
    expect(lastBlock(final)).toMatchObject({ type: 'text', cache_control: { type: 'ephemeral' } });
    expect((lastBlock(final) as { text: string }).text).toBe(
      '[spelunk: this is your last request: --max-turns 3 allows no request after this one. Do not call any more tools: answer the question now with what you have found, cite the evidence you have read, and say plainly what you could not check.]',
    );
    expect(done).toMatchObject({ stop: 'max_turns', text: 'Partial: it is in a.ts:1.', turns: 3 });
    expect(stopMessage(done, 'cli')).toBe('answered with what it had in the last request --max-turns 3 allowed, so the answer may be incomplete; raise --max-turns for a fuller one');
  });

  it('keeps the cached prefix: system and tools unchanged, every earlier message byte-identical to the previous request', async () => {
    const { client, config, conversation } = setup([tool('t1'), tool('t2'), { blocks: [text('Answer.')] }]);
    await ask('where?', conversation, config);
    const [, second, third] = client.requests;
    expect(JSON.stringify(third!.system)).toBe(JSON.stringify(second!.system));
    expect(JSON.stringify(third!.tools)).toBe(JSON.stringify(second!.tools));
    const strip = (messages: ModelRequest['messages']) => JSON.stringify(messages.map((m) => m.content.map(({ cache_control: _, ...b }) => b)));
    expect(strip(third!.messages.slice(0, second!.messages.length))).toBe(strip(second!.messages));
  });

  it('the note stays in the conversation, so the next question repeats the bytes that were sent (and cached)', async () => {
    const { client, config, conversation } = setup([{ blocks: [text('First answer.')] }, { blocks: [text('Second answer.')] }], { maxTurns: 1 });
    await ask('first?', conversation, config);
    await ask('second?', conversation, config);
    const firstSent = client.requests[0]!.messages[0]!.content.map((b) => (b.type === 'text' ? b.text : b.type));
    const resent = client.requests[1]!.messages[0]!.content.map((b) => (b.type === 'text' ? b.text : b.type));
    expect(resent).toEqual(firstSent);
    expect(firstSent).toHaveLength(2);
  });

  it('a model that still calls a tool in its last request stops at the limit as before, with its text', async () => {
    const { client, config, conversation } = setup([tool('t1'), tool('t2')], { maxTurns: 2 });
    const done = await ask('where?', conversation, config);
    expect(client.requests).toHaveLength(2);
    expect(client.requests.map(noted)).toEqual([false, true]);
    expect(done).toMatchObject({ stop: 'max_turns', text: 'Looking.', turns: 2 });
    expect(stopMessage(done, 'cli')).toContain('before a final answer');
  });

  it('--max-turns 5 answered in two requests: no note, a plain answer', async () => {
    const { client, config, conversation } = setup([tool('t1'), { blocks: [text('Answer.')] }], { maxTurns: 5 });
    const done = await ask('where?', conversation, config);
    expect(client.requests.some(noted)).toBe(false);
    expect(done).toMatchObject({ stop: 'end_turn', text: 'Answer.' });
    expect(stopMessage(done, 'cli')).toBeUndefined();
  });

  // claude-sonnet-5-5 (the test config's model): a 1,000-token prompt written costs $0.0025, read $0.0002; 1,000
  // output tokens (all of --max-tokens here, which caps the reserve and the least answer) $0.01.
  it.each([
    // [budget, requests made, notes, stop]
    [1.0, 2, [false, false], 'end_turn'],
    // The first request ($0.0125 with its reserve) and a next one on a prompt grown by two reserves ($0.0152) fit in
    // 0.03; after it ($0.012 billed) the second and a third ($0.0125 + $0.0127) do not: the second is the last.
    [0.03, 2, [false, true], 'max_budget'],
    // Only one fits with room for the next: the first request is the last.
    [0.02, 1, [true], 'max_budget'],
  ] as const)('--max-budget-usd %s: %i request(s), priced from the billed usage', async (maxUsd, requests, notes, stop) => {
    let spent = 0;
    // The tool call bills a 1,000-token uncached prompt and 1,000 output tokens: $0.012.
    const billed: Step = { ...tool('t1'), usage: { input_tokens: 1000, output_tokens: 1000 } };
    const steps: Step[] = requests === 1 ? [{ blocks: [text('Answer.')] }] : [billed, { blocks: [text('Answer.')] }];
    const { client, config, conversation } = setup(steps, {
      maxTurns: 10,
      budget: { maxUsd, spentUsd: () => spent },
      lastRequestWhy: (limit) => (limit === 'max_budget' ? `--max-budget-usd ${maxUsd} leaves room for no request after this one` : 'turns'),
    });
    const events: AgentEvent[] = [];
    for await (const e of askQuestion('where?', conversation, config, new AbortController().signal)) {
      events.push(e);
      if (e.type === 'usage') spent += estimateCostUsd(config.model, e.usage) ?? 0;
    }
    expect(client.requests.map(noted)).toEqual(notes);
    const done = events.at(-1) as Extract<AgentEvent, { type: 'done' }>;
    expect(done).toMatchObject({ stop, text: 'Answer.' });
    if (stop === 'max_budget') {
      expect(JSON.stringify(client.requests.at(-1)!.messages)).toContain(`--max-budget-usd ${maxUsd} leaves room for no request after this one`);
      expect(stopMessage(done, 'cli')).toContain('so the answer may be incomplete; raise the budget');
    }
  });

  it('without the front end\'s words the note names no flag', async () => {
    const { client, config, conversation } = setup([tool('t1'), { blocks: [text('A.')] }], { maxTurns: 2, lastRequestWhy: undefined });
    await ask('where?', conversation, config);
    const note = (lastBlock(client.requests[1]!) as { text: string }).text;
    expect(note).toContain('the limit of 2 model requests allows no request after this one');
    expect(note).not.toContain('--');
  });

  it('an audit is told to file its report rather than answer', async () => {
    const { client, config, conversation } = setup([{ blocks: [text('Filed.')] }], {
      maxTurns: 1,
      finishInstruction: 'Call report_findings now.',
      lastRequestWhy: () => '--max-turns 1 allows no request after this one',
    });
    await ask('audit?', conversation, config);
    expect((lastBlock(client.requests[0]!) as { text: string }).text).toBe('[spelunk: this is your last request: --max-turns 1 allows no request after this one. Call report_findings now.]');
  });

  it.each([
    ['max_turns', 3, 'cli', '--max-turns 3 allows no request after this one'],
    ['max_turns', 3, 'mcp', 'max_turns 3 allows no request after this one'],
    ['max_budget', 0.5, 'cli', '--max-budget-usd 0.5 leaves room for no request after this one'],
    ['max_budget', 0.5, 'mcp', "the call's budget ($0.5) leaves room for no request after this one"],
  ] as const)('%s %s in the %s\'s words', (limit, value, front, words) => {
    expect(lastRequestWhy(limit, value, front)).toBe(words);
  });
});
