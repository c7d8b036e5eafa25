import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import type { AgentEvent, StopKind, Usage } from '../../src/agent/events.js';
import type { AuditReport } from '../../src/audit/report.js';
import { buildResult, exitCodeFor, ResultCollector, SCHEMA_VERSION, withError, type BuildResultInput } from '../../src/output/result.js';

const ajv = new Ajv({ allErrors: true, strict: true });
const validate = ajv.compile(JSON.parse(readFileSync(new URL('../../schema/result.schema.json', import.meta.url), 'utf8')));

function expectValid(obj: unknown): void {
  const ok = validate(obj);
  expect(validate.errors ?? [], JSON.stringify(obj)).toEqual([]);
  expect(ok).toBe(true);
}

const usage = (input: number, write: number, read: number, output: number): Usage => ({
  input_tokens: input,
  cache_creation_input_tokens: write,
  cache_read_input_tokens: read,
  output_tokens: output,
});

const SCRIPT: AgentEvent[] = [
  { type: 'request_start', turn: 1 },
  { type: 'first_token', turn: 1 },
  { type: 'text', text: 'Let me look.' },
  { type: 'tool_start', id: 'toolu_1', name: 'bash', input: { command: 'rg -n listen' }, display: 'rg -n listen' },
  {
    type: 'tool_end',
    id: 'toolu_1',
    name: 'bash',
    input: { command: 'rg -n listen' },
    outcome: { content: 'src/server.ts:3:app.listen(8080)', summary: '1 match', isError: false },
    durationMs: 12.4,
  },
  { type: 'usage', turn: 1, model: 'claude-sonnet-5', usage: usage(1000, 2000, 0, 50), durationMs: 800, requestId: 'req_1' },
  { type: 'retry', message: 'retry 1/4 in 1.0 s (429 rate_limit_error)' },
  { type: 'request_start', turn: 2 },
  { type: 'text', text: 'It listens in ' },
  { type: 'text', text: 'src/server.ts:3.' },
  { type: 'usage', turn: 2, model: 'claude-sonnet-5', usage: usage(40, 0, 3000, 20), durationMs: 300, requestId: 'req_2' },
  { type: 'warning', message: 'AGENTS.md truncated' },
  { type: 'done', stop: 'end_turn', text: 'It listens in src/server.ts:3.', turns: 2 },
];

const FINISH = {
  stop: 'api_error' as StopKind,
  sandbox: 'tables' as const,
  model: 'claude-sonnet-5',
  durationMs: 1500.6,
  sessionId: 'sess-1',
  root: '/repo',
  gitCommit: 'a'.repeat(40),
  readonly: { verified: true, detail: null },
};

/** $1 per million tokens of every kind, so sums are easy to check. */
const flatPrice = (_model: string, u: Usage): number =>
  (u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens + u.output_tokens) / 1e6;

function collect(events: AgentEvent[], costOf?: (model: string, u: Usage) => number | null): ResultCollector {
  const collector = new ResultCollector(costOf === undefined ? {} : { costOf });
  for (const event of events) collector.handle(event);
  return collector;
}

describe('ResultCollector', () => {
  it('folds a scripted run into a result object that validates against the schema', () => {
    const result = collect(SCRIPT, flatPrice).toResult(FINISH);
    expectValid(result);
    expect(result).toMatchObject({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'It listens in src/server.ts:3.',
      num_turns: 2,
      duration_ms: 1501,
      duration_api_ms: 1100,
      session_id: 'sess-1',
      total_cost_usd: 0.00611,
      usage: { input_tokens: 1040, cache_creation_input_tokens: 2000, cache_read_input_tokens: 3000, output_tokens: 70 },
      model: 'claude-sonnet-5',
      schema_version: SCHEMA_VERSION,
      tool_calls: [{ name: 'bash', input: { command: 'rg -n listen' }, is_error: false, duration_ms: 12, output_chars: 32 }],
      warnings: ['retry 1/4 in 1.0 s (429 rate_limit_error)', 'AGENTS.md truncated'],
      repo: { root: '/repo', git_commit: 'a'.repeat(40) },
      readonly_verified: true,
      stop_reason: 'end_turn',
    });
    expect(result.error).toBeUndefined();
    expect(result.audit).toBeUndefined();
    expect(exitCodeFor(result)).toBe(0);
  });

  it('reports an unknown cost as 0 with cost_known false (a number for typed readers, no invented cost)', () => {
    const partlyPriced = (model: string, u: Usage): number | null => (u.cache_read_input_tokens > 0 ? null : flatPrice(model, u));
    expect(collect(SCRIPT, partlyPriced).toResult(FINISH)).toMatchObject({ total_cost_usd: 0, cost_known: false });
    expect(collect(SCRIPT).toResult(FINISH)).toMatchObject({ total_cost_usd: 0, cost_known: false });
    expect(collect(SCRIPT, flatPrice).toResult(FINISH)).toMatchObject({ total_cost_usd: 0.00611, cost_known: true });
    expect(collect([], flatPrice).toResult({ ...FINISH, stop: 'api_error' })).toMatchObject({ total_cost_usd: 0, cost_known: true });
  });

  it('uses the fallback stop and the current turn text when the loop never reported done', () => {
    const interrupted = SCRIPT.filter((e) => e.type !== 'done');
    const result = collect(interrupted).toResult({ ...FINISH, stop: 'aborted', readonly: { verified: null, detail: null } });
    expectValid(result);
    expect(result).toMatchObject({ subtype: 'interrupted', is_error: true, result: 'It listens in src/server.ts:3.' });
    expect(result.readonly_verified).toBeNull();
    expect(exitCodeFor(result)).toBe(130);
  });

  it('records each cache miss, its cost rounded or null when unpriced', () => {
    const miss = (turn: number, costUsd: number | null): AgentEvent => ({
      type: 'cache_miss',
      turn,
      miss: { changed: 'AGENTS.md changed (+214 bytes)', tokens: 2000, costUsd, apiReason: turn === 2 ? 'system_changed' : null },
    });
    const result = collect([...SCRIPT.slice(0, -1), miss(2, 0.1 + 0.2), miss(3, null), SCRIPT.at(-1)!]).toResult(FINISH);
    expectValid(result);
    expect(result.cache_misses).toEqual([
      { turn: 2, changed: 'AGENTS.md changed (+214 bytes)', tokens: 2000, cost_usd: 0.3, api_reason: 'system_changed' },
      { turn: 3, changed: 'AGENTS.md changed (+214 bytes)', tokens: 2000, cost_usd: null, api_reason: null },
    ]);
    expect(result.warnings).toEqual(['retry 1/4 in 1.0 s (429 rate_limit_error)', 'AGENTS.md truncated']);
  });

  it.each<[string, AgentEvent[], number]>([
    ['requests started, none answered', [{ type: 'request_start', turn: 1 }, { type: 'request_start', turn: 2 }], 2],
    ['usage without a request_start', [{ type: 'usage', turn: 2, model: 'm', usage: usage(1, 0, 0, 1), durationMs: 1, requestId: 'r' }], 2],
    ['a done that counts more requests than were seen', [{ type: 'done', stop: 'end_turn', text: 'a', turns: 3 }], 3],
    [
      'a follow-up question counting on from the first',
      [
        { type: 'request_start', turn: 1 },
        { type: 'done', stop: 'end_turn', text: 'a', turns: 2 },
        { type: 'request_start', turn: 1 },
        { type: 'done', stop: 'end_turn', text: 'b', turns: 1 },
      ],
      3,
    ],
  ])('counts turns: %s → %i', (_name, events, turns) => {
    expect(collect(events).toResult(FINISH).num_turns).toBe(turns);
  });

  it('answers the empty text when nothing was said', () => {
    expect(collect([]).toResult(FINISH).result).toBe('');
  });

  it("keeps the loop's own message for a stop", () => {
    const result = collect([{ type: 'done', stop: 'api_error', text: '', error: '529 overloaded after 2 retries', turns: 1 }]).toResult(FINISH);
    expect(result.error?.message).toBe('529 overloaded after 2 retries');
  });

  it('shows the cost so far live, null when unknown', () => {
    expect(collect(SCRIPT, flatPrice).costUsd).toBeCloseTo(0.00611, 10);
    expect(collect([], flatPrice).costUsd).toBe(0);
    expect(new ResultCollector().costUsd).toBeNull();
    // Once a request has no price, later priced ones do not make the total known again.
    const unpricedFirst = (model: string, u: Usage): number | null => (u.cache_read_input_tokens > 0 ? flatPrice(model, u) : null);
    expect(collect(SCRIPT, unpricedFirst).costUsd).toBeNull();
  });

  it("totals usage per model in Claude Code's modelUsage shape; the TTL split only where the API gave one", () => {
    const haiku: AgentEvent = {
      type: 'usage',
      turn: 3,
      model: 'claude-haiku-4-5',
      usage: { ...usage(5, 100, 0, 7), cache_creation: { ephemeral_5m_input_tokens: 60, ephemeral_1h_input_tokens: 40 } },
      durationMs: 10,
      requestId: 'req_3',
    };
    const result = collect([...SCRIPT.slice(0, -1), haiku, SCRIPT.at(-1)!], flatPrice).toResult(FINISH);
    expectValid(result);
    expect(result.modelUsage).toEqual({
      'claude-sonnet-5': { inputTokens: 1040, outputTokens: 70, cacheReadInputTokens: 3000, cacheCreationInputTokens: 2000, webSearchRequests: 0, costUSD: 0.00611, costKnown: true },
      'claude-haiku-4-5': {
        inputTokens: 5,
        outputTokens: 7,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 100,
        cacheCreationEphemeral5mInputTokens: 60,
        cacheCreationEphemeral1hInputTokens: 40,
        webSearchRequests: 0,
        costUSD: 0.000112,
        costKnown: true,
      },
    });
    expect(result.permission_denials).toEqual([]);
    expect(collect(SCRIPT).toResult(FINISH).modelUsage['claude-sonnet-5']).toMatchObject({ costUSD: 0, costKnown: false });
    expect(collect([]).toResult(FINISH).modelUsage).toEqual({});
  });

  it('gives every result its own uuid', () => {
    const a = collect(SCRIPT).toResult(FINISH);
    const b = collect(SCRIPT).toResult(FINISH);
    expect(a.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.uuid).not.toBe(b.uuid);
  });

  it('appends warnings from outside the loop after its own', () => {
    const result = collect(SCRIPT).toResult({ ...FINISH, warnings: ['report_findings dropped x'] });
    expect(result.warnings.at(-1)).toBe('report_findings dropped x');
  });
});

function base(over: Partial<BuildResultInput> = {}): BuildResultInput {
  return {
    stop: 'end_turn',
    sandbox: 'tables',
    answer: 'done',
    turns: 1,
    durationMs: 10,
    durationApiMs: 5,
    sessionId: 's',
    costUsd: 0.1 + 0.2,
    usage: usage(1, 0, 0, 1),
    model: 'claude-sonnet-5',
    toolCalls: [],
    warnings: [],
    root: '/repo',
    gitCommit: null,
    readonly: { verified: true, detail: null },
    ...over,
  };
}

describe('buildResult and exitCodeFor', () => {
  it.each<[StopKind, string, number]>([
    ['end_turn', 'success', 0],
    ['max_turns', 'error_max_turns', 3],
    ['max_budget', 'error_max_budget_usd', 3],
    ['timeout', 'error_during_execution', 3],
    ['max_tokens', 'error_during_execution', 3],
    ['context_exceeded', 'error_during_execution', 3],
    ['refusal', 'error_during_execution', 1],
    ['api_error', 'error_during_execution', 1],
    ['aborted', 'interrupted', 130],
  ])('stop %s → subtype %s, exit %i', (stop, subtype, exit) => {
    const result = buildResult(base({ stop, stopMessage: stop === 'api_error' ? '529 overloaded after 2 retries' : null }));
    expectValid(result);
    expect(result.subtype).toBe(subtype);
    expect(result.stop_reason).toBe(stop);
    expect(result.is_error).toBe(subtype !== 'success');
    expect(result.error === undefined).toBe(subtype === 'success');
    expect(result.errors === undefined).toBe(subtype === 'success');
    expect(exitCodeFor(result)).toBe(exit);
    if (stop === 'api_error') expect(result.errors).toEqual(['529 overloaded after 2 retries']);
  });

  it('rounds the cost to micro-dollars', () => {
    expect(buildResult(base()).total_cost_usd).toBe(0.3);
  });

  it('a failed read-only check turns success into error_during_execution with exit 1, and wins over other codes', () => {
    const changed = { verified: false, detail: 'modified: src/a.ts' };
    const result = buildResult(base({ readonly: changed }));
    expectValid(result);
    expect(result).toMatchObject({ subtype: 'error_during_execution', is_error: true, readonly_verified: false });
    expect(result.error?.message).toContain('modified: src/a.ts');
    expect(exitCodeFor(result)).toBe(1);
    const limited = buildResult(base({ stop: 'max_turns', readonly: changed }));
    expect(limited.subtype).toBe('error_max_turns');
    expect(exitCodeFor(limited)).toBe(1);
  });

  it('joins several errors, and names an unknown repository change', () => {
    const result = buildResult(base({ error: 'could not write report.sarif: EACCES', readonly: { verified: false, detail: null } }));
    expect(result.error?.message).toBe('could not write report.sarif: EACCES; the repository changed during the run: unknown difference');
    expect(result.errors).toEqual(['could not write report.sarif: EACCES', 'the repository changed during the run: unknown difference']);
  });

  it('has no cache misses or citations unless given', () => {
    const result = buildResult(base({ citations: null }));
    expect(result.cache_misses).toEqual([]);
    expect(result).not.toHaveProperty('citations');
  });

  it('an error from outside the loop is reported and exits 1', () => {
    const result = buildResult(base({ error: 'could not write report.sarif: EACCES' }));
    expectValid(result);
    expect(result.subtype).toBe('error_during_execution');
    expect(exitCodeFor(result)).toBe(1);
  });

  const failing: AuditReport = {
    verdict: 'fail',
    summary: 'user input reaches exec',
    findings: [
      { rule_id: 'shell-injection', severity: 'high', title: 't', message: 'm', path: 'src/a.ts', start_line: 3, end_line: 4 },
    ],
  };

  // No --fail-on given: the threshold is high, so a high finding fails the run and a medium one does not.
  it.each([
    ['high', 4],
    ['medium', 0],
  ] as const)('audit without a threshold: a %s finding → exit %i', (severity, exit) => {
    const report: AuditReport = { ...failing, findings: failing.findings.map((f) => ({ ...f, severity })) };
    expect(exitCodeFor(buildResult(base({ audit: { report } })))).toBe(exit);
  });

  it.each<[string, number, AuditReport | null, StopKind, 'low' | 'high' | 'critical']>([
    ['fail at threshold', 4, failing, 'end_turn', 'high'],
    ['fail below threshold', 0, failing, 'end_turn', 'critical'],
    ['pass', 0, { verdict: 'pass', summary: 'ok', findings: [] }, 'end_turn', 'low'],
    ['inconclusive', 5, { verdict: 'inconclusive', summary: '?', findings: [] }, 'end_turn', 'high'],
    ['never reported', 5, null, 'end_turn', 'high'],
    ['never reported, limit hit', 3, null, 'max_turns', 'high'],
    ['reported, then limit hit', 3, failing, 'max_budget', 'high'],
  ])('audit: %s → exit %i', (_name, exit, report, stop, failOn) => {
    const result = buildResult(base({ stop, audit: { report } }));
    expectValid(result);
    expect(exitCodeFor(result, failOn)).toBe(exit);
    if (report === null) {
      expect(result.audit).toMatchObject({ verdict: 'inconclusive', findings: [] });
      const reason =
        stop === 'end_turn'
          ? 'the model ended without calling report_findings'
          : `the run ended (${stop}) before the model called report_findings`;
      expect(result.audit?.summary).toBe(reason);
      expect(result.warnings).toEqual([`audit inconclusive: ${reason}`]);
    }
  });
});

describe('withError', () => {
  it.each<[StopKind, string]>([
    ['end_turn', 'error_during_execution'],
    ['max_turns', 'error_max_turns'],
  ])('after a %s stop: subtype %s, the error appended to errors and joined in error.message', (stop, subtype) => {
    const result = withError(buildResult(base({ stop })), 'could not write --sarif x: EACCES');
    expectValid(result);
    expect(result).toMatchObject({ subtype, is_error: true });
    const before = stop === 'end_turn' ? [] : ['stopped at --max-turns before an answer'];
    expect(result.errors).toEqual([...before, 'could not write --sarif x: EACCES']);
    expect(result.error?.message).toBe(result.errors?.join('; '));
    expect(exitCodeFor(result)).toBe(stop === 'end_turn' ? 1 : 3);
  });
});

describe('result schema', () => {
  it('carries other programs\' changes and how the proof was made, which validate; a run with them exits 0', () => {
    const concurrent = { paths: ['src/a.py'], more: 0, ignored: [{ path: 'src/__pycache__/', entries: 3 }] };
    const how = 'every program spelunk ran saw the repository mounted read-only (kernel sandbox)';
    const result = buildResult({ ...base(), readonly: { verified: true, detail: null, how, concurrent } });
    expectValid(result);
    expect(result).toMatchObject({ readonly_verified: true, readonly_proof: how, concurrent_changes: concurrent, subtype: 'success' });
    expect(exitCodeFor(result)).toBe(0);
    expect(buildResult(base())).not.toHaveProperty('concurrent_changes');
  });

  it.each<[string, (r: Record<string, unknown>) => void]>([
    ['a missing field', (r) => delete r.tool_calls],
    ['an unknown subtype', (r) => (r.subtype = 'error_timeout')],
    ['a non-integer token count', (r) => ((r.usage as Record<string, unknown>).output_tokens = 1.5)],
    ['is_error without error', (r) => ((r.is_error = true), delete r.error)],
    ['is_error without errors', (r) => ((r.is_error = true), (r.error = { message: 'x' }))],
    ['the old budget subtype', (r) => (r.subtype = 'error_max_budget')],
    ['a permission denial', (r) => (r.permission_denials = [{ tool_name: 'bash', tool_use_id: 't', tool_input: {} }])],
    ['no uuid', (r) => delete r.uuid],
    ['no modelUsage', (r) => delete r.modelUsage],
    ['a bad audit severity', (r) => (r.audit = { verdict: 'fail', summary: '', findings: [{ ...failingFinding, severity: 'severe' }] })],
    ['concurrent_changes without its counts', (r) => (r.concurrent_changes = { paths: ['a.txt'] })],
    ['an ignored group of no entries', (r) => (r.concurrent_changes = { paths: [], more: 0, ignored: [{ path: 'target/', entries: 0 }] })],
    ['a readonly_proof that is not a sentence', (r) => (r.readonly_proof = true)],
  ])('rejects %s', (_name, mutate) => {
    const result = JSON.parse(JSON.stringify(buildResult(base()))) as Record<string, unknown>;
    mutate(result);
    expect(validate(result)).toBe(false);
  });
});

const failingFinding = { rule_id: 'r', severity: 'high', title: 't', message: 'm', path: 'a', start_line: 1, end_line: 1 };
