import { describe, expect, it } from 'vitest';
import type { StopFacts, StopKind } from '../src/agent/events.js';
import { STOPS, stopMessage, type FrontEnd } from '../src/exit-codes.js';

/**
 * Every way a question can end, as the loop reports it (data only), and the line each front end prints for it: the
 * CLI names its flags (and the REPL's /clear), MCP names its tool parameters and the server's own limits.
 */
const base = { text: '', turns: 3 };
const ROWS: ReadonlyArray<[what: string, facts: StopFacts, cli: string, mcp: string]> = [
  ['end_turn', { ...base, stop: 'end_turn' }, '', ''],
  ['aborted', { ...base, stop: 'aborted' }, 'cancelled', 'cancelled'],
  [
    'api_error',
    { ...base, stop: 'api_error', error: 'API 529 overloaded_error: Overloaded (request req_1)' },
    'API 529 overloaded_error: Overloaded (request req_1)',
    'API 529 overloaded_error: Overloaded (request req_1)',
  ],
  [
    'refusal',
    { ...base, stop: 'refusal' },
    'the model declined to answer this question; rephrase it (the question was dropped from the conversation)',
    'the model declined to answer this question; rephrase it (the question was dropped from the conversation)',
  ],
  [
    'context_exceeded (stop reason)',
    { ...base, stop: 'context_exceeded' },
    "the conversation filled the model's context window; start a new one (/clear in the REPL) or ask a narrower question",
    "the conversation filled the model's context window; start a new one with ask, or ask a narrower question",
  ],
  [
    'context_exceeded (API error)',
    { ...base, stop: 'context_exceeded', error: "the question does not fit m's context window (API 400: prompt is too long)" },
    "the question does not fit m's context window (API 400: prompt is too long)",
    "the question does not fit m's context window (API 400: prompt is too long)",
  ],
  [
    'max_tokens',
    { ...base, stop: 'max_tokens', limit: 'maxTokens', value: 16000 },
    'the answer was cut at --max-tokens 16000 output tokens; raise --max-tokens or ask for less',
    "the answer was cut at the server's limit of 16000 output tokens; ask for less",
  ],
  [
    'timeout',
    { ...base, stop: 'timeout', limit: 'timeoutMs', value: 30_000 },
    'stopped: the run reached --timeout 30 (seconds for the whole run) before an answer; raise it, e.g. --timeout 60',
    "stopped: the call reached the server's time limit (30 seconds) before an answer; ask a narrower question",
  ],
  ['timeout (no length)', { ...base, stop: 'timeout' }, 'stopped: the run reached --timeout before an answer; raise it', "stopped: the call reached the server's time limit before an answer; ask a narrower question"],
  [
    'max_turns',
    { ...base, stop: 'max_turns', limit: 'maxTurns', value: 25, requests: 25 },
    'stopped after 25 model requests (--max-turns 25) before a final answer; raise --max-turns or ask a narrower question',
    'stopped after 25 model requests (max_turns 25) before a final answer; raise max_turns or ask a narrower question',
  ],
  [
    'max_turns (answered in the last request)',
    { ...base, stop: 'max_turns', limit: 'maxTurns', value: 3, answered: true },
    'answered with what it had in the last request --max-turns 3 allowed, so the answer may be incomplete; raise --max-turns for a fuller one',
    'answered with what it had in the last request max_turns 3 allowed, so the answer may be incomplete; raise max_turns for a fuller one',
  ],
  [
    'max_budget (answered in the last request)',
    { ...base, stop: 'max_budget', limit: 'maxBudgetUsd', value: 0.5, answered: true },
    'answered with what it had in the last request --max-budget-usd 0.5 allowed, so the answer may be incomplete; raise the budget for a fuller one',
    "answered with what it had in the last request the call's budget ($0.5) allowed, so the answer may be incomplete; raise the budget for a fuller one",
  ],
  [
    'max_budget (next request)',
    { ...base, stop: 'max_budget', limit: 'maxBudgetUsd', value: 0.5, budget: { kind: 'next', spentUsd: 0.4812, promptTokens: 95_000, promptUsd: 0.0243, outputTokens: 1024, outputUsd: 0.0102 } },
    'stopped before the next request: ~$0.48 of --max-budget-usd 0.5 is spent, and the next needs ~$0.03 (95,000 prompt tokens ~$0.02 + 1,024 output tokens ~$0.01)',
    "stopped before the next request: ~$0.48 of the call's budget ($0.5) is spent, and the next needs ~$0.03 (95,000 prompt tokens ~$0.02 + 1,024 output tokens ~$0.01)",
  ],
  [
    'max_budget (first request): the hint is above the budget given, rounded up to the cent',
    { ...base, stop: 'max_budget', limit: 'maxBudgetUsd', value: 0.02, budget: { kind: 'first', promptTokens: 12_345, promptUsd: 0.0154, outputTokens: 1024, outputUsd: 0.0051, raiseToUsd: 0.03 } },
    '--max-budget-usd 0.02 cannot pay for a first request at this context size (12,345 prompt tokens ~$0.02 + 1,024 output tokens ~$0.0051); raise it to at least 0.03',
    "the call's budget ($0.02) cannot pay for a first request at this context size (12,345 prompt tokens ~$0.02 + 1,024 output tokens ~$0.0051); the server's per-call budget must be at least $0.03",
  ],
  [
    'max_budget (no price)',
    { ...base, stop: 'max_budget', limit: 'maxBudgetUsd', value: 1, budget: { kind: 'no_price', model: 'claude-x' } },
    'no price is known for claude-x, so --max-budget-usd cannot be enforced',
    "no price is known for claude-x, so the call's budget cannot be enforced",
  ],
];

const FRONTS: readonly FrontEnd[] = ['cli', 'mcp'];

describe('stopMessage: each stop × each front end', () => {
  it.each(ROWS.flatMap(([what, facts, cli, mcp]) => FRONTS.map((front) => [what, front, facts, front === 'cli' ? cli : mcp] as const)))(
    '%s, %s',
    (_what, front, facts, expected) => {
      expect(stopMessage(facts, front) ?? '').toBe(expected);
    },
  );

  it.each(ROWS.map(([what, facts]) => [what, facts] as const))('%s: the MCP wording names no flag (no "--") and no REPL command', (_what, facts) => {
    const words = stopMessage(facts, 'mcp') ?? '';
    expect(words).not.toContain('--');
    expect(words).not.toMatch(/\/clear|REPL/);
  });

  it('covers every stop kind the loop can report', () => {
    const covered = new Set(ROWS.map(([, facts]) => facts.stop));
    expect([...covered].sort()).toEqual((Object.keys(STOPS) as StopKind[]).sort());
  });
});
