import { afterEach, describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/args.js';
import { resolveConfig, type Config } from '../../src/config.js';
import { stopMessage } from '../../src/exit-codes.js';
import { exitCodeFor } from '../../src/output/result.js';
import { runQuestion, type RunRequest } from '../../src/run/run-question.js';
import { openSession } from '../../src/run/session.js';
import { currentSandbox } from '../../src/sandbox/exec.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { Tool } from '../../src/tools/tool.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { APP_FILES, appFinding, useRepo } from '../support/temp-repo.js';

let api: MockApi;
const repo = useRepo(APP_FILES, { git: true });

afterEach(async () => {
  await api?.close();
});

/** A config as the command line would resolve it, against the local Messages API (the real SDK talks to it over HTTP). */
async function configFor(argv: string[]): Promise<Config> {
  const parsed = await parseArgs(['-C', repo.root, ...argv], undefined);
  if (parsed.kind !== 'run') throw new Error('not a run');
  const env = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, HOME: '/nonexistent-home' };
  return resolveConfig(parsed.flags, env, repo.root, parsed.audit);
}

const request = (question: string, front: RunRequest['front'] = 'cli'): RunRequest => ({ question, open: openSession, env: { HOME: '/nonexistent-home' }, front });
const never = new AbortController().signal;

describe('runQuestion: one question from session to RunOutcome', () => {
  it('answers, checks the citations, proves the repository unchanged, and derives the result object from it all', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('read_file', { path: 'src/server.js' })), reply(text('The server is made in src/server.js:4 and routed in src/router.js:99.')));
    const seen: string[] = [];
    const outcome = await runQuestion(request('where is the server?'), await configFor(['--output-format', 'json', 'q']), { sinks: () => [{ handle: (e) => void seen.push(e.type) }] }, never);
    expect(outcome.done).toMatchObject({ type: 'done', stop: 'end_turn', turns: 2, text: 'The server is made in src/server.js:4 and routed in src/router.js:99.' });
    expect(outcome.citations?.map((c) => [c.path, c.start_line, c.status])).toEqual([
      ['src/server.js', 4, 'ok'],
      ['src/router.js', 99, 'line_out_of_range'],
    ]);
    expect(outcome.citationWarnings).toEqual([expect.stringContaining('src/router.js:99')]);
    expect(outcome.readonly).toMatchObject({ verified: true, detail: null, concurrent: null });
    expect(outcome.snapshotError).toBeNull();
    expect(outcome.requests).toBe(2);
    expect(outcome.sandbox).toBe(currentSandbox().kind);
    expect(outcome.audit).toBeNull();
    // The result object is the same run, serialised: nothing in it is found any other way.
    expect(outcome.result).toMatchObject({
      result: outcome.done.text,
      stop_reason: 'end_turn',
      num_turns: 2,
      readonly_verified: true,
      sandbox: outcome.sandbox,
      session_id: outcome.saved.id,
      warnings: outcome.citationWarnings,
      citations: [expect.objectContaining({ path: 'src/server.js', status: 'ok' }), expect.objectContaining({ path: 'src/router.js', status: 'line_out_of_range' })],
    });
    expect(outcome.result.tool_calls).toEqual([expect.objectContaining({ name: 'read_file', is_error: false })]);
    expect(exitCodeFor(outcome.result)).toBe(0);
    // The front end's sinks saw the run live.
    expect(seen.filter((t) => t === 'request_start')).toHaveLength(2);
    expect(seen.at(-1)).toBe('done');
  });

  it('an audit: the report the model filed is the outcome, and its verdict decides the exit code', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('report_findings', { verdict: 'fail', summary: 'login shells out', findings: [appFinding()] })), reply(text('Reported.')));
    const config = await configFor(['audit', '--output-format', 'json', 'does login shell out?']);
    const outcome = await runQuestion(request('does login shell out?'), config, {}, never);
    expect(outcome.audit).toMatchObject({ verdict: 'fail', summary: 'login shells out', findings: [expect.objectContaining({ path: 'src/auth.js', start_line: 4 })] });
    expect(outcome.result.audit).toEqual(outcome.audit);
    expect(exitCodeFor(outcome.result, 'high')).toBe(4);
    expect(exitCodeFor(outcome.result, 'critical')).toBe(0);
  });

  it('a cancel aborts the model request in flight (the server sees the client leave) and ends the run as interrupted', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue({ kind: 'hang' });
    const controller = new AbortController();
    void api.waitForRequests(1).then(() => controller.abort('interrupt'));
    const started = Date.now();
    const outcome = await runQuestion(request('q'), await configFor(['q']), {}, controller.signal);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(outcome.done.stop).toBe('aborted');
    expect(exitCodeFor(outcome.result)).toBe(130);
    // Not just a result that says so: the HTTP request itself was cut from the client's side.
    await expect.poll(() => api.requests.find((r) => r.path === '/v1/messages')?.clientLeft, { timeout: 5000 }).toBe(true);
  });

  it.each([
    ['cli', /^stopped after 1 model request \(--max-turns 1\)/],
    ['mcp', /^stopped after 1 model request \(max_turns 1\)/],
  ] as const)('the result object words a limit for its front end (%s)', async (front, words) => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('read_file', { path: 'src/server.js' })));
    const outcome = await runQuestion(request('q', front), await configFor(['--max-turns', '1', 'q']), {}, never);
    expect(outcome.done).toMatchObject({ stop: 'max_turns', limit: 'maxTurns', value: 1, requests: 1 });
    expect(outcome.result.error?.message).toMatch(words);
    expect(outcome.result.error?.message).toBe(stopMessage(outcome.done, front));
    expect(exitCodeFor(outcome.result)).toBe(3);
  });
});

describe('runQuestion: the sandbox travels in the session, not read from the process mid-run', () => {
  it.each<['kernel' | 'tables']>([['kernel'], ['tables']])('a session that says %s: the tools, the proof and the result all see it', async (kind) => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('where', {})), reply(text('Done.')));
    const seen: Array<string | undefined> = [];
    const open: RunRequest['open'] = async (c, opts) => {
      const session = await openSession(c, opts);
      const where: Tool<Record<string, never>> = {
        name: 'where',
        description: 'records the sandbox its context names',
        inputSchema: { type: 'object', properties: {} },
        parse: () => ({ ok: true, value: {} }),
        display: () => 'where',
        run: async (_input, ctx) => {
          seen.push(ctx.sandbox);
          return { content: 'ok', summary: 'ok', isError: false };
        },
      };
      return { ...session, sandbox: kind, registry: new ToolRegistry([where]) };
    };
    const outcome = await runQuestion({ ...request('q'), open }, await configFor(['--output-format', 'json', '--no-session-persistence', 'q']), {}, never);
    expect(currentSandbox().kind).toBe('tables');
    expect(seen).toEqual([kind]);
    expect(outcome.sandbox).toBe(kind);
    expect(outcome.result.sandbox).toBe(kind);
  });
});
