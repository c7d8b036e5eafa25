import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import type { ResultObject } from '../../src/output/result.js';
import { createStreamJsonRenderer, STREAM_CONTENT_MAX_CHARS } from '../../src/output/stream-json.js';

// Edges of the stream-json lines that the mutation run of src/output/stream-json.ts found untested
// (scripts/mutation-areas.json, area "stream-json"): the cut of tool output at its limit, the result's own uuid, a
// second result, a tool call's input.
const MAX = STREAM_CONTENT_MAX_CHARS;
const INIT = { model: 'claude-sonnet-5', cwd: '/repo', tools: ['bash'], spelunkVersion: '0.1.0', sandbox: 'tables' as const, apiKeySource: 'ANTHROPIC_API_KEY' as const };

function render(events: AgentEvent[], results: Record<string, unknown>[] = []): Record<string, any>[] {
  const writes: string[] = [];
  const renderer = createStreamJsonRenderer({ write: (chunk: string) => writes.push(chunk) }, INIT);
  for (const event of events) renderer.handle(event);
  for (const result of results) renderer.result(result as unknown as ResultObject);
  return writes.map((w) => JSON.parse(w) as Record<string, any>);
}

/** The text the user line shows of one tool result. */
function shown(content: string): string {
  const [, user] = render([{ type: 'tool_results', turn: 1, content: [{ type: 'tool_result', tool_use_id: 't', content }] }]);
  return user!.message.content[0].content as string;
}

describe('stream-json: tool output cut at its limit', () => {
  const note = (n: number) => `\n[spelunk: ${n} more characters were sent to the model; not shown in the stream]`;
  it.each([
    ['exactly the limit: whole', 'x'.repeat(MAX), 'x'.repeat(MAX)],
    ['one over: the limit, and a note', 'x'.repeat(MAX + 1), 'x'.repeat(MAX) + note(1)],
    ['a pair ending at the limit stays whole', `${'x'.repeat(MAX - 2)}😀y`, `${'x'.repeat(MAX - 2)}😀${note(1)}`],
    ['a pair across the limit (high half U+D800) is left out whole', `${'x'.repeat(MAX - 1)}\ud800\udc00`, 'x'.repeat(MAX - 1) + note(2)],
    ['a pair across the limit (high half U+DBFF) is left out whole', `${'x'.repeat(MAX - 1)}\udbff\udfff`, 'x'.repeat(MAX - 1) + note(2)],
    ['a character just past the high halves (U+DC00) is not a pair\'s start', `${'x'.repeat(MAX - 1)}\udc00zz`, `${'x'.repeat(MAX - 1)}\udc00${note(2)}`],
  ])('%s', (_what, content, expected) => {
    expect(shown(content)).toBe(expected);
  });

  it('a block that is not a tool result passes as it is', () => {
    const [, user] = render([{ type: 'tool_results', turn: 1, content: [{ type: 'text', text: 'y'.repeat(MAX + 5) }] } as unknown as AgentEvent]);
    expect(user!.message.content).toEqual([{ type: 'text', text: 'y'.repeat(MAX + 5) }]);
  });
});

describe('stream-json: the lines\' own fields', () => {
  it('the result keeps its own uuid, and a second result writes nothing', () => {
    const lines = render([], [{ type: 'result', subtype: 'success', uuid: 'u-1' }, { type: 'result', subtype: 'success', uuid: 'u-2' }]);
    expect(lines.map((l) => [l.type, l.uuid === 'u-1'])).toEqual([['system', false], ['result', true]]);
  });

  it('a tool call\'s input is on its line; none is null', () => {
    const lines = render([
      { type: 'tool_start', id: 'a', name: 'bash', input: { command: 'ls' }, display: 'ls' },
      { type: 'tool_start', id: 'b', name: 'bash', input: undefined, display: '' } as unknown as AgentEvent,
    ]);
    expect(lines.slice(1).map((l) => l.input)).toEqual([{ command: 'ls' }, null]);
  });
});
