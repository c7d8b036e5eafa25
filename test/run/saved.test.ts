import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Conversation } from '../../src/agent/conversation.js';
import { findSession, listSessions, loadSession, pruneSessions, sessionsDir, SessionWriter, MAX_SESSIONS_PER_REPO } from '../../src/run/saved.js';
import { runCli, TEST_STATE_HOME } from '../support/cli.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { APP_FILES, makeRepo } from '../support/temp-repo.js';

let api: MockApi | null = null;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await api?.close();
  api = null;
  for (const c of cleanups.splice(0)) await c();
});

async function freshRepo(): Promise<string> {
  const repo = await makeRepo(APP_FILES, { git: true });
  cleanups.push(repo.cleanup);
  return repo.root;
}

async function ask(root: string, argv: string[]): Promise<{ code: number; result: Record<string, any>; stderr: string }> {
  const run = await runCli(['-C', root, '--output-format', 'json', ...argv], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api!.url } });
  return { code: run.code, result: run.stdout === '' ? {} : (JSON.parse(run.stdout) as Record<string, any>), stderr: run.stderr };
}

const git = (root: string, ...args: string[]) =>
  execFileSync('git', args, { cwd: root, env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' } });

describe('saved sessions (one-shot, in-process against the local API)', () => {
  it('saves each question as JSONL (0600, outside the repo); -c continues it with the same session_id and reads the cache', async () => {
    const root = await freshRepo();
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('bash', { command: 'ls src' })), reply(text('Routing is in src/router.js:3.')), reply(text('It returns 404 at src/router.js:5.')));
    const first = await ask(root, ['Where is routing?']);
    expect(first.code).toBe(0);
    const dir = sessionsDir({ XDG_STATE_HOME: TEST_STATE_HOME }, root)!;
    const file = path.join(dir, `${first.result.session_id}.jsonl`);
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    expect((await fs.stat(dir)).mode & 0o777).toBe(0o700);
    const lines = (await fs.readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    // One step after the request that ran a tool (partial), then the completed question.
    expect(lines.map((l) => [l.type, l.partial ?? false])).toEqual([['session', false], ['turn', true], ['turn', false]]);
    expect(lines[1]).toMatchObject({ question: 'Where is routing?', base: 0 });
    expect(lines[1].messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(lines[2]).toMatchObject({ base: 3, cost_usd: expect.any(Number) });

    const cachedBefore = api.requests.at(-1)!.usage!;
    const second = await ask(root, ['-c', 'And unknown routes?']);
    expect(second.code).toBe(0);
    expect(second.result.session_id).toBe(first.result.session_id);
    const body = JSON.stringify(api.requests.at(-1)!.body.messages);
    expect(body).toContain('Where is routing?');
    expect(body).toContain('Routing is in src/router.js:3.');
    // Within the cache lifetime the resumed run reads everything the first run cached, the conversation included.
    expect(api.requests.at(-1)!.usage!.cache_read_input_tokens).toBeGreaterThanOrEqual(cachedBefore.cache_read_input_tokens + cachedBefore.cache_creation_input_tokens);
    // Progress lines only (json mode shows them on stderr): no cache miss, no warning about the resume.
    expect(second.stderr).not.toMatch(/cache miss|warning/);
    expect(second.stderr).toContain('Σ 1 request');
    expect((await fs.readFile(file, 'utf8')).trim().split('\n')).toHaveLength(4);
  });

  it('a run that dies mid-question has already saved every completed request: the next -c continues from there', async () => {
    const root = await freshRepo();
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('read_file', { path: 'src/router.js' })), { kind: 'hang' });
    const dir = sessionsDir({ XDG_STATE_HOME: TEST_STATE_HOME }, root)!;
    let onDisk = '';
    const signals = new EventEmitter();
    void api.waitForRequests(2).then(async () => {
      // The second request is in flight (the step's write runs beside it): what a crash now would leave behind.
      for (let i = 0; i < 250 && onDisk === ''; i++) {
        const [saved] = await listSessions(dir);
        onDisk = saved ? await fs.readFile(saved.file, 'utf8') : '';
        if (onDisk === '') await new Promise((r) => setTimeout(r, 20));
      }
      signals.emit('SIGINT');
    });
    const env = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url };
    await runCli(['-C', root, 'Where are routes?'], { env, signals });
    const records = onDisk.trim().split('\n').map((l) => JSON.parse(l));
    expect(records.at(-1)).toMatchObject({ type: 'turn', partial: true, question: 'Where are routes?' });
    expect(JSON.stringify(records.at(-1).messages)).toContain('function handle(req, res)');
    api.enqueue(reply(text('Continued.')));
    expect((await runCli(['-C', root, '-c', 'go on'], { env })).code).toBe(0);
    expect(JSON.stringify(api.requests.at(-1)!.body.messages)).toContain('function handle(req, res)');
  });

  it('--resume takes an id prefix; a changed HEAD and a changed AGENTS.md are said in one line, with the cited files that changed', async () => {
    const root = await freshRepo();
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('See src/router.js:5 and src/server.js:4.')), reply(text('ok')));
    const first = await ask(root, ['q1']);
    await fs.appendFile(path.join(root, 'src', 'router.js'), '// changed\n');
    await fs.appendFile(path.join(root, 'AGENTS.md'), 'New rule.\n');
    git(root, 'commit', '-qam', 'change');
    const run = await runCli(['-C', root, '--resume', first.result.session_id.slice(0, 6), 'q2'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } });
    expect(run.code).toBe(0);
    const notice = run.stderr.split('\n').filter((l) => l.includes('resumed session'));
    expect(notice).toHaveLength(1);
    expect(notice[0]).toMatch(new RegExp(`^warning: resumed session ${first.result.session_id.slice(0, 8)}: HEAD moved \\([0-9a-f]{7} → [0-9a-f]{7}\\), cited files changed: src/router.js; the preamble changed`));
    expect(notice[0]).not.toContain('src/server.js');
  });

  it.each([
    [['-c', 'q'], /no saved session for .* to continue; ask a question first/],
    [['--resume', 'ffff', 'q'], /no saved session "ffff" for .*; \/resume in the REPL lists them, or use -c for the latest/],
    [['--resume', '', 'q'], /--resume needs a session id/],
    [['-c', '--resume', 'ab', 'q'], /use either -c\/--continue \(the latest session\) or --resume <id>, not both/],
    [['audit', '-c', 'q'], /-c\/--continue does not work with audit/],
  ])('%j is a usage error and sends nothing', async (argv, message) => {
    const root = await freshRepo();
    api = await startMockApi();
    const run = await runCli(['-C', root, ...argv], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(api.requests).toHaveLength(0);
  });

  it('--no-session-persistence saves nothing', async () => {
    const root = await freshRepo();
    api = await startMockApi();
    api.enqueue(reply(text('ok')));
    const run = await ask(root, ['--no-session-persistence', 'q']);
    expect(run.code).toBe(0);
    expect(await listSessions(sessionsDir({ XDG_STATE_HOME: TEST_STATE_HOME }, root)!)).toEqual([]);
  });

  it('a state directory inside the repository is never used: a warning, and nothing written there', async () => {
    const root = await freshRepo();
    api = await startMockApi();
    api.enqueue(reply(text('ok')));
    const run = await runCli(['-C', root, 'q'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, XDG_STATE_HOME: path.join(root, '.state') } });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('warning: sessions are not saved: the state directory ($XDG_STATE_HOME or ~/.local/state) is inside the repository');
    await expect(fs.stat(path.join(root, '.state'))).rejects.toThrow();
  });
});

describe('the session file', () => {
  async function tempDir(): Promise<string> {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-saved-'));
    cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));
    return dir;
  }
  // As spelunk writes them: a model name, a 16-hex preamble hash (stored records are checked field by field).
  const turn = { question: 'q', model: 'm', head: null, preamble_hash: '0123456789abcdef', cost_usd: 0.01 };

  it('round-trips a conversation whose trailing user message grew (a question after a cancelled one), and survives a cut last line', async () => {
    const dir = await tempDir();
    const conversation = new Conversation();
    const writer = new SessionWriter(dir, '/repo', null);
    conversation.addQuestion('first');
    conversation.addQuestion('[interrupted]');
    expect(await writer.flush(conversation, turn)).toBeNull();
    conversation.addQuestion('second');
    conversation.addAssistant([{ type: 'text', text: 'answer' }]);
    expect(await writer.flush(conversation, turn)).toBeNull();
    await fs.appendFile(path.join(dir, `${writer.id}.jsonl`), '{"type":"turn","base":0,"mess');
    const loaded = await loadSession((await listSessions(dir))[0]!);
    expect(loaded.messages).toEqual(conversation.messages);
    expect(loaded.last?.base).toBe(0);
  });

  it('finds a session by a unique prefix and refuses an ambiguous one', async () => {
    const dir = await tempDir();
    for (const id of ['aaaa1111-0000-4000-8000-000000000000', 'aaaa2222-0000-4000-8000-000000000000']) await fs.writeFile(path.join(dir, `${id}.jsonl`), '');
    await fs.writeFile(path.join(dir, 'notes.txt'), '');
    expect((await findSession(dir, 'aaaa1', '/r')).id).toBe('aaaa1111-0000-4000-8000-000000000000');
    await expect(findSession(dir, 'aaaa', '/r')).rejects.toThrow(/"aaaa" matches 2 sessions \((aaaa1111, aaaa2222|aaaa2222, aaaa1111)\); give more of the id/);
  });

  it(`prunes to the newest ${MAX_SESSIONS_PER_REPO - 1} (room for the new one) and drops those older than 30 days`, async () => {
    const dir = await tempDir();
    const now = Date.now();
    for (let i = 0; i < MAX_SESSIONS_PER_REPO + 2; i++) {
      const file = path.join(dir, `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000.jsonl`);
      await fs.writeFile(file, '');
      const at = new Date(now - i * 60_000 - (i === 3 || i === 4 ? 31 * 86_400_000 : 0));
      await fs.utimes(file, at, at);
    }
    // 52 sessions: the one older than 30 days sorts last, so it is among the three beyond the newest 49.
    expect(await pruneSessions(dir, now)).toBe(3);
    const left = (await listSessions(dir)).map((s) => s.id.slice(0, 8));
    expect(left).toHaveLength(MAX_SESSIONS_PER_REPO - 1);
    expect(left).not.toContain('00000003');
    expect(left[0]).toBe('00000000');
    // Age alone: of the 49 left, one is made 31 days old and goes at the next start.
    const old = new Date(now - 31 * 86_400_000);
    await fs.utimes(path.join(dir, `00000000-0000-4000-8000-000000000000.jsonl`), old, old);
    await fs.rm(path.join(dir, `00000001-0000-4000-8000-000000000000.jsonl`));
    expect(await pruneSessions(dir, now)).toBe(1);
    expect((await listSessions(dir)).map((s) => s.id.slice(0, 8))).not.toContain('00000000');
  });

  it('the sessions directory is keyed by the root and never inside it', () => {
    expect(sessionsDir({ XDG_STATE_HOME: '/state' }, '/r/a')).toMatch(/^\/state\/spelunk\/sessions\/[0-9a-f]{16}$/);
    expect(sessionsDir({ XDG_STATE_HOME: '/state' }, '/r/a')).not.toBe(sessionsDir({ XDG_STATE_HOME: '/state' }, '/r/b'));
    expect(sessionsDir({ XDG_STATE_HOME: '/r/a/.state' }, '/r/a')).toBeNull();
    expect(sessionsDir({ HOME: '/r/a' }, '/r/a')).toBeNull();
    expect(sessionsDir({ XDG_STATE_HOME: '/r/ab' }, '/r/a')).not.toBeNull();
    // Segments, not a ".." prefix: a directory named "..state" in the root is inside it.
    expect(sessionsDir({ XDG_STATE_HOME: '/r/a/..state' }, '/r/a')).toBeNull();
  });

  it('a state directory that is a symlink into the repository counts as inside it', async () => {
    const root = await freshRepo();
    const link = path.join(path.dirname(root), 'state-link');
    await fs.symlink(path.join(root, 'src'), link);
    expect(sessionsDir({ XDG_STATE_HOME: path.join(link, 'not-yet') }, root)).toBeNull();
    expect(sessionsDir({ XDG_STATE_HOME: path.join(path.dirname(root), 'elsewhere') }, root)).not.toBeNull();
  });
});
