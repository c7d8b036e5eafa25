import { describe, expect, it } from 'vitest';
import { Conversation, type RequestBase } from '../../src/agent/conversation.js';
import type { Block, ModelRequest } from '../../src/agent/model.js';

// The survivors of the 2026-11-26 Stryker run on agent/conversation.ts: what each request carries, where its cache
// breakpoints sit, what rollback, clear and draft leave behind, and which messages compaction counts as results.

const BASE: RequestBase = { model: 'm', maxTokens: 10, system: [], tools: [], thinking: false };
const BIG = 'x'.repeat(500);

function toolRound(c: Conversation, id: string, content = 'out'): void {
  c.addAssistant([{ type: 'tool_use', id, name: 'bash', input: {} }] as Block[]);
  c.addToolResults([{ type: 'tool_result', tool_use_id: id, content } as Block]);
}

/** [message index, block index] of every block that carries a cache breakpoint. */
function marks(request: ModelRequest): Array<[number, number]> {
  return request.messages.flatMap((m, i) => m.content.flatMap((b, j): Array<[number, number]> => ('cache_control' in b ? [[i, j]] : [])));
}

describe('the messages', () => {
  it('a pause_turn nudge is one user message saying "Continue."', () => {
    const c = new Conversation();
    c.addQuestion('q');
    c.addAssistant([{ type: 'text', text: 'thinking about it' }]);
    c.addContinue();
    expect(c.messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'Continue.' }] });
  });

  it('rollback takes a question merged into the tool results back out of that message', () => {
    const c = new Conversation();
    c.addQuestion('q1');
    toolRound(c, 't');
    const mark = c.addQuestion('q2');
    expect(c.messages.at(-1)!.content).toHaveLength(2);
    c.rollback(mark);
    expect(c.messages).toHaveLength(3);
    expect(c.messages.at(-1)!.content).toEqual([{ type: 'tool_result', tool_use_id: 't', content: 'out' }]);
  });

  it('clear forgets the messages, the token count, the last id and the previous breakpoint', () => {
    const c = new Conversation();
    c.addQuestion('q1');
    c.request(BASE);
    c.lastPromptTokens = 123;
    c.lastMessageId = 'msg_1';
    c.clear();
    expect([c.messages, c.lastPromptTokens, c.lastMessageId]).toEqual([[], 0, null]);
    c.addQuestion('q2');
    c.addNote('note');
    // Only the newest block is marked: the breakpoint of the request before clear is gone.
    expect(marks(c.request(BASE))).toEqual([[0, 1]]);
  });
});

describe('cache breakpoints', () => {
  it('the newest user block gets one; the previous one stays when it is another block of the same message', () => {
    const c = new Conversation();
    c.addQuestion('q');
    expect(marks(c.request(BASE))).toEqual([[0, 0]]);
    c.addNote('a note');
    expect(marks(c.request(BASE))).toEqual([[0, 0], [0, 1]]);
  });

  it('the previous one stays when it is the same block index of another message', () => {
    const c = new Conversation();
    c.addQuestion('q');
    c.request(BASE);
    toolRound(c, 't');
    expect(marks(c.request(BASE))).toEqual([[0, 0], [2, 0]]);
  });

  it('a request repeated unchanged has one breakpoint, not the same one twice', () => {
    const c = new Conversation();
    c.addQuestion('q');
    c.request(BASE);
    const again = c.request(BASE);
    expect(marks(again)).toEqual([[0, 0]]);
    expect(again.messages[0]!.content).toHaveLength(1);
  });

  it('none on a conversation that ends with the model, or with an empty user message', () => {
    const c = new Conversation();
    c.addQuestion('q');
    c.addAssistant([{ type: 'text', text: 'answer' }]);
    const ending = c.request(BASE);
    expect(marks(ending)).toEqual([]);
    const empty = new Conversation();
    empty.addToolResults([]);
    const sent = empty.request(BASE);
    expect(sent.messages).toEqual([{ role: 'user', content: [] }]);
    expect(Object.keys(sent.messages[0]!.content)).toEqual([]);
  });

  it('thinking and effort are sent only when asked for', () => {
    const c = new Conversation();
    c.addQuestion('q');
    const plain = c.request(BASE);
    expect('thinking' in plain || 'output_config' in plain).toBe(false);
    const asked = c.request({ ...BASE, thinking: true, effort: 'high' });
    expect(asked).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' } });
  });
});

describe('draft', () => {
  it('prices the note where addNote would put it, without adding it or moving the breakpoints', () => {
    const c = new Conversation();
    c.addQuestion('q');
    toolRound(c, 't');
    const drafted = c.draft(BASE, 'last request');
    expect(drafted.messages.at(-1)!.content.at(-1)).toMatchObject({ type: 'text', text: 'last request' });
    expect(drafted.messages).toHaveLength(3);
    expect(c.messages.at(-1)!.content).toHaveLength(1);
    // The breakpoint the draft computed was not kept: the next request marks only its own newest block.
    expect(marks(c.request(BASE))).toEqual([[2, 0]]);
  });

  it('after the model spoke last, the note is a new user message; without a note the draft is the request', () => {
    const c = new Conversation();
    c.addQuestion('q');
    c.addAssistant([{ type: 'text', text: 'answer' }]);
    const drafted = c.draft(BASE, 'note');
    expect(drafted.messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'note', cache_control: { type: 'ephemeral' } }] });
    expect(c.messages).toHaveLength(2);
    expect(c.draft(BASE, null).messages).toEqual(c.request(BASE).messages);
  });
});

describe('compaction counts only user messages that carry tool results', () => {
  it('a later question is not a result message: the three rounds before it keep the newest two', () => {
    const c = new Conversation();
    c.addQuestion('q1');
    for (const id of ['a', 'b', 'c']) toolRound(c, id, BIG);
    c.addAssistant([{ type: 'text', text: 'answer' }]);
    c.addQuestion('q2');
    expect(c.compact()).toBe(1);
  });

  it('a results message with a note after the results still counts', () => {
    const c = new Conversation();
    c.addQuestion('q1');
    for (const id of ['a', 'b', 'c']) toolRound(c, id, BIG);
    c.addNote('last request');
    expect(c.compact()).toBe(1);
  });
});
