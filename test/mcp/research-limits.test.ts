import { describe, expect, it } from 'vitest';
import { estimateCostUsd } from '../../src/agent/pricing.js';
import { DEFAULT_MODEL } from '../../src/config.js';
import type { EventSink } from '../../src/run/ask.js';
import { reply, text, toolUse, type Reply } from '../support/mock-api.js';
import { APP_FILES, appFinding, useRepo } from '../support/temp-repo.js';
import { messagesOf, ok, refused, useResearcher } from './in-process.js';

// The research tool of `spelunk mcp` in this process: the conversations it keeps (an LRU that never drops a busy
// one), the budgets and limits worded for MCP (parameters, never --flags), and the audit result.
const repo = useRepo(APP_FILES, { git: true });
const start = useResearcher(repo);

/** A response whose 60k output tokens cost ~$0.60 at the default model's price. */
const costly = (...content: Parameters<typeof reply>): Reply => ({ kind: 'message', content, usage: { output_tokens: 60_000 } });

describe('the research tool in process: the conversations it keeps', () => {
  it('keeps 32; the 33rd forgets the least recently used idle one, never a busy one, and a follow-up counts as use', async () => {
    const { api, call } = await start([], { fallback: reply(text('Another answer.')) });
    api.enqueue(reply(text('First answer.')), { kind: 'hang' });
    const first = ok(await call('ask', { question: 'first' })).session_id as string;
    // Its follow-up hangs at the API: busy until it ends, and touched before all the newer ones.
    const controller = new AbortController();
    const busy = call('ask_followup', { session_id: first, question: 'hangs' }, { signal: controller.signal });
    await api.waitForRequests(2);
    const newer: string[] = [];
    for (let i = 0; i < 31; i++) newer.push(ok(await call('ask', { question: `question ${i}` })).session_id as string);
    // 32 kept: none forgotten yet. The follow-up makes newer[0] the most recently used.
    expect(ok(await call('ask_followup', { session_id: newer[0]!, question: 'still there?' })).answer_markdown).toBe('Another answer.');
    newer.push(ok(await call('ask', { question: 'the 33rd' })).session_id as string);
    // The busy one is the least recently used, but it is answering: the oldest idle one (newer[1]) went instead.
    expect(refused(await call('ask_followup', { session_id: newer[1]!, question: 'x' }))).toMatch(/^unknown session_id .*the server keeps the last 32/);
    expect(refused(await call('ask_followup', { session_id: first, question: 'again?' }))).toBe(
      'that session is still answering an earlier question; wait for it, or start a new one with ask',
    );
    for (const kept of [newer[0]!, newer[2]!, newer.at(-1)!]) {
      expect(ok(await call('ask_followup', { session_id: kept, question: 'kept?' })).session_id).toBe(kept);
    }
    controller.abort();
    expect(refused(await busy)).toBe('cancelled');
  }, 120_000);

  it('with 32 busy at once, a new ask keeps its own conversation; once they are idle the oldest go, back to 32', async () => {
    const { api, call } = await start([], { fallback: reply(text('Answered.')) });
    const ids: string[] = [];
    for (let i = 0; i < 32; i++) ids.push(ok(await call('ask', { question: `question ${i}` })).session_id as string);
    api.enqueue(...ids.map((): Reply => ({ kind: 'hang' })));
    const controller = new AbortController();
    const busy = ids.map((id) => call('ask_followup', { session_id: id, question: 'hangs' }, { signal: controller.signal }));
    await api.waitForRequests(64);
    // No conversation is idle: none can be forgotten, not even the one this ask starts.
    const extra = ok(await call('ask', { question: 'while all are busy' })).session_id as string;
    expect(ok(await call('ask_followup', { session_id: extra, question: 'kept?' })).session_id).toBe(extra);
    controller.abort();
    expect((await Promise.all(busy)).map(refused)).toEqual(ids.map(() => 'cancelled'));
    // 34 with the next one, all idle: the two least recently used go.
    ok(await call('ask', { question: 'one more' }));
    for (const gone of ids.slice(0, 2)) expect(refused(await call('ask_followup', { session_id: gone, question: 'x' }))).toMatch(/^unknown session_id/);
    for (const kept of [ids[2]!, extra]) expect(ok(await call('ask_followup', { session_id: kept, question: 'x' })).session_id).toBe(kept);
  }, 120_000);
});

describe('the research tool in process: budgets and limits, worded for MCP', () => {
  it('--max-budget-usd-total: once spent, every paid call is refused without a request; locate is free', async () => {
    const { api, call } = await start(['--max-budget-usd-total', '0.5']);
    api.enqueue(costly(text('First.')));
    expect(ok(await call('ask', { question: 'q' })).answer_markdown).toBe('First.');
    const requests = api.requests.length;
    const spent = /^the server's budget is spent \(~\$0\.6\d+ of --max-budget-usd-total 0\.5\); restart spelunk mcp with a larger one$/;
    expect(refused(await call('ask', { question: 'again' }))).toMatch(spent);
    expect(refused(await call('audit', { question: 'again' }))).toMatch(spent);
    expect(api.requests).toHaveLength(requests);
    expect(ok(await call('locate', { question: 'createServer' }), 'locate').results.length).toBeGreaterThan(0);
  });

  it('a total spent to the cent is spent: the next call is refused', async () => {
    const usage = { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 60_000 };
    const cache_creation = { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 };
    const total = estimateCostUsd(DEFAULT_MODEL, { ...usage, cache_creation })!;
    const { api, call } = await start(['--max-budget-usd-total', String(total)]);
    api.enqueue({ kind: 'message', content: [text('First.')], usage: { ...usage, cache_creation } });
    expect(ok(await call('ask', { question: 'q' })).usage.cost_usd).toBe(total);
    expect(refused(await call('ask', { question: 'again' }))).toMatch(/^the server's budget is spent/);
  });

  it('per call and total: a call stops at its budget, the next gets what the total has left, then none starts', async () => {
    const { api, call } = await start(['--max-budget-usd-per-call', '0.5', '--max-budget-usd-total', '1']);
    api.enqueue(costly(text('Looking at the router.'), toolUse('bash', { command: 'ls src' })));
    const first = ok(await call('ask', { question: 'Where is routing?' }));
    expect(first).toMatchObject({ answer_markdown: 'Looking at the router.', stop_reason: 'max_budget', truncated: false, usage: { requests: 1 } });
    expect(first.notes).toEqual([expect.stringMatching(/^stopped before the next request: ~\$0\.6\d of the call's budget \(\$0\.5\) is spent, and the next needs ~\$0\.\d+ \(.*\)$/)]);
    // $1 - ~$0.60 is left: less than the per-call $0.5, so that is the second call's budget.
    api.enqueue(costly(toolUse('bash', { command: 'ls src' })));
    expect(refused(await call('ask', { question: 'And auth?' }))).toMatch(/^stopped before the next request: .* of the call's budget \(\$0\.3\d+\) is spent, /);
    const requests = api.requests.length;
    expect(refused(await call('ask', { question: 'again' }))).toMatch(/^the server's budget is spent \(~\$1\.2\d+ of --max-budget-usd-total 1\)/);
    expect(api.requests).toHaveLength(requests);
  });

  it('a total alone is the budget of each call: what is left of it', async () => {
    const { api, call } = await start(['--max-budget-usd-total', '1']);
    api.enqueue(costly(text('First.')), costly(toolUse('bash', { command: 'ls src' })));
    ok(await call('ask', { question: 'q' }));
    expect(refused(await call('ask', { question: 'and?' }))).toMatch(/of the call's budget \(\$0\.3\d+\) is spent, /);
  });

  it.each([
    [['--max-budget-usd-per-call', '0.01']],
    [['--max-budget-usd', '0.01']],
    [['--max-budget-usd-per-call', '0.01', '--max-budget-usd', '5']],
  ])('a call budget (%j) that cannot pay for the first request is refused before any request, in MCP words', async (argv) => {
    const { api, call } = await start(argv);
    const message = refused(await call('ask', { question: 'q' }));
    expect(message).toMatch(/^the call's budget \(\$0\.01\) cannot pay for a first request at this context size \(.*\); the server's per-call budget must be at least \$0\.\d\d$/);
    expect(messagesOf(api)).toHaveLength(0);
  });

  it.each(['ask', 'audit'])('a cancelled %s still counts toward the total: its request was billed', async (tool) => {
    const { api, call } = await start(['--max-budget-usd-total', '0.5']);
    api.enqueue(costly(toolUse('read_file', { path: 'src/server.js' })));
    // Cancelled as soon as the first response's usage arrives, before the call could return.
    const controller = new AbortController();
    const progress: EventSink = { handle: (e) => void (e.type === 'usage' && controller.abort()) };
    expect(refused(await call(tool, { question: 'q' }, { signal: controller.signal, progress }))).toBe('cancelled');
    expect(refused(await call('ask', { question: 'again' }))).toMatch(/^the server's budget is spent \(~\$0\.6\d+ of --max-budget-usd-total 0\.5\)/);
    expect(messagesOf(api)).toHaveLength(1);
  });

  it.each([
    ['--timeout', ['--timeout', '1'], { kind: 'hang' } as Reply, /^stopped: the call reached the server's time limit \(1 seconds\) before an answer; ask a narrower question$/],
    ['--max-tokens', ['--max-tokens', '64'], { kind: 'message', content: [text('Cut')], stop_reason: 'max_tokens' } as Reply, /^the answer was cut at the server's limit of 64 output tokens; ask for less$/],
  ])('%s: the stop is worded for the client, with no flag in it', async (_flag, argv, script, words) => {
    const { api, call } = await start(argv);
    api.enqueue(script);
    const outcome = await call('ask', { question: 'q' });
    const said = outcome.ok ? (outcome.structured.notes as string[]).join('\n') : outcome.message;
    expect(said).toMatch(words);
    expect(said).not.toContain('--');
  });
});

describe('the research tool in process: audit', () => {
  it('returns the audit result object with fail_on and the exit code it implies, and logs the verdict', async () => {
    const { api, call, stderr } = await start();
    const filed = (): Reply[] => [reply(toolUse('report_findings', { verdict: 'fail', summary: 'login shells out', findings: [appFinding({ severity: 'medium' })] })), reply(text('Reported.'))];
    api.enqueue(...filed());
    const high = ok(await call('audit', { question: 'Does login shell out?' }), 'audit');
    expect(high).toMatchObject({ type: 'result', result: 'Reported.', fail_on: 'high', exit_code: 0, truncated: false, readonly_verified: true });
    expect(high.audit).toMatchObject({ verdict: 'fail', summary: 'login shells out', findings: [expect.objectContaining({ path: 'src/auth.js', start_line: 4 })] });
    api.enqueue(...filed());
    expect(ok(await call('audit', { question: 'Does login shell out?', fail_on: 'medium' }), 'audit')).toMatchObject({ fail_on: 'medium', exit_code: 4 });
    expect(stderr()).toMatch(/^spelunk mcp: audit Does login shell out\? → fail, ~\$0\.\d+\nspelunk mcp: audit Does login shell out\? → fail, ~\$0\.\d+\n$/);
    // The audit's own system prompt went out, not the ask's.
    expect(JSON.stringify(messagesOf(api)[0]!.body.tools)).toContain('report_findings');
  });

  it('an audit that hits max_turns before filing: its error names max_turns, exit code 3, verdict inconclusive', async () => {
    const { api, call, stderr } = await start(['--max-turns', '1']);
    api.enqueue(reply(toolUse('read_file', { path: 'src/auth.js' })));
    const audit = ok(await call('audit', { question: 'does login shell out?' }), 'audit');
    expect(audit).toMatchObject({ stop_reason: 'max_turns', subtype: 'error_max_turns', exit_code: 3, audit: { verdict: 'inconclusive' } });
    expect(audit.error.message).toBe('stopped after 1 model request (max_turns 1) before a final answer; raise max_turns or ask a narrower question');
    expect(JSON.stringify(audit)).not.toContain('--max');
    expect(stderr()).toMatch(/^spelunk mcp: audit does login shell out\? → inconclusive, ~\$0\.\d+\n$/);
  });

  it('an audit result text over the limit is cut, marked truncated, with the note among the warnings', async () => {
    const { api, call } = await start();
    const long = `Nothing found. ${'More detail. '.repeat(3_000)}`;
    api.enqueue(reply(toolUse('report_findings', { verdict: 'pass', summary: 'fine', findings: [] })), reply(text(long)));
    const audit = ok(await call('audit', { question: 'q' }), 'audit');
    expect(audit.truncated).toBe(true);
    expect(audit.result).toMatch(/^Nothing found\. .*\[truncated: the answer had [\d,]+ characters/s);
    expect(audit.warnings.at(-1)).toMatch(/^\[truncated: to stay under ~25k tokens this result cuts result to the first 32,000 of its [\d,]+ characters/);
  });

  it('a cancelled audit says "cancelled"; its progress sink saw the request', async () => {
    const { api, call } = await start();
    api.enqueue({ kind: 'hang' });
    const controller = new AbortController();
    const seen: string[] = [];
    void api.waitForRequests(1).then(() => controller.abort());
    expect(refused(await call('audit', { question: 'q' }, { signal: controller.signal, progress: { handle: (e) => void seen.push(e.type) } }))).toBe('cancelled');
    expect(seen).toContain('request_start');
    await expect.poll(() => messagesOf(api)[0]?.clientLeft, { timeout: 5000 }).toBe(true);
  });
});

describe('the research tool in process: an answer over the size limit', () => {
  it('is cut and marked, and its citations are those of the text served (not of the cut part)', async () => {
    const { api, call } = await start();
    const long = `The server is at src/server.js:4. ${'Filler. '.repeat(4_500)} The router is at src/router.js:3.`;
    api.enqueue(reply(text(long)));
    const answer = ok(await call('ask', { question: 'q' }));
    expect(answer.truncated).toBe(true);
    expect(answer.answer_markdown).toMatch(/\[truncated: the answer had [\d,]+ characters/);
    expect(answer.citations).toEqual([{ path: 'src/server.js', start_line: 4, end_line: 4, status: 'ok', excerpt: 'function createServer() {' }]);
    expect(answer.notes).toEqual([expect.stringMatching(/^\[truncated: to stay under ~25k tokens this result cuts answer_markdown to the first 32,000/)]);
  });
});
