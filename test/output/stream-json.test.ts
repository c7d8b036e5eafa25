import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import type { AgentEvent, ApiMessage, Usage } from '../../src/agent/events.js';
import { ResultCollector } from '../../src/output/result.js';
import { createStreamJsonRenderer, STREAM_CONTENT_MAX_CHARS } from '../../src/output/stream-json.js';

const schema = (name: string): object => JSON.parse(readFileSync(new URL(`../../schema/${name}`, import.meta.url), 'utf8'));
const ajv = new Ajv({ allErrors: true, strict: true });
// The stream schema refers to its sibling by file name, as a validator reading both files from disk would resolve it.
ajv.addSchema(schema('result.schema.json'), 'result.schema.json');
const validateEvent = ajv.compile(schema('stream-event.schema.json'));

const usage: Usage = {
  input_tokens: 10,
  cache_creation_input_tokens: 2000,
  cache_read_input_tokens: 0,
  output_tokens: 30,
  cache_creation: { ephemeral_5m_input_tokens: 2000, ephemeral_1h_input_tokens: 0 },
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const BIG = `${'x'.repeat(STREAM_CONTENT_MAX_CHARS - 1)}😀 and more`;

const EVENTS: AgentEvent[] = [
  { type: 'request_start', turn: 1 },
  { type: 'first_token', turn: 1 },
  { type: 'thinking', text: 'Where is the server?' },
  { type: 'text', text: 'Searching:\nline two \u2028 separator' },
  { type: 'tool_start', id: 'toolu_1', name: 'bash', input: { command: 'rg -n listen' }, display: 'rg -n listen' },
  {
    type: 'tool_end',
    id: 'toolu_1',
    name: 'bash',
    input: { command: 'rg -n listen' },
    outcome: { content: BIG, summary: '900 matches', isError: false },
    durationMs: 7.7,
  },
  { type: 'usage', turn: 1, model: 'claude-sonnet-5', usage, durationMs: 500, requestId: 'req_1' },
  { type: 'assistant_message', turn: 1, message: apiMessage(1, [{ type: 'text', text: 'Searching:' }, { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'rg -n listen' } }], 'tool_use') },
  { type: 'tool_results', turn: 1, content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: BIG }] },
  { type: 'retry', message: '429, retrying' },
  { type: 'warning', message: 'output truncated' },
  { type: 'request_start', turn: 2 },
  { type: 'text', text: 'src/server.ts:3' },
  { type: 'usage', turn: 2, model: 'claude-sonnet-5', usage, durationMs: 200, requestId: null },
  { type: 'assistant_message', turn: 2, message: apiMessage(2, [{ type: 'text', text: 'src/server.ts:3' }], 'end_turn') },
  { type: 'done', stop: 'end_turn', text: 'src/server.ts:3', turns: 2 },
];

function apiMessage(n: number, content: ApiMessage['content'], stop: string): ApiMessage {
  return { id: `msg_${n}`, type: 'message', role: 'assistant', model: 'claude-sonnet-5', content, stop_reason: stop, stop_sequence: null, usage };
}

const INIT = { model: 'claude-sonnet-5', cwd: '/repo', tools: ['read_file', 'bash'], spelunkVersion: '0.1.0', sandbox: 'tables' as const, sessionId: 'sess-1', apiKeySource: 'ANTHROPIC_API_KEY' as const };

function run(events: AgentEvent[], opts: { costOf?: (m: string, u: Usage) => number | null; after?: AgentEvent[]; partial?: boolean } = {}) {
  const writes: string[] = [];
  const renderer = createStreamJsonRenderer({ write: (chunk: string) => writes.push(chunk) }, { ...INIT, costOf: opts.costOf, partialMessages: opts.partial === true });
  const collector = new ResultCollector(opts.costOf === undefined ? {} : { costOf: opts.costOf });
  for (const event of events) {
    collector.handle(event);
    renderer.handle(event);
  }
  renderer.result(
    collector.toResult({ stop: 'api_error', model: INIT.model, durationMs: 900, sessionId: 'sess-1', root: '/repo', gitCommit: null, readonly: { verified: true, detail: null }, sandbox: 'tables' }),
  );
  for (const event of opts.after ?? []) renderer.handle(event);
  return writes;
}

describe('stream-json renderer', () => {
  it('writes one complete line per write, init first and the result last, each valid against the schema', () => {
    const writes = run(EVENTS, { costOf: () => 0.0123456789 });
    for (const chunk of writes) {
      expect(chunk.endsWith('\n')).toBe(true);
      expect(chunk.indexOf('\n')).toBe(chunk.length - 1);
    }
    const lines = writes.map((chunk) => JSON.parse(chunk) as Record<string, unknown>);
    for (const line of lines) {
      expect(validateEvent(line), JSON.stringify(validateEvent.errors)).toBe(true);
    }
    expect(lines.map((l) => `${l.type}${l.subtype === undefined ? '' : `/${l.subtype}`}`)).toEqual([
      'system/init',
      'thinking_delta',
      'text_delta',
      'tool_use',
      'tool_result',
      'usage',
      'assistant',
      'user',
      'system/retry',
      'system/warning',
      'text_delta',
      'usage',
      'assistant',
      'result/success',
    ]);
    expect(lines[0]).toEqual({
      type: 'system',
      subtype: 'init',
      schema_version: 3,
      model: 'claude-sonnet-5',
      cwd: '/repo',
      tools: ['read_file', 'bash'],
      spelunk_version: '0.1.0',
      instruction_files: [],
      sandbox: 'tables',
      session_id: 'sess-1',
      apiKeySource: 'ANTHROPIC_API_KEY',
      permissionMode: 'plan',
      mcp_servers: [],
      slash_commands: [],
      skills: [],
      plugins: [],
      output_style: 'default',
      uuid: expect.stringMatching(UUID),
    });
    // Every line has its own uuid, as Claude Code's lines do.
    expect(new Set(lines.map((l) => l.uuid)).size).toBe(lines.length);
    for (const line of lines) expect(line.uuid).toMatch(UUID);
    expect(lines[2]).toMatchObject({ turn: 1, text: 'Searching:\nline two \u2028 separator' });
    expect(lines[10]).toMatchObject({ turn: 2, text: 'src/server.ts:3' });
    expect(lines[5]).toMatchObject({ turn: 1, cost_usd: 0.012346, request_id: 'req_1', usage });
    expect(lines[6]).toEqual({ type: 'assistant', message: apiMessage(1, (EVENTS[7] as { message: ApiMessage }).message.content, 'tool_use'), parent_tool_use_id: null, session_id: 'sess-1', uuid: expect.stringMatching(UUID) });
    expect(lines.at(-1)).toMatchObject({ type: 'result', result: 'src/server.ts:3', num_turns: 2, total_cost_usd: 0.024691 });
  });

  it('bounds tool output in the user line, says how much is cut, never splits a surrogate pair; tool_result keeps the size', () => {
    const lines = run(EVENTS).map((c) => JSON.parse(c) as Record<string, any>);
    const result = lines.find((l) => l.type === 'tool_result');
    expect(result).toEqual({ type: 'tool_result', id: 'toolu_1', name: 'bash', is_error: false, duration_ms: 8, output_chars: BIG.length, summary: '900 matches', uuid: expect.stringMatching(UUID) });
    const user = lines.find((l) => l.type === 'user');
    expect(user?.message.role).toBe('user');
    const [block] = user?.message.content;
    expect(block.tool_use_id).toBe('toolu_1');
    const cut = BIG.length - (STREAM_CONTENT_MAX_CHARS - 1);
    expect(block.content).toBe(`${'x'.repeat(STREAM_CONTENT_MAX_CHARS - 1)}\n[spelunk: ${cut} more characters were sent to the model; not shown in the stream]`);
  });

  it('keeps short tool output whole and marks errors as the API does', () => {
    const small: AgentEvent = { type: 'tool_results', turn: 1, content: [{ type: 'tool_result', tool_use_id: 't', content: 'ok', is_error: true }] };
    const line = JSON.parse(run([small])[1] ?? '{}') as Record<string, unknown>;
    expect(line).toEqual({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'ok', is_error: true }] }, parent_tool_use_id: null, session_id: 'sess-1', uuid: expect.stringMatching(UUID) });
    expect(validateEvent(line)).toBe(true);
  });

  it.each(['ANTHROPIC_API_KEY', 'none', 'user'] as const)('init with apiKeySource %s: the schema takes only the two spelunk says', (source) => {
    const writes: string[] = [];
    const renderer = createStreamJsonRenderer({ write: (chunk: string) => writes.push(chunk) }, { ...INIT, apiKeySource: source as 'none' });
    renderer.start();
    const init = JSON.parse(writes[0]!) as Record<string, unknown>;
    expect(init.apiKeySource).toBe(source);
    expect(validateEvent(init)).toBe(source !== 'user');
  });

  it('writes init even when no event arrives, and drops anything after the result', () => {
    const writes = run([], { after: [{ type: 'warning', message: 'late' }] });
    const lines = writes.map((c) => JSON.parse(c) as Record<string, unknown>);
    expect(lines.map((l) => l.type)).toEqual(['system', 'result']);
    expect(lines[1]).toMatchObject({ subtype: 'error_during_execution', stop_reason: 'api_error' });
    for (const line of lines) expect(validateEvent(line)).toBe(true);
  });

  it('reports a null cost without pricing, and the schema rejects an unknown event', () => {
    const usageLine = run(EVENTS).map((c) => JSON.parse(c) as Record<string, unknown>).find((l) => l.type === 'usage');
    expect(usageLine?.cost_usd).toBeNull();
    expect(validateEvent({ type: 'assistant', subtype: 'text' })).toBe(false);
    expect(validateEvent({ type: 'assistant', message: { role: 'assistant' }, parent_tool_use_id: null, session_id: 's' })).toBe(false);
    expect(validateEvent({ type: 'system', subtype: 'shutdown' })).toBe(false);
  });
});

describe('--include-partial-messages: stream_event lines as Claude Code writes them', () => {
  type Line = Record<string, any>;
  // The deltas of EVENTS as the loop yields them for these messages: the first text in two chunks, and the loop's
  // paragraph break before a later request's first text (src/agent/loop.ts).
  const events = EVENTS.flatMap((e): AgentEvent[] => {
    if (e.type === 'text' && e.text.startsWith('Searching')) return [{ type: 'text', text: 'Search' }, { type: 'text', text: 'ing:' }];
    if (e.type === 'text') return [{ type: 'text', text: '\n\n' }, e];
    return [e];
  });
  const lines = (partial: boolean): Line[] => run(events, { partial }).map((c) => JSON.parse(c) as Line);

  it('none without the flag', () => {
    expect(lines(false).filter((l) => l.type === 'stream_event')).toEqual([]);
  });

  it('each request: message_start, the blocks as they streamed, tool_use blocks whole, message_delta, message_stop; then the assistant line', () => {
    const all = lines(true);
    for (const l of all) expect(validateEvent(l), JSON.stringify(validateEvent.errors)).toBe(true);
    const assistants = all.flatMap((l, i) => (l.type === 'assistant' ? [i] : []));
    expect(assistants).toHaveLength(2);
    let from = 0;
    for (const at of assistants) {
      const events = all.slice(from, at).filter((l) => l.type === 'stream_event');
      for (const e of events) expect(e).toMatchObject({ parent_tool_use_id: null, session_id: 'sess-1', uuid: expect.stringMatching(UUID) });
      const types = events.map((e) => e.event.type);
      expect(types[0]).toBe('message_start');
      expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
      const message = all[at]!.message as ApiMessage;
      // The text the deltas carry is the text of the message, block by block.
      const text = events.filter((e) => e.event.delta?.type === 'text_delta').map((e) => e.event.delta.text).join('');
      expect(text).toBe(message.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text).join(''));
      const tool = message.content.find((b) => b.type === 'tool_use') as { id: string; name: string; input: unknown } | undefined;
      const json = events.filter((e) => e.event.delta?.type === 'input_json_delta').map((e) => e.event.delta.partial_json).join('');
      expect(json === '' ? undefined : JSON.parse(json)).toEqual(tool?.input);
      if (tool) expect(events.find((e) => e.event.content_block?.type === 'tool_use')?.event.content_block).toEqual({ type: 'tool_use', id: tool.id, name: tool.name, input: {} });
      // Every block that starts stops, indexes from 0 in order.
      const starts = events.filter((e) => e.event.type === 'content_block_start').map((e) => e.event.index);
      expect(starts).toEqual(starts.map((_, i) => i));
      expect(events.filter((e) => e.event.type === 'content_block_stop').map((e) => e.event.index)).toEqual(starts);
      const { cache_creation: _split, ...counts } = message.usage;
      expect(events.at(-2)!.event).toEqual({ type: 'message_delta', delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: counts });
      from = at + 1;
    }
  });

  it('thinking streams as a thinking block, and the paragraph break spelunk adds between requests is not sent', () => {
    const all = lines(true).filter((l) => l.type === 'stream_event').map((l) => l.event);
    expect(all.find((e) => e.type === 'content_block_start')?.content_block).toEqual({ type: 'thinking', thinking: '', signature: '' });
    expect(all.find((e) => e.delta?.type === 'thinking_delta')?.delta).toEqual({ type: 'thinking_delta', thinking: 'Where is the server?' });
    const turn2 = all.slice(all.findLastIndex((e) => e.type === 'message_start'));
    expect(turn2.filter((e) => e.delta?.type === 'text_delta').map((e) => e.delta.text)).toEqual(['src/server.ts:3']);
  });
});

describe('the schemas: $ids, and a $ref to the sibling that resolves by its $id', () => {
  const files = ['result.schema.json', 'stream-event.schema.json'].map((f) => schema(f) as Record<string, unknown>);

  it('each has a $id; every $ref is local or names a sibling\'s $id', () => {
    const ids = files.map((s) => s['$id']);
    for (const id of ids) expect(id).toMatch(/^urn:spelunk:schema:[a-z-]+:3$/);
    const refs = files.flatMap((s) => [...JSON.stringify(s).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!));
    for (const ref of refs) expect(ref.startsWith('#') || ids.includes(ref), ref).toBe(true);
    expect(refs).toContain(ids[0]);
  });

  it('a validator given both schemas, with no file names or keys, resolves the reference', () => {
    const fresh = new Ajv({ strict: true });
    for (const s of files) fresh.addSchema(s);
    const validate = fresh.getSchema(String(files[1]!['$id']))!;
    const result = JSON.parse(run([]).at(-1)!) as Record<string, unknown>;
    expect(validate(result), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...result, cost_known: 'yes' })).toBe(false);
  });
});
