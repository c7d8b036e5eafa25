import { afterEach, describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/args.js';
import { resolveConfig, type Config } from '../../src/config.js';
import { estimateCostUsd } from '../../src/agent/pricing.js';
import { runQuestion, type RunRequest } from '../../src/run/run-question.js';
import { openSession } from '../../src/run/session.js';
import { reply, startMockApi, text, toolUse, type MockApi, type RecordedRequest } from '../support/mock-api.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

let api: MockApi;
const repo = useRepo(APP_FILES, { git: true });
afterEach(async () => {
  await api?.close();
});

async function configFor(argv: string[]): Promise<Config> {
  const parsed = await parseArgs(['-C', repo.root, ...argv], undefined);
  if (parsed.kind !== 'run') throw new Error('not a run');
  return resolveConfig(parsed.flags, { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, HOME: '/nonexistent-home' }, repo.root, parsed.audit);
}
const request: RunRequest = { question: 'where?', open: openSession, env: { HOME: '/nonexistent-home' }, front: 'cli' };
const looping = (req: RecordedRequest) =>
  JSON.stringify(req.body.messages).includes('this is your last request') ? reply(text('Done.')) : reply(toolUse('read_file', { path: 'src/server.js' }));

describe('the run service counts usage once, in the session ledger', () => {
  it('a front end with no renderer and no sinks at all: the budget still sees every dollar and stops the run', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(...Array.from({ length: 60 }, () => looping));
    const outcome = await runQuestion(request, await configFor(['--output-format', 'json', '--max-turns', '60', '--max-budget-usd', '0.05', 'q']), {}, new AbortController().signal);
    expect(outcome.done.stop).toBe('max_budget');
    expect(api.requests.filter((r) => r.usage).length).toBeGreaterThan(2);
    const billed = api.requests.filter((r) => r.usage).reduce((sum, r) => sum + (estimateCostUsd('claude-sonnet-5-5', r.usage!) ?? 0), 0);
    // The result's cost, the session ledger and the API's bills are one number, within the budget.
    expect(outcome.session.ledger.rows()).toHaveLength(api.requests.filter((r) => r.usage).length);
    expect(outcome.session.ledger.totalCostUsd()).toBeCloseTo(billed, 10);
    expect(outcome.result.total_cost_usd).toBeCloseTo(billed, 5);
    expect(billed).toBeLessThanOrEqual(0.05);
    expect(outcome.result.modelUsage['claude-sonnet-5-5']?.costUSD).toBeCloseTo(billed, 5);
  });

  it('a second question of the same session: the result counts only its own requests, the ledger all of them', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('One.')), reply(toolUse('read_file', { path: 'src/server.js' })), reply(text('Two.')));
    const config = await configFor(['--output-format', 'json', 'q']);
    const first = await runQuestion(request, config, {}, new AbortController().signal);
    const session = first.session;
    const second = await runQuestion({ ...request, open: async () => session }, config, {}, new AbortController().signal);
    const bills = api.requests.filter((r) => r.usage).map((r) => estimateCostUsd('claude-sonnet-5-5', r.usage!) ?? 0);
    expect(session.ledger.rows()).toHaveLength(3);
    expect(first.result.total_cost_usd).toBeCloseTo(bills[0]!, 5);
    expect(second.result.total_cost_usd).toBeCloseTo(bills[1]! + bills[2]!, 5);
  });
});
