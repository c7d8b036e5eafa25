import { describe, expect, it } from 'vitest';
import { ANSWER_FIT, fitAnswer, fitResult, MAX_ANSWER_CHARS, MAX_RESULT_BYTES } from '../../src/mcp/fit.js';
import { MCP_TOOLS, parseCall } from '../../src/mcp/tools.js';

describe('MCP tool calls', () => {
  it.each([
    ['ask', { question: '  where?  ' }, { tool: 'ask', question: 'where?', maxTurns: null }],
    ['ask', { question: 'q', max_turns: 7 }, { tool: 'ask', question: 'q', maxTurns: 7 }],
    ['ask', { question: 'q', max_turns: 1.5 }, 'max_turns must be a whole number from 1 to 100'],
    ['ask', { question: 'q', max_turns: 101 }, 'max_turns must be a whole number from 1 to 100'],
    ['ask', { question: 42 }, 'question is required: a non-empty string such as "where is the config loaded?"'],
    ['ask', { question: 'x'.repeat(20_001) }, 'question is 20001 characters; keep it under 20000'],
    ['ask_followup', { question: 'q', session_id: ' abc ' }, { tool: 'ask_followup', question: 'q', sessionId: 'abc' }],
    ['ask_followup', { question: 'q', session_id: 3 }, 'session_id is required: pass the session_id an earlier ask returned'],
    ['audit', { question: 'q' }, { tool: 'audit', question: 'q', failOn: 'high', diff: null }],
    ['audit', { question: 'q', fail_on: 'low' }, { tool: 'audit', question: 'q', failOn: 'low', diff: null }],
    ['audit', { question: 'q', diff: ' origin/main ' }, { tool: 'audit', question: 'q', failOn: 'high', diff: 'origin/main' }],
    ['audit', { question: 'q', fail_on: 'toString' }, 'fail_on must be low, medium, high or critical'],
    ['locate', { question: ' where? ' }, { tool: 'locate', question: 'where?', k: 10 }],
    ['locate', { question: 'q', k: 50 }, { tool: 'locate', question: 'q', k: 50 }],
    ['locate', { question: 'q', k: 51 }, 'k must be a whole number from 1 to 50'],
    ['locate', { question: 'q', k: '3' }, 'k must be a whole number from 1 to 50'],
    ['locate', { k: 3 }, 'question is required: a non-empty string such as "where is the config loaded?"'],
    ['constructor', { question: 'q' }, 'unknown tool "constructor"; the tools are ask, ask_followup, audit and locate'],
    // Checked against the inputSchema the client sees: blank is missing, JSON Schema lengths count code points.
    ['ask', { question: ' \t\n ' }, 'question is required: a non-empty string such as "where is the config loaded?"'],
    ['ask', { question: 'q', max_turns: null }, 'max_turns must be a whole number from 1 to 100'],
    ['ask', { question: '😀'.repeat(20_001) }, 'question is 20001 characters; keep it under 20000'],
    ['ask_followup', { question: 'q', session_id: '   ' }, 'session_id is required: pass the session_id an earlier ask returned'],
    ['audit', { question: 'q', fail_on: 'HIGH' }, 'fail_on must be low, medium, high or critical'],
    ['locate', { question: 'q', k: 0 }, 'k must be a whole number from 1 to 50'],
    ['locate', { question: 'q', k: 2.5 }, 'k must be a whole number from 1 to 50'],
    // Every field to fix, in one line, in the order the schema lists them.
    ['ask', { max_turns: 0 }, 'question is required: a non-empty string such as "where is the config loaded?"; max_turns must be a whole number from 1 to 100'],
    ['ask_followup', {}, 'session_id is required: pass the session_id an earlier ask returned; question is required: a non-empty string such as "where is the config loaded?"'],
  ])('%s %j → %j', (name, args, expected) => {
    expect(parseCall(name, args)).toEqual(expected);
  });

  it('a question of 20,000 characters is accepted, counted in code points as the schema counts them', () => {
    expect(parseCall('ask', { question: '😀'.repeat(20_000) })).toEqual({ tool: 'ask', question: '😀'.repeat(20_000), maxTurns: null });
  });

  it.each([
    ['no arguments', undefined, /^question is required/],
    ['a string', 'where?', /^the arguments must be a JSON object$/],
    ['an array', ['where?'], /^the arguments must be a JSON object$/],
  ])('arguments that are %s are refused in one line', (_what, args, message) => {
    expect(parseCall('ask', args)).toMatch(message);
  });

  it('an inherited property is not an argument', () => {
    const args = Object.create({ question: 'from the prototype' }) as Record<string, unknown>;
    expect(parseCall('ask', args)).toMatch(/question is required/);
  });

  it('every tool is read-only and closed-world, and none takes a directory', () => {
    for (const tool of MCP_TOOLS) {
      expect(tool.annotations).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false });
      expect(Object.keys(tool.inputSchema.properties)).not.toContain('dir');
    }
  });

  it('an answer over the limit is cut, marked, and comes with a note naming the cut field', () => {
    expect(fitAnswer('short', 'answer_markdown')).toEqual({ text: 'short', truncated: false, note: null });
    expect(fitAnswer('a'.repeat(MAX_ANSWER_CHARS), 'answer_markdown').note).toBeNull();
    const long = fitAnswer('a'.repeat(MAX_ANSWER_CHARS + 10), 'answer_markdown');
    expect(long.truncated).toBe(true);
    expect(long.text.startsWith('a'.repeat(MAX_ANSWER_CHARS))).toBe(true);
    expect(long.text).toMatch(/\[truncated: the answer had 32,010 characters, more than a tool result may carry; ask_followup for the rest or ask a narrower question\]$/);
    expect(long.note).toBe('[truncated: to stay under ~25k tokens this result cuts answer_markdown to the first 32,000 of its 32,010 characters; ask_followup for the rest or ask a narrower question]');
    expect(fitAnswer('a'.repeat(MAX_ANSWER_CHARS + 1), 'result').note).toMatch(/cuts result to the first 32,000 of its 32,001 characters/);
  });

  it('a result over the limit with nothing left to cut but text has its longest texts cut, still valid', () => {
    // 32,000 multi-byte characters are ~96 KB: within MAX_ANSWER_CHARS, over the byte budget.
    const result = { answer_markdown: '€'.repeat(MAX_ANSWER_CHARS), citations: [], session_id: 's', truncated: false, stop_reason: 'end_turn', notes: [], usage: {} };
    const fitted = fitResult(result, ANSWER_FIT);
    expect(2 * Buffer.byteLength(JSON.stringify(fitted))).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(fitted).toMatchObject({ session_id: 's', truncated: true, citations: [], stop_reason: 'end_turn' });
    expect(fitted.answer_markdown).toMatch(/^€+…\[cut\]$/);
    expect(fitted.notes).toEqual(['[truncated: to stay under ~25k tokens this result cuts its longest texts (marked …[cut]); ask_followup with a narrower question (one file or one part of the answer) to get them]']);
    expect(fitResult({ ...result, answer_markdown: 'short' }, ANSWER_FIT)).toEqual({ ...result, answer_markdown: 'short' });
  });
});
