import { describe, expect, it } from 'vitest';
import { fitAnswer, MAX_ANSWER_CHARS } from '../../src/mcp/research.js';
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
    ['audit', { question: 'q' }, { tool: 'audit', question: 'q', failOn: 'high' }],
    ['audit', { question: 'q', fail_on: 'low' }, { tool: 'audit', question: 'q', failOn: 'low' }],
    ['audit', { question: 'q', fail_on: 'toString' }, 'fail_on must be low, medium, high or critical'],
    ['constructor', { question: 'q' }, 'unknown tool "constructor"; the tools are ask, ask_followup and audit'],
  ])('%s %j → %j', (name, args, expected) => {
    expect(parseCall(name, args)).toEqual(expected);
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

  it('an answer over the limit is cut with a note that says how to get the rest', () => {
    expect(fitAnswer('short')).toEqual({ text: 'short', truncated: false });
    const long = fitAnswer('a'.repeat(MAX_ANSWER_CHARS + 10));
    expect(long.truncated).toBe(true);
    expect(long.text.startsWith('a'.repeat(MAX_ANSWER_CHARS))).toBe(true);
    expect(long.text).toMatch(/\[truncated: the answer had 32,010 characters, more than a tool result may carry; ask_followup for the rest or ask a narrower question\]$/);
  });
});
