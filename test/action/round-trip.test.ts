import { execFileSync, spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeGitHub, type FakeGitHub } from '../support/github-api.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { BIN } from '../support/pty.js';

/**
 * The action's scripts, run as the action runs them (node, environment variables, GITHUB_OUTPUT), against the local
 * Messages API server and a local stand-in for GitHub's API, on a fixture pull request: a seeded SQL injection in the
 * changed lines and an old shell injection outside them. Push 1 posts one inline comment and requests changes; push 2
 * (the same findings) posts nothing; push 3 (the model gives the same finding a range one line longer) posts nothing;
 * push 4 (fixed: the audit passes) posts a passing summary and dismisses the changes-requested review.
 */
const SCRIPTS = path.resolve('scripts/action');
const TOKEN = 'ghs_test_token';
const OLD = { rule_id: 'shell-injection', severity: 'high', category: 'security', title: 'User input reaches exec', message: 'login() concatenates user into a shell command', path: 'src/auth.js', start_line: 4 };
const NEW = { rule_id: 'sql-injection', severity: 'high', category: 'security', title: 'Query built from input', message: 'search() concatenates q into SQL', path: 'src/search.js', start_line: 3 };
const QUESTION = 'Is user input used safely?';

let ws: string;
let root: string;
let head: string;
let api: MockApi;
let github: FakeGitHub;

function git(...args: string[]): string {
  const env = { PATH: '/usr/bin:/bin', HOME: ws, GIT_CONFIG_NOSYSTEM: '1' };
  return execFileSync('/usr/bin/git', ['-c', 'user.name=t', '-c', 'user.email=t@e', '-c', 'init.defaultBranch=main', '-c', 'commit.gpgSign=false', ...args], { cwd: root, env, encoding: 'utf8' });
}

/**
 * Stands in for `node dist/spelunk.js`: records the argv and environment names the action passed, then runs the real
 * built binary. `--sandbox MODE` is passed on where this build has the flag (issue 21) and bubblewrap works here;
 * otherwise it is recorded but not passed on, so the rest of the round trip still runs.
 */
const WRAPPER = `import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
const args = process.argv.slice(2);
writeFileSync(process.env.SPELUNK_TEST_RECORD, JSON.stringify({ args, env: Object.keys(process.env) }));
const help = spawnSync(process.execPath, [${JSON.stringify(BIN)}, '--help'], { encoding: 'utf8' }).stdout;
const at = args.indexOf('--sandbox');
const bwrap = spawnSync('bwrap', ['--ro-bind', '/usr', '/usr', '--symlink', 'usr/bin', '/bin', '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64', '--dev', '/dev', '--unshare-all', '/usr/bin/true']).status === 0;
const pass = (help.includes('--sandbox') && bwrap) || at < 0 ? args : [...args.slice(0, at), ...args.slice(at + 2)];
const run = spawnSync(process.execPath, [${JSON.stringify(BIN)}, ...pass], { stdio: 'inherit' });
process.exit(run.status ?? 1);
`;

beforeAll(async () => {
  ws = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-action-')));
  root = path.join(ws, 'repo');
  await fs.mkdir(path.join(root, 'src'), { recursive: true });
  await fs.writeFile(path.join(root, 'src/auth.js'), "const { exec } = require('child_process');\n\nfunction login(user) {\n  exec('grep ' + user + ' /etc/passwd');\n}\n\nmodule.exports = { login };\n");
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'old code');
  git('update-ref', 'refs/remotes/origin/main', 'HEAD');
  git('checkout', '-q', '-b', 'feature');
  await fs.writeFile(path.join(root, 'src/search.js'), "const db = require('./db');\nfunction search(q) {\n  return db.query(\"SELECT * FROM items WHERE name = '\" + q + \"'\");\n}\nmodule.exports = { search };\n");
  git('add', '-A');
  git('commit', '-q', '-m', 'add search');
  head = git('rev-parse', 'HEAD').trim();
  await fs.mkdir(path.join(ws, 'runner-temp'));
  await fs.writeFile(path.join(ws, 'event.json'), JSON.stringify({ action: 'synchronize', pull_request: { number: 7, head: { sha: head }, base: { ref: 'main' } } }));
  await fs.writeFile(path.join(ws, 'spelunk-wrapper.mjs'), WRAPPER);
  api = await startMockApi({ minCacheTokens: 256 });
  github = await startFakeGitHub({ repo: 'o/r', number: 7, users: { [TOKEN]: { login: 'github-actions[bot]', installation: true } }, author: 'alice', hunks: { 'src/search.js': [[1, 5]] } });
  // Someone else's comments, enough for two pages of 100; one copies a marker of spelunk's form, which must not count.
  github.comments.push(...Array.from({ length: 101 }, (_, id) => ({ id, body: `nit ${id}`, path: 'src/search.js', line: 1 + (id % 5), user: { login: 'alice' } })));
  github.comments.push({ id: 500, body: `quiet\n<!-- spelunk:fingerprint=${'0'.repeat(64)}:1 -->`, path: 'src/search.js', line: 3, user: { login: 'alice' } });
});
afterAll(async () => {
  await api.close();
  await github.close();
  await fs.rm(ws, { recursive: true, force: true });
});

interface ScriptRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function script(name: string, args: string[], env: Record<string, string>): Promise<ScriptRun> {
  const child = spawn(process.execPath, [path.join(SCRIPTS, name), ...args], { cwd: ws, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** One push: the action's three script steps in order, as action.yml runs them, with the model's report. */
async function push(n: number, report: object = { verdict: 'fail', summary: 'An injection in the change.', findings: [OLD, NEW] }) {
  const ctx = { GITHUB_EVENT_PATH: path.join(ws, 'event.json'), GITHUB_REPOSITORY: 'o/r', GITHUB_API_URL: github.url, GITHUB_TOKEN: TOKEN, RUNNER_TEMP: path.join(ws, 'runner-temp') };
  const previous = path.join(ws, 'runner-temp', 'spelunk-previous-review.json');
  const fetched = await script('fetch-comments.mjs', [previous], ctx);
  expect(fetched.code, fetched.stdout + fetched.stderr).toBe(0);
  api.enqueue(reply(toolUse('report_findings', report)), reply(text('Done.')));
  const outputs = path.join(ws, `outputs-${n}.txt`);
  const record = path.join(ws, `record-${n}.json`);
  const audit = await script('audit.mjs', [], {
    ...ctx,
    GITHUB_OUTPUT: outputs,
    ANTHROPIC_API_KEY: 'k',
    ANTHROPIC_BASE_URL: api.url,
    INPUT_QUESTION: QUESTION,
    INPUT_FAIL_ON: 'high',
    INPUT_POST_REVIEW: 'true',
    INPUT_SANDBOX: 'required',
    INPUT_WORKING_DIRECTORY: root,
    SPELUNK_PREVIOUS_REVIEW: previous,
    SPELUNK_BIN: path.join(ws, 'spelunk-wrapper.mjs'),
    SPELUNK_TEST_RECORD: record,
  });
  expect(audit.code, audit.stdout + audit.stderr).toBe(0);
  expect(audit.stdout, audit.stdout).not.toContain('::error::');
  const out = Object.fromEntries((await fs.readFile(outputs, 'utf8')).trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  const posted = await script('post-review.mjs', [out['review-file']!], ctx);
  return { fetched, audit, out, posted, recorded: JSON.parse(await fs.readFile(record, 'utf8')) as { args: string[]; env: string[] } };
}

describe('the action\'s scripts, end to end, offline', () => {
  it('fail → the same fail → the range moved → pass: one review each time the state changes, and the old one dismissed', { timeout: 240_000 }, async () => {
    const first = await push(1);
    expect(first.recorded.args).toEqual(expect.arrayContaining(['--sandbox', 'required', '--diff', 'origin/main...HEAD', '--previous-review']));
    expect(first.recorded.env).not.toContain('GITHUB_TOKEN');
    expect(first.recorded.env).not.toContain('INPUT_QUESTION');
    expect(first.out).toMatchObject({ 'exit-code': '4', verdict: 'fail', category: 'spelunk/is-user-input-used-safely/' });
    expect(JSON.parse(await fs.readFile(first.out['sarif-file']!, 'utf8')).runs[0].results).toHaveLength(2);
    expect(first.posted.code, first.posted.stdout + first.posted.stderr).toBe(0);
    expect(first.posted.stderr).toContain('review posted on #7: REQUEST_CHANGES, 1 inline comment(s)');
    expect(github.posted).toHaveLength(1);
    const review = github.posted[0] as { commit_id: string; event: string; body: string; comments: Array<{ path: string; line: number; side: string }> };
    expect(review.commit_id).toBe(head);
    expect(review.event).toBe('REQUEST_CHANGES');
    expect(review.comments.map((c) => `${c.path}:${c.line}:${c.side}`)).toEqual(['src/search.js:3:RIGHT']);
    expect(review.body).toContain('- 1 finding(s) outside the changed lines, listed here');
    expect(review.body).toMatch(/<!-- spelunk:review category=spelunk\/is-user-input-used-safely\/ verdict=fail event=REQUEST_CHANGES -->$/);
    // Paging was followed: 102 earlier comments on two pages of 100; the installation token asked who it is and was refused.
    expect(github.requests.filter((r) => r.startsWith('GET /repos/o/r/pulls/7/comments'))).toEqual(['GET /repos/o/r/pulls/7/comments?per_page=100', 'GET /repos/o/r/pulls/7/comments?per_page=100&page=2']);
    expect(first.fetched.stderr).toContain('102 review comment(s) on #7, 0 of them by github-actions[bot]');

    const second = await push(2);
    // Only the bot's own comment is read back: alice's, and her copied marker, are not.
    expect(JSON.parse(await fs.readFile(path.join(ws, 'runner-temp', 'spelunk-previous-review.json'), 'utf8'))).toHaveLength(1);
    expect(JSON.parse(await fs.readFile(second.out['review-file']!, 'utf8')).comments).toEqual([]);
    expect(second.posted.code).toBe(0);
    expect(second.posted.stdout).toContain('::notice::spelunk-action: no review posted: nothing new');
    expect(github.posted).toHaveLength(1);

    const third = await push(3, { verdict: 'fail', summary: 'An injection in the change.', findings: [OLD, { ...NEW, start_line: 2, end_line: 4 }] });
    expect(JSON.parse(await fs.readFile(third.out['review-file']!, 'utf8')).comments).toEqual([]);
    expect(third.posted.stdout).toContain('no review posted: nothing new');
    expect(github.posted).toHaveLength(1);

    const fourth = await push(4, { verdict: 'pass', summary: 'Queries are parameterised now.', findings: [] });
    expect(fourth.out).toMatchObject({ 'exit-code': '0', verdict: 'pass' });
    expect(fourth.posted.code, fourth.posted.stdout + fourth.posted.stderr).toBe(0);
    expect(github.posted).toHaveLength(2);
    expect(github.posted[1]).toMatchObject({ event: 'COMMENT', comments: [] });
    expect((github.posted[1] as { body: string }).body).toContain('verdict=pass event=COMMENT -->');
    expect(github.reviews.map((r) => r.state)).toEqual(['DISMISSED', 'COMMENTED']);
    expect(github.requests).toContain(`PUT /repos/o/r/pulls/7/reviews/${github.reviews[0]!.id}/dismissals`);
  });

  it('a token GitHub refuses: fetch-comments warns and writes [], so the audit still runs', async () => {
    const previous = path.join(ws, 'bad-token.json');
    const run = await script('fetch-comments.mjs', [previous], { GITHUB_EVENT_PATH: path.join(ws, 'event.json'), GITHUB_REPOSITORY: 'o/r', GITHUB_API_URL: github.url, GITHUB_TOKEN: 'wrong' });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^::warning::could not list the pull request's review comments \(GET .*HTTP 401/);
    expect(await fs.readFile(previous, 'utf8')).toBe('[]\n');
  });
});
