import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/args.js';
import { resolveConfig, type Config } from '../../src/config.js';
import type { EventSink } from '../../src/run/ask.js';
import { runQuestion, type RunRequest } from '../../src/run/run-question.js';
import { sessionsDir } from '../../src/run/saved.js';
import { openSession } from '../../src/run/session.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { IN_PROCESS_HEAD_TIMEOUT_MS } from '../support/cli.js';
import { APP_FILES, makeRepo } from '../support/temp-repo.js';

/**
 * The HEAD a saved session records and the one a resume compares it with, through runQuestion on real repositories:
 * the save records what the read-only proof read at the end (no query of its own), and the resume's read takes the
 * budget config.headTimeoutMs gives it, so neither side can silently give up in a test on a loaded machine.
 */

let api: MockApi | null = null;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await api?.close();
  api = null;
  for (const c of cleanups.splice(0)) await c();
});

const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' };
const git = (root: string, ...args: string[]): string => execFileSync('git', args, { cwd: root, env: gitEnv, encoding: 'utf8' }).trim();
const never = new AbortController().signal;

/** A committed repository and a state directory of its own (where the sessions are saved). */
async function setUp(): Promise<{ root: string; env: Record<string, string> }> {
  const repo = await makeRepo(APP_FILES, { git: true });
  const state = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-head-state-')));
  cleanups.push(repo.cleanup, () => fs.rm(state, { recursive: true, force: true }));
  api = await startMockApi({ minCacheTokens: 256 });
  return { root: repo.root, env: { HOME: '/nonexistent-home', XDG_STATE_HOME: state } };
}

/** A config as the command line resolves it; every HEAD read gets `headTimeoutMs` (as main's options give in-process runs). */
async function configFor(root: string, env: Record<string, string>, argv: string[], headTimeoutMs = IN_PROCESS_HEAD_TIMEOUT_MS): Promise<Config> {
  const parsed = await parseArgs(['-C', root, ...argv], undefined);
  if (parsed.kind !== 'run') throw new Error('not a run');
  const config = await resolveConfig(parsed.flags, { ...env, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api!.url }, root, parsed.audit);
  return { ...config, headTimeoutMs };
}

const request = (question: string, env: Record<string, string>): RunRequest => ({ question, open: openSession, env, front: 'cli' });

/** The completed questions' records of the one session saved for `root`. */
async function savedTurns(root: string, env: Record<string, string>): Promise<Array<Record<string, unknown>>> {
  const dir = sessionsDir(env, root)!;
  const [file] = await fs.readdir(dir);
  const lines = (await fs.readFile(path.join(dir, file!), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  return lines.filter((l) => l.type === 'turn' && l.partial !== true);
}

/** A sink that runs `act` once, when the second model request starts (after a tool ran, so after the snapshot). */
const atSecondRequest = (act: () => void): EventSink => ({
  handle(event) {
    if (event.type === 'request_start' && event.turn === 2) act();
  },
});

describe('saved session HEAD: the save records the proof\'s, the resume reads within its budget', () => {
  it('the save records the HEAD the proof read at the end: a commit made during the question is both the proof\'s (or the concurrent changes\') HEAD and the saved head', async () => {
    const { root, env } = await setUp();
    const start = git(root, 'rev-parse', 'HEAD');
    api!.enqueue(reply(toolUse('read_file', { path: 'src/router.js' })), reply(text('Routing is in src/router.js:3.')));
    const commit = atSecondRequest(() => git(root, 'commit', '-q', '--allow-empty', '-m', 'during the question'));
    const outcome = await runQuestion(request('q', env), await configFor(root, env, ['q']), { sinks: () => [commit] }, never);
    const end = git(root, 'rev-parse', 'HEAD');
    expect(end).not.toBe(start);
    // A commit within the clock margin of the tool call fails the proof (HEAD in its detail); a later one is another
    // program's (HEAD in concurrent_changes): which one depends on the machine's timing, the saved head does not.
    const failed = outcome.readonly.detail?.includes(`HEAD moved: ${start} → ${end}`) === true;
    expect(failed || outcome.readonly.concurrent?.paths.includes('HEAD') === true).toBe(true);
    expect(outcome.result.repo.git_commit).toBe(start);
    expect((await savedTurns(root, env)).map((t) => t.head)).toEqual([end]);
  });

  it('a HEAD the proof could not read (git not used at the end) is saved as none, and a later resume does not call it moved', async () => {
    const { root, env } = await setUp();
    const fifo = path.join(root, '.git', 'commondir');
    api!.enqueue(reply(toolUse('read_file', { path: 'src/router.js' })), reply(text('Routing is in src/router.js:3.')), reply(text('ok')));
    const plant = atSecondRequest(() => execFileSync('/usr/bin/mkfifo', [fifo]));
    await runQuestion(request('q1', env), await configFor(root, env, ['q1']), { sinks: () => [plant] }, never);
    expect((await savedTurns(root, env)).map((t) => t.head)).toEqual([null]);
    // git is usable again and HEAD is another commit: a saved none is unknown, not a HEAD that moved.
    await fs.rm(fifo);
    git(root, 'commit', '-q', '--allow-empty', '-m', 'later');
    const warned: string[] = [];
    const resumed = await runQuestion(request('q2', env), await configFor(root, env, ['-c', 'q2']), { phase: (p) => void (p.type === 'warning' && warned.push(p.message)) }, never);
    expect(resumed.saved.notice).toBeNull();
    expect(warned.join('\n')).not.toContain('HEAD moved');
  });

  it('a resume reads HEAD within config.headTimeoutMs (the budget in-process runs give): the moved HEAD is said', async () => {
    const { root, env } = await setUp();
    api!.enqueue(reply(text('Routing is in src/router.js:3.')), reply(text('ok')));
    const first = await runQuestion(request('q1', env), await configFor(root, env, ['q1']), {}, never);
    const saved = git(root, 'rev-parse', 'HEAD');
    expect((await savedTurns(root, env)).map((t) => t.head)).toEqual([saved]);
    git(root, 'commit', '-q', '--allow-empty', '-m', 'after the question');
    const now = git(root, 'rev-parse', 'HEAD');
    const warned: string[] = [];
    const config = await configFor(root, env, ['--resume', first.saved.id.slice(0, 8), 'q2']);
    const resumed = await runQuestion(request('q2', env), config, { phase: (p) => void (p.type === 'warning' && warned.push(p.message)) }, never);
    const moved = `resumed session ${first.saved.id.slice(0, 8)}: HEAD moved (${saved.slice(0, 7)} → ${now.slice(0, 7)}), no cited file changed`;
    expect(resumed.saved.notice).toBe(moved);
    expect(warned).toContain(moved);
  });
});
