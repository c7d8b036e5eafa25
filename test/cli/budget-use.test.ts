import { afterEach, describe, expect, it } from 'vitest';
import path from 'node:path';
import { runBinary } from '../support/binary.js';
import { runCli } from '../support/cli.js';
import { reply, startMockApi, text, toolUse, type MockApi, type RecordedRequest, type Reply } from '../support/mock-api.js';
import { useRepo } from '../support/temp-repo.js';

/**
 * --max-budget-usd against what the local API bills (its usage follows the cache rules: reads of an earlier entry
 * within the lookback, writes at each breakpoint): a run spends most of its budget before it stops and never more.
 */

// Twelve source files of ~6 KB: each read adds ~1,500 prompt tokens, as a real tool round does.
const FILES = Object.fromEntries(
  Array.from({ length: 12 }, (_, i) => [`src/mod${i}.js`, Array.from({ length: 120 }, (_, l) => `export const value${i}_${l} = ${l} * ${i + 1}; // a line of module ${i}\n`).join('')]),
);
const repo = useRepo({ 'AGENTS.md': '# Agents\n', ...FILES }, { git: true });
// A final answer of ~4,000 characters (~1,000 output tokens), as a cited answer is.
const ANSWER = Array.from({ length: 50 }, (_, i) => `- value${i % 12}_${i} is defined in src/mod${i % 12}.js:${i + 1}, where module ${i % 12} multiplies it.`).join('\n');

let api: MockApi;
afterEach(async () => {
  await api?.close();
});

/** The model reads file after file until told that a request is its last; then it answers at length. */
function model(req: RecordedRequest): Reply {
  const sent = JSON.stringify(req.body.messages ?? []);
  if (sent.includes('this is your last request')) return reply(text(ANSWER));
  const n = (sent.match(/"tool_use"/g) ?? []).length;
  return reply(toolUse('read_file', { path: `src/mod${n % 12}.js` }));
}

describe('--max-budget-usd buys what it says', () => {
  it.each([
    // A tool round here costs $0.005-0.01 (sonnet), so these budgets hold 10-60 rounds; a budget of a few rounds can
    // leave a round's worth unspent, which is more than a fifth of it.
    ['claude-sonnet-5-5', 0.1],
    ['claude-sonnet-5-5', 0.2],
    ['claude-sonnet-5-5', 0.5],
    ['claude-opus-4-8', 0.2],
    ['claude-opus-4-8', 0.5],
    ['claude-haiku-4-5', 0.05],
  ])('%s at $%s: spends at least 80 percent of the budget and never more', async (modelId, budget) => {
    api = await startMockApi({ minCacheTokens: 1024 });
    api.enqueue(...Array.from({ length: 200 }, () => model));
    const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url };
    const argv = ['-C', repo.root, '--output-format', 'json', '--model', modelId, '--max-turns', '200', '--max-budget-usd', String(budget), 'q'];
    const run = await runCli(argv, { env });
    const result = JSON.parse(run.stdout.trim());
    expect(result.total_cost_usd).toBeLessThanOrEqual(budget);
    expect(result.total_cost_usd).toBeGreaterThanOrEqual(0.8 * budget);
    // It stopped because of the budget, after the model's answer in the request the budget left it.
    expect(result.subtype).toBe('error_max_budget_usd');
    expect(result.result).toBe(ANSWER);
    expect(run.code).toBe(3);
  });

  it('the built binary, claude-sonnet-5-5 at $0.2: the same bounds, stopped by the budget after its answer', async () => {
    api = await startMockApi({ minCacheTokens: 1024 });
    api.enqueue(...Array.from({ length: 200 }, () => model));
    const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, HOME: path.dirname(repo.root) };
    const argv = ['-C', repo.root, '--output-format', 'json', '--max-turns', '200', '--max-budget-usd', '0.2', 'q'];
    const run = await runBinary(argv, { cwd: repo.root, env });
    const result = JSON.parse(run.stdout.trim());
    expect(result.total_cost_usd).toBeLessThanOrEqual(0.2);
    expect(result.total_cost_usd).toBeGreaterThanOrEqual(0.16);
    expect(result).toMatchObject({ subtype: 'error_max_budget_usd', result: ANSWER });
    expect(run.code).toBe(3);
  });
});
