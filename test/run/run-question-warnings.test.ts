import { execFileSync } from 'node:child_process';
import { getEventListeners } from 'node:events';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/args.js';
import { resolveConfig, type Config } from '../../src/config.js';
import { gatedSession, runQuestion, type RunHooks, type RunRequest } from '../../src/run/run-question.js';
import { openSession, type Session } from '../../src/run/session.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { APP_FILES, appFinding, makeRepo } from '../support/temp-repo.js';

/**
 * What runQuestion says besides the answer, in process against the local Messages API and real repositories: its
 * warnings (which, in what order, for which output), how it ends when cancelled or out of time (and that it leaves
 * nothing behind on the caller's signal or in the timers), an exception as the run's failure, and the gated session
 * the REPL and the MCP server hand it.
 */

let api: MockApi | null = null;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await api?.close();
  api = null;
  for (const c of cleanups.splice(0)) await c();
});

async function repo(): Promise<string> {
  const made = await makeRepo(APP_FILES, { git: true });
  cleanups.push(made.cleanup);
  return made.root;
}

/** A relative $HOME and no $XDG_STATE_HOME: the saved session's warning ("sessions are not saved: …"). */
const unsavedEnv = { HOME: 'relative-home' };

async function configFor(root: string, argv: string[], env: Record<string, string> = { HOME: '/nonexistent-home' }): Promise<Config> {
  const parsed = await parseArgs(['-C', root, ...argv], undefined);
  if (parsed.kind !== 'run') throw new Error('not a run');
  return resolveConfig(parsed.flags, { ...env, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api!.url }, root, parsed.audit);
}

const request = (question: string, env: Record<string, string> = { HOME: '/nonexistent-home' }): RunRequest => ({ question, open: openSession, env, front: 'cli' });
const never = (): AbortSignal => new AbortController().signal;

/** A repository git is refused for: the session says so once (and the snapshot then says nothing of HEAD). */
async function refusedRepo(): Promise<string> {
  const root = await repo();
  execFileSync('/usr/bin/mkfifo', [path.join(root, '.git', 'commondir')]);
  return root;
}

const REFUSED = expect.stringMatching(/^git is not used for this repository: .*commondir is a FIFO/);
const BAD_CITATION = expect.stringMatching(/^citation src\/auth\.js:99\b/);

/** An audit whose session, report and citations each give one warning. */
async function warnedAudit(format: 'json' | 'text'): Promise<{ warned: string[]; outcome: Awaited<ReturnType<typeof runQuestion>> }> {
  const root = await refusedRepo();
  api = await startMockApi({ minCacheTokens: 256 });
  api.enqueue(reply(toolUse('report_findings', { verdict: 'fail', summary: 's', findings: [appFinding(), appFinding({ start_line: 999 })] })), reply(text('See src/auth.js:4 and src/auth.js:99.')));
  const config = await configFor(root, ['audit', '--output-format', format, 'q']);
  const warned: string[] = [];
  const hooks: RunHooks = { phase: (p) => void (p.type === 'warning' && warned.push(p.message)) };
  const outcome = await runQuestion(request('q'), config, hooks, never());
  return { warned, outcome };
}

describe('runQuestion: warnings', () => {
  it('json: the start\'s warnings (the session\'s) as they arise, then the report\'s and the citations\', in that order', async () => {
    const { warned, outcome } = await warnedAudit('json');
    expect(warned).toEqual([REFUSED]);
    const dropped = expect.stringMatching(/^report_findings call 1 dropped .*src\/auth\.js:999/);
    expect(outcome.result.warnings).toEqual([REFUSED, dropped, BAD_CITATION]);
    expect(outcome.auditWarnings).toEqual([dropped]);
    expect(outcome.citationWarnings).toEqual([BAD_CITATION]);
  });

  it('json: the saved session\'s warning comes after the session\'s', async () => {
    const root = await refusedRepo();
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('See src/auth.js:99.')));
    const warned: string[] = [];
    const hooks: RunHooks = { phase: (p) => void (p.type === 'warning' && warned.push(p.message)) };
    const outcome = await runQuestion(request('q', unsavedEnv), await configFor(root, ['--output-format', 'json', 'q'], unsavedEnv), hooks, never());
    const unsaved = 'sessions are not saved: neither $XDG_STATE_HOME nor $HOME is an absolute path';
    expect(outcome.saved.warning).toBe(unsaved);
    expect(warned).toEqual([REFUSED, unsaved]);
    expect(outcome.result.warnings).toEqual([REFUSED, unsaved, BAD_CITATION]);
  });

  it('text: the same outcome as json (the run never reads the output format; the text view shows Sources instead)', async () => {
    const { outcome } = await warnedAudit('text');
    expect(outcome.citations?.map((c) => c.status)).toEqual(['ok', 'line_out_of_range']);
    expect(outcome.citationWarnings).toEqual([BAD_CITATION]);
    expect(outcome.result.warnings).toEqual([REFUSED, expect.stringMatching(/^report_findings call 1 dropped /), BAD_CITATION]);
  });

  it('no warning at all: an empty list, and nothing told to the front end', async () => {
    const root = await repo();
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('The server is made in src/server.js:4.')));
    const warned: string[] = [];
    const outcome = await runQuestion(request('q'), await configFor(root, ['--output-format', 'json', '--no-session-persistence', 'q']), { phase: (p) => void (p.type === 'warning' && warned.push(p.message)) }, never());
    expect(warned).toEqual([]);
    expect(outcome.result.warnings).toEqual([]);
    expect(outcome.saveWarning).toBeNull();
    expect(outcome.snapshotError).toBeNull();
  });
});

describe('runQuestion: the named phases a front end hears', () => {
  it.each<[string, string[], string[], string[]]>([
    ['--verify-citations fix, a bad citation: the fix turn is announced, then the fixed answer', ['--verify-citations', 'fix'], ['See src/auth.js:99.', 'See src/auth.js:4.'], ['citation_fix:1', 'answered:ok']],
    ['--verify-citations fix with no turn left: said, then the answer as it is', ['--verify-citations', 'fix', '--max-turns', '1'], ['See src/auth.js:99.'], ['citation_no_room', 'answered:line_out_of_range']],
    ['--verify-citations off: the answer, unchecked', ['--verify-citations', 'off'], ['See src/auth.js:99.'], ['answered:null']],
  ])('%s', async (_name, argv, replies, expected) => {
    const root = await repo();
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(...replies.map((r) => reply(text(r))));
    const heard: string[] = [];
    const hooks: RunHooks = {
      phase: async (p) => {
        if (p.type === 'citation_fix') heard.push(`citation_fix:${p.bad.length}`);
        if (p.type === 'citation_no_room') heard.push(p.type);
        if (p.type === 'answered') heard.push(`answered:${p.citations === null ? 'null' : p.citations.map((c) => c.status).join(',')}`);
      },
    };
    await runQuestion(request('q'), await configFor(root, ['--output-format', 'json', '--no-session-persistence', ...argv, 'q']), hooks, never());
    expect(heard).toEqual(expected);
  });
});

describe('runQuestion: cancelled, out of time, or failing inside', () => {
  it('a signal already aborted ends the run as interrupted before any request, and leaves no listener on it', async () => {
    const root = await repo();
    api = await startMockApi({ minCacheTokens: 256 });
    const controller = new AbortController();
    controller.abort('interrupt');
    const outcome = await runQuestion(request('q'), await configFor(root, ['--no-session-persistence', 'q']), {}, controller.signal);
    expect(outcome.done.stop).toBe('aborted');
    expect(api.requests.filter((r) => r.path === '/v1/messages')).toHaveLength(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('--timeout ends a run whose request hangs as a timeout, and the caller\'s signal keeps no listener', async () => {
    const root = await repo();
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue({ kind: 'hang' });
    const controller = new AbortController();
    const started = Date.now();
    const outcome = await runQuestion(request('q'), await configFor(root, ['--no-session-persistence', '--timeout', '1', 'q']), {}, controller.signal);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(outcome.done).toMatchObject({ stop: 'timeout' });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('a finished run leaves no --timeout timer behind (a long one would keep the process alive for its whole length)', async () => {
    const root = await repo();
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('ok')));
    const config = await configFor(root, ['--no-session-persistence', '--timeout', '3600', 'q']);
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const outcome = await runQuestion(request('q'), config, {}, never());
    expect(outcome.done.stop).toBe('end_turn');
    expect(timers()).toBeLessThanOrEqual(before);
  });

  it('an exception inside the loop (a sink that throws) is the run\'s failure, with a done made from the result', async () => {
    const root = await repo();
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('ok')));
    const throwing = { handle: (e: { type: string }) => { if (e.type === 'request_start') throw new Error('sink broke'); } };
    const outcome = await runQuestion(request('q'), await configFor(root, ['--output-format', 'json', '--no-session-persistence', 'q']), { sinks: () => [throwing] }, never());
    expect(outcome.done).toEqual({ type: 'done', stop: outcome.result.stop_reason, text: outcome.result.result, turns: outcome.result.num_turns, error: 'internal error: sink broke' });
    expect(outcome.result.error?.message).toContain('internal error: sink broke');
    expect(outcome.citations).toBeNull();
  });
});

describe('gatedSession: the kept session, its tools waiting for this run\'s snapshot', () => {
  const kept = { toolsReady: null, warnings: ['kept'] } as unknown as Session;
  it.each<[string, (() => Promise<unknown>) | undefined, 'resolves' | 'none']>([
    ['a snapshot that resolves: the gate opens, with no value', () => Promise.resolve({ head: 'x' }), 'resolves'],
    ['a snapshot that fails: the gate opens all the same (the failure is the run\'s to report)', () => Promise.reject(new Error('no snapshot')), 'resolves'],
    ['no snapshot: no gate', undefined, 'none'],
  ])('%s', async (_name, ready, expected) => {
    const gated = gatedSession(kept, ready === undefined ? {} : { toolsReady: ready() });
    expect(gated.warnings).toBe(kept.warnings);
    if (expected === 'none') expect(gated.toolsReady).toBeNull();
    else await expect(gated.toolsReady).resolves.toBeUndefined();
  });

  it('the REPL\'s way: two questions on one kept session, each gated on its own snapshot, share the conversation', async () => {
    const root = await repo();
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('read_file', { path: 'src/server.js' })), reply(text('In src/server.js:4.')), reply(text('Still there.')));
    const config = await configFor(root, ['--output-format', 'json', '--no-session-persistence', 'q']);
    let session: Session | null = null;
    const open = async (c: Config, opts: Parameters<typeof gatedSession>[1]): Promise<Session> => gatedSession((session ??= await openSession(c, {})), opts);
    const first = await runQuestion({ ...request('q1'), open }, config, {}, never());
    const second = await runQuestion({ ...request('q2'), open, saved: first.saved }, config, {}, never());
    expect(first.readonly.verified).toBe(true);
    expect(second.readonly.verified).toBe(true);
    expect(second.saved.id).toBe(first.saved.id);
    const last = api.requests.filter((r) => r.path === '/v1/messages').at(-1)!;
    expect(JSON.stringify(last.body.messages)).toContain('In src/server.js:4.');
  });
});
