import { describe, expect, it } from 'vitest';
import { Conversation } from '../../src/agent/conversation.js';
import type { Block } from '../../src/agent/model.js';

const BIG = 'x'.repeat(500);
const SMALL = 'short output';
const ELIDED = /^\[earlier tool output removed/;

function result(id: string, content: string, isError = false): Block {
  return { type: 'tool_result', tool_use_id: id, content, ...(isError ? { is_error: true } : {}) } as Block;
}

/** A question answered by `turns` tool rounds, each with one big and one small result. */
function conversationWith(turns: number): Conversation {
  const c = new Conversation();
  c.addQuestion('where is it?');
  for (let t = 1; t <= turns; t++) {
    c.addAssistant([{ type: 'tool_use', id: `big${t}`, name: 'bash', input: { command: 'rg x' } }, { type: 'tool_use', id: `small${t}`, name: 'bash', input: { command: 'ls' } }] as Block[]);
    c.addToolResults([result(`big${t}`, BIG, t === 1), result(`small${t}`, SMALL)]);
  }
  return c;
}

const contentOf = (c: Conversation, id: string): unknown =>
  c.messages.flatMap((m) => m.content).find((b) => b.type === 'tool_result' && (b as { tool_use_id: string }).tool_use_id === id);

describe('compaction', () => {
  it('never touches the newest two rounds of tool results, elides older large ones, keeps ids, order and is_error', () => {
    const c = conversationWith(4);
    const shape = JSON.stringify(c.messages.map((m) => m.content.map((b) => [b.type, (b as { tool_use_id?: string }).tool_use_id])));
    expect(c.compact()).toBe(2);
    expect(contentOf(c, 'big1')).toMatchObject({ content: expect.stringMatching(ELIDED), is_error: true });
    expect(contentOf(c, 'big2')).toMatchObject({ content: expect.stringMatching(ELIDED) });
    expect(contentOf(c, 'big3')).toMatchObject({ content: BIG });
    expect(contentOf(c, 'big4')).toMatchObject({ content: BIG });
    for (const t of [1, 2, 3, 4]) expect(contentOf(c, `small${t}`)).toMatchObject({ content: SMALL });
    expect(JSON.stringify(c.messages.map((m) => m.content.map((b) => [b.type, (b as { tool_use_id?: string }).tool_use_id])))).toBe(shape);
  });

  it.each([1, 2])('with %i round(s) there is nothing old enough to elide', (turns) => {
    const c = conversationWith(turns);
    expect(c.compact()).toBe(0);
    expect(contentOf(c, 'big1')).toMatchObject({ content: BIG });
  });

  it('a result just under the size worth eliding is kept', () => {
    const c = new Conversation();
    c.addQuestion('q');
    for (const [id, size] of [['a', 399], ['b', 400], ['c', 1], ['d', 1]] as const) {
      c.addAssistant([{ type: 'tool_use', id, name: 'bash', input: {} }] as Block[]);
      c.addToolResults([result(id, 'y'.repeat(size))]);
    }
    expect(c.compact()).toBe(1);
    expect(contentOf(c, 'a')).toMatchObject({ content: 'y'.repeat(399) });
    expect(contentOf(c, 'b')).toMatchObject({ content: expect.stringMatching(ELIDED) });
  });
});

describe('what is sent to the API', () => {
  it('never keeps an empty or whitespace-only text block from the model, and drops a message left empty', () => {
    const c = new Conversation();
    c.addQuestion('q');
    c.addAssistant([{ type: 'text', text: '' }, { type: 'text', text: ' \n\t' }, { type: 'tool_use', id: 't', name: 'bash', input: {} }] as Block[]);
    c.addToolResults([result('t', SMALL)]);
    c.addAssistant([{ type: 'text', text: '  ' }]);
    expect(c.messages).toHaveLength(3);
    expect(c.messages[1]!.content).toEqual([{ type: 'tool_use', id: 't', name: 'bash', input: {} }]);
    const sent = c.request({ model: 'm', maxTokens: 10, system: [], tools: [], thinking: false });
    const texts = sent.messages.flatMap((m) => m.content).filter((b) => b.type === 'text') as Array<{ text: string }>;
    expect(texts.every((b) => b.text.trim() !== '')).toBe(true);
  });

  it('puts at most three cache breakpoints, on copies: stored messages stay unmarked', () => {
    const c = conversationWith(3);
    const first = c.request({ model: 'm', maxTokens: 10, system: [], tools: [], thinking: false });
    c.addAssistant([{ type: 'tool_use', id: 'n', name: 'bash', input: {} }] as Block[]);
    c.addToolResults([result('n', SMALL)]);
    const second = c.request({ model: 'm', maxTokens: 10, system: [], tools: [], thinking: false });
    const marks = (r: typeof first) => r.messages.flatMap((m) => m.content).filter((b) => 'cache_control' in b).length;
    expect(marks(first)).toBe(1);
    expect(marks(second)).toBe(2);
    expect(JSON.stringify(c.messages)).not.toContain('cache_control');
  });
});
