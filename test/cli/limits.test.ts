import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { reply, startMockApi, text, toolUse, type MockApi, type Scripted } from '../support/mock-api.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

// Contracts the mutation run found untested: the audit reminder is a turn like any other, and a symlinked --dir is
// resolved to the real root before anything is confined against it.
let api: MockApi;
const repo = useRepo(APP_FILES, { git: true });
const messages = () => api.requests.filter((r) => r.path === '/v1/messages');

afterEach(async () => {
  await api?.close();
});

async function run(argv: string[], replies: Scripted[]) {
  api = await startMockApi({ minCacheTokens: 256 });
  api.enqueue(...replies);
  const result = await runCli(['--output-format', 'json', ...argv], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } });
  return { code: result.code, result: JSON.parse(result.stdout) };
}

describe('the audit reminder counts against --max-turns', () => {
  // A model that never files its report, and answers the reminder with yet another tool call.
  const silent = (): Scripted[] => [
    reply(toolUse('bash', { command: 'ls' })),
    reply(text('I looked.')),
    reply(toolUse('bash', { command: 'ls src' })),
    reply(text('And more.')),
    reply(text('Even more.')),
  ];

  it.each([
    // One turn, taken by the tool call: the limit.
    [1, 1, 3],
    // Two: the tool round, then the last request, told to file the report; answered without one, the limit shaped
    // the answer, so exit 3 (the limit) rather than 5.
    [2, 2, 3],
    // Three: the third request is told it is the last; its tool call meets the limit; nothing more is sent.
    [3, 3, 3],
  ])('--max-turns %i → %i request(s), never more, exit %i', async (maxTurns, requests, exitCode) => {
    const { code, result } = await run(['-C', repo.root, 'audit', '--max-turns', String(maxTurns), 'any shell injection?'], silent());
    expect(messages()).toHaveLength(requests);
    expect(code).toBe(exitCode);
    expect(result.num_turns).toBeLessThanOrEqual(maxTurns);
  });
});

describe('the last request a limit allows (json)', () => {
  it('--max-turns 2: the second request is told to answer; the partial answer is the result, exit 3', async () => {
    const { code, result } = await run(
      ['-C', repo.root, '--max-turns', '2', 'where is the router?'],
      [reply(toolUse('bash', { command: 'ls src' })), reply(text('Probably src/router.js; I could not read it.'))],
    );
    expect(code).toBe(3);
    expect(result).toMatchObject({ subtype: 'error_max_turns', is_error: true, stop_reason: 'max_turns', num_turns: 2, result: 'Probably src/router.js; I could not read it.' });
    expect(result.error.message).toContain('the answer may be incomplete');
    const [first, second] = messages();
    expect(JSON.stringify(first!.body.messages)).not.toContain('[spelunk: this is your last request');
    const last = second!.body.messages!.at(-1)!.content as Array<Record<string, any>>;
    expect(last.map((b) => b.type)).toEqual(['tool_result', 'text']);
    expect(last[1]!.text).toMatch(/^\[spelunk: this is your last request: --max-turns 2 allows no request after this one\. Do not call any more tools/);
    expect(JSON.stringify(second!.body.system)).toBe(JSON.stringify(first!.body.system));
    // The cached prefix still hits: the system prompt and the first turn are read back, not written again.
    expect(second!.usage!.cache_read_input_tokens).toBeGreaterThan(0);
  });

  it('an audit at its last request is told to file its report; a report filed there ends at the limit with it', async () => {
    const report = { verdict: 'inconclusive', summary: 'Ran out of turns.', findings: [] };
    const { code, result } = await run(['-C', repo.root, 'audit', '--max-turns', '1', 'any shell injection?'], [reply(toolUse('report_findings', report))]);
    expect(code).toBe(3);
    expect(result.audit).toMatchObject({ verdict: 'inconclusive', summary: 'Ran out of turns.' });
    const last = messages()[0]!.body.messages!.at(-1)!.content as Array<Record<string, any>>;
    expect(last.at(-1)!.text).toContain('call report_findings now');
  });
});

describe('a symlinked --dir', () => {
  it('is resolved to the real root, and tools work against it', async () => {
    const link = path.join(path.dirname(repo.root), 'link-to-repo');
    await fs.symlink(repo.root, link);
    try {
      const { code, result } = await run(['-C', link, 'where is the router?'], [reply(toolUse('bash', { command: 'cat src/router.js' })), reply(text('src/router.js:3'))]);
      expect(code).toBe(0);
      expect(result.repo.root).toBe(repo.root);
      expect(result.tool_calls).toEqual([expect.objectContaining({ is_error: false })]);
      const toolResult = JSON.stringify(messages()[1]!.body.messages);
      expect(toolResult).toContain('const routes = new Map();');
      expect(result.readonly_verified).toBe(true);
    } finally {
      await fs.rm(link);
    }
  });
});
