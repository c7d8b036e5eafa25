import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeGitHub, type FakeGitHub } from '../support/github-api.js';

/**
 * post-review.mjs and fetch-comments.mjs against the GitHub stand-in, with review files written by hand: who the
 * token is, which 422 falls back to COMMENT (only the own-pull-request one), and what the log says was posted.
 */
const SCRIPTS = path.resolve('scripts/action');
const HEAD = 'a'.repeat(40);
const USERS = {
  ghs_workflow: { login: 'github-actions[bot]', installation: true },
  ghs_app: { login: 'my-app[bot]', installation: true },
  ghp_alice: { login: 'alice' },
  ghp_bob: { login: 'bob' },
};
let ws: string;
let github: FakeGitHub;

beforeAll(async () => {
  ws = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-post-review-')));
  await fs.writeFile(path.join(ws, 'event.json'), JSON.stringify({ pull_request: { number: 7, head: { sha: HEAD }, base: { ref: 'main' } } }));
});
afterAll(async () => fs.rm(ws, { recursive: true, force: true }));
beforeEach(async () => {
  github = await startFakeGitHub({ repo: 'o/r', number: 7, users: USERS, author: 'alice', hunks: { 'src/a.js': [[3, 5], [10, 12]] } });
});
afterEach(async () => github.close());

function run(script: string, args: string[], token: string, env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  const ctx = { PATH: process.env.PATH ?? '/usr/bin:/bin', GITHUB_EVENT_PATH: path.join(ws, 'event.json'), GITHUB_REPOSITORY: 'o/r', GITHUB_API_URL: github.url, GITHUB_TOKEN: token, ...env };
  const child = spawn(process.execPath, [path.join(SCRIPTS, script), ...args], { cwd: ws, env: ctx, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
}

async function post(token: string, review: object, env: Record<string, string> = {}) {
  const file = path.join(ws, `review-${Math.random().toString(36).slice(2)}.json`);
  await fs.writeFile(file, JSON.stringify({ commit_id: HEAD, comments: [], body: 'x\n<!-- spelunk:review category=c/ verdict=fail event=REQUEST_CHANGES -->', event: 'REQUEST_CHANGES', ...review }));
  return run('post-review.mjs', [file], token, env);
}

const comment = (line: number, extra: object = {}) => ({ path: 'src/a.js', line, side: 'RIGHT', body: `b\n<!-- spelunk:fingerprint=${'1'.repeat(64)}:1 -->`, ...extra });

describe('the GitHub stand-in answers as GitHub does', () => {
  it.each<[string, object, number, string]>([
    ['a comment on a line in a hunk', { comments: [comment(4)] }, 0, 'REQUEST_CHANGES, 1 inline comment(s)'],
    ['a comment on a line outside the diff: 422, not retried as COMMENT', { comments: [comment(7)] }, 1, 'must be part of the diff'],
    ['a range across two hunks: 422', { comments: [comment(11, { start_line: 4, start_side: 'RIGHT' })] }, 1, 'same hunk'],
  ])('%s', async (_name, review, code, fragment) => {
    const r = await post('ghs_workflow', review);
    expect(r.code, r.out).toBe(code);
    expect(r.out).toContain(fragment);
    expect(r.out).not.toContain('posting as COMMENT');
    expect(github.posted).toHaveLength(code === 0 ? 1 : 0);
  });

  it('lists in pages of 30 by default and at most 100, with next and last links', async () => {
    github.comments.push(...Array.from({ length: 130 }, (_, id) => ({ id, body: 'x', path: 'src/a.js', line: 4, user: { login: 'bob' } })));
    const get = (q: string) => fetch(`${github.url}/repos/o/r/pulls/7/comments${q}`, { headers: { authorization: 'Bearer ghp_bob' } });
    const first = await get('');
    expect(((await first.json()) as unknown[]).length).toBe(30);
    expect(first.headers.get('link')).toMatch(/page=2>; rel="next", <[^>]*page=5>; rel="last"/);
    expect(((await (await get('?per_page=500')).json()) as unknown[]).length).toBe(100);
    const last = await get('?per_page=100&page=2');
    expect(((await last.json()) as unknown[]).length).toBe(30);
    expect(last.headers.get('link')).toBeNull();
  });
});

describe('post-review.mjs', () => {
  it('REQUEST_CHANGES on the token owner\'s own pull request: GitHub\'s 422, then a COMMENT, and the log says COMMENT', async () => {
    const r = await post('ghp_alice', { comments: [comment(4)] });
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain("::warning::spelunk-action: GitHub refuses REQUEST_CHANGES on the token owner's own pull request; posting as COMMENT");
    expect(r.out).toContain('review posted on #7: COMMENT, 1 inline comment(s)');
    expect(github.posted.map((p) => p.event)).toEqual(['COMMENT']);
  });

  it('a review by someone else with spelunk\'s marker neither silences the summary nor is dismissed', async () => {
    const bob = await post('ghp_bob', {});
    expect(bob.code, bob.out).toBe(0);
    const ours = await post('ghs_workflow', {});
    expect(ours.out).toContain('review posted on #7: REQUEST_CHANGES');
    const pass = await post('ghs_workflow', { body: 'x\n<!-- spelunk:review category=c/ verdict=pass event=COMMENT -->', event: 'COMMENT' });
    expect(pass.code, pass.out).toBe(0);
    expect(github.reviews.map((r) => `${r.user.login}:${r.state}`)).toEqual(['bob:CHANGES_REQUESTED', 'github-actions[bot]:DISMISSED', 'github-actions[bot]:COMMENTED']);
  });
});

describe('fetch-comments.mjs: only the token\'s own comments count as posted', () => {
  const marker = (n: number) => `b\n<!-- spelunk:fingerprint=${String(n).repeat(64)}:1 -->`;
  beforeEach(() => {
    github.comments.push(
      { id: 1, body: marker(1), path: 'src/a.js', line: 4, user: { login: 'github-actions[bot]' } },
      { id: 2, body: marker(2), path: 'src/a.js', line: 4, user: { login: 'my-app[bot]' } },
      { id: 3, body: marker(3), path: 'src/a.js', line: 4, user: { login: 'alice' } },
    );
  });

  it.each<[string, string, Record<string, string>, string[]]>([
    ['the workflow token (GET /user is refused to it): github-actions[bot]', 'ghs_workflow', {}, [marker(1)]],
    ['a personal token: the login GET /user names', 'ghp_alice', {}, [marker(3)]],
    ['another GitHub App\'s token: the review-author input names its bot', 'ghs_app', { INPUT_REVIEW_AUTHOR: 'my-app[bot]' }, [marker(2)]],
  ])('%s', async (_name, token, env, bodies) => {
    const file = path.join(ws, `prev-${token}.json`);
    const r = await run('fetch-comments.mjs', [file], token, env);
    expect(r.code, r.out).toBe(0);
    expect((JSON.parse(await fs.readFile(file, 'utf8')) as Array<{ body: string }>).map((c) => c.body)).toEqual(bodies);
  });
});
