import { execFileSync } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';

/**
 * A fixture branch with fixed authors and dates (so its commits have the same ids on every machine with the same git):
 * main has an old shell injection in src/auth.js:4; `feature` adds src/search.js with a seeded SQL injection at line 3
 * and touches line 7 of auth.js. The model (the local Messages API server) reports both through report_findings.
 */
let ws: string;
let root: string;
let featureHead: string;
let api: MockApi | undefined;

const OLD = { rule_id: 'shell-injection', severity: 'high', category: 'security', title: 'User input reaches exec', message: 'login() concatenates user into a shell command', path: 'src/auth.js', start_line: 4 };
const NEW = { rule_id: 'sql-injection', severity: 'high', category: 'security', title: 'Query built from input', message: 'search() concatenates q into SQL; ping @admins', path: 'src/search.js', start_line: 3 };
const LOW = { rule_id: 'naming', severity: 'low', category: 'maintainability', title: 'Vague name', message: 'q says little', path: 'src/search.js', start_line: 2 };

function git(...args: string[]): string {
  const date = '2024-03-01T12:00:00Z';
  const env = { PATH: '/usr/bin:/bin', HOME: ws, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date };
  return execFileSync('/usr/bin/git', ['-c', 'user.name=t', '-c', 'user.email=t@e', '-c', 'init.defaultBranch=main', '-c', 'commit.gpgSign=false', ...args], { cwd: root, env, encoding: 'utf8' });
}

beforeAll(async () => {
  ws = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-audit-review-')));
  root = path.join(ws, 'repo');
  await fs.mkdir(path.join(root, 'src'), { recursive: true });
  const auth = "const { exec } = require('child_process');\n\nfunction login(user) {\n  exec('grep ' + user + ' /etc/passwd');\n}\n\nmodule.exports = { login };\n";
  await fs.writeFile(path.join(root, 'src/auth.js'), auth);
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'old code');
  git('checkout', '-q', '-b', 'feature');
  await fs.writeFile(path.join(root, 'src/search.js'), "const db = require('./db');\nfunction search(q) {\n  return db.query(\"SELECT * FROM items WHERE name = '\" + q + \"'\");\n}\nmodule.exports = { search };\n");
  await fs.writeFile(path.join(root, 'src/auth.js'), auth.replace('module.exports = { login };', 'module.exports = { login, version: 2 };'));
  git('add', '-A');
  git('commit', '-q', '-m', 'add search');
  featureHead = git('rev-parse', 'HEAD').trim();
  await fs.mkdir(path.join(ws, 'elsewhere'));
  await fs.symlink(path.join(ws, 'elsewhere'), path.join(root, 'reports'));
});
afterAll(async () => fs.rm(ws, { recursive: true, force: true }));
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function audit(args: string[], findings: object[], verdict = findings.length > 0 ? 'fail' : 'pass') {
  api = await startMockApi({ minCacheTokens: 256 });
  api.enqueue(reply(toolUse('report_findings', { verdict, summary: 'Two injections.', findings })), reply(text('Done.')));
  const run = await runCli(['audit', '-C', root, '--output-format', 'json', ...args, 'is user input used safely?'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url }, cwd: ws });
  return { run, result: run.stdout === '' ? null : JSON.parse(run.stdout) };
}

const read = async (file: string) => JSON.parse(await fs.readFile(path.join(ws, file), 'utf8'));

describe('--review-output: a GitHub review of the change, without duplicates on the next push', () => {
  it('run 1 comments on the seeded bug in the changed lines and lists the other in the body; run 2 with run 1\'s comments posts nothing new', async () => {
    const first = await audit(['--diff', 'main...feature', '--review-output', 'review.json'], [OLD, NEW]);
    expect(first.run.code, first.run.stderr).toBe(4);
    const review = await read('review.json');
    expect(Object.keys(review).sort()).toEqual(['body', 'comments', 'commit_id', 'event']);
    expect(review.commit_id).toBe(featureHead);
    expect(review.event).toBe('REQUEST_CHANGES');
    expect(review.comments).toHaveLength(1);
    const [comment] = review.comments;
    expect(comment).toMatchObject({ path: 'src/search.js', line: 3, side: 'RIGHT' });
    expect(Object.keys(comment).sort()).toEqual(['body', 'line', 'path', 'side']);
    expect(comment.body).toMatch(/^\*\*high: Query built from input\*\* · `sql-injection`/);
    expect(comment.body).toContain('ping @\u200badmins');
    const marker = /<!-- spelunk:fingerprint=([0-9a-f]{64}:1) -->$/.exec(comment.body);
    expect(marker).not.toBeNull();
    // The marker carries the fingerprint the baseline and SARIF use.
    const sarif = await audit(['--diff', 'main...feature', '--sarif', 'out.sarif'], [OLD, NEW]);
    expect(sarif.run.code).toBe(4);
    expect((await read('out.sarif')).runs[0].results[1].partialFingerprints['spelunk/v1']).toBe(marker![1]);
    expect(review.body).toContain('- 1 new finding(s) on changed lines, commented inline');
    expect(review.body).toContain('- 0 finding(s) already posted in an earlier review, left out');
    expect(review.body).toContain('- 1 finding(s) outside the changed lines, listed here');
    expect(review.body).toContain('- **high: User input reaches exec** · `src/auth.js:4` · `shell-injection`');
    expect(review.body).toContain('<!-- spelunk:review category=spelunk/is-user-input-used-safely/ verdict=fail event=REQUEST_CHANGES -->');

    // GitHub lists review comments with more fields than were posted; the next run reads that list.
    const listed = review.comments.map((c: object, i: number) => ({ id: 100 + i, user: { login: 'github-actions[bot]' }, commit_id: featureHead, original_line: 3, ...c }));
    await fs.writeFile(path.join(ws, 'previous.json'), JSON.stringify([{ id: 1, body: 'LGTM', path: 'src/auth.js', line: null }, ...listed]));
    const second = await audit(['--diff', 'main...feature', '--review-output', 'review2.json', '--previous-review', 'previous.json'], [OLD, NEW]);
    expect(second.run.code, second.run.stderr).toBe(4);
    expect(second.result.warnings).toEqual([]);
    const again = await read('review2.json');
    expect(again.comments).toEqual([]);
    expect(again.event).toBe('REQUEST_CHANGES');
    expect(again.body).toContain('- 1 finding(s) already posted in an earlier review, left out');

    // A new finding on a changed line is still posted; only the repeated one is left out.
    const third = await audit(['--diff', 'main...feature', '--review-output', 'review3.json', '--previous-review', 'previous.json', '--fail-on', 'critical'], [OLD, NEW, LOW]);
    expect(third.run.code).toBe(0);
    const third_ = await read('review3.json');
    expect(third_.event).toBe('COMMENT');
    expect(third_.comments.map((c: { path: string; line: number }) => `${c.path}:${c.line}`)).toEqual(['src/search.js:2']);
  });

  it('a finding whose range only partly was added is commented on its last added line; --diff-file takes HEAD as the commit', async () => {
    await fs.writeFile(path.join(ws, 'pr.diff'), git('diff', 'main...feature'));
    const range = { ...OLD, start_line: 4, end_line: 7, title: 'login exported' };
    const run = await audit(['--diff', 'main...feature', '--review-output', 'r.json'], [range]);
    expect(run.run.code).toBe(4);
    expect((await read('r.json')).comments.map((c: { line: number }) => c.line)).toEqual([7]);
    const fromFile = await audit(['--diff-file', 'pr.diff', '--review-output', 'r2.json'], []);
    expect(fromFile.run.code).toBe(0);
    const review = await read('r2.json');
    expect(review).toMatchObject({ commit_id: git('rev-parse', 'HEAD').trim(), event: 'COMMENT', comments: [] });
  });

  it('a bad --previous-review is one warning line and is ignored; the review is still written', async () => {
    await fs.writeFile(path.join(ws, 'bad.json'), '{"comments": []}');
    const run = await audit(['--diff', 'main...feature', '--review-output', 'r3.json', '--previous-review', 'bad.json'], [NEW]);
    expect(run.run.code).toBe(4);
    expect(run.result.warnings).toEqual([expect.stringMatching(/^--previous-review .*bad\.json: not a JSON array of review comments; ignored/)]);
    expect(run.run.stderr.split('\n').filter((l) => l.includes('--previous-review'))).toHaveLength(1);
    expect((await read('r3.json')).comments).toHaveLength(1);
  });

  it('no verdict, no review: a stale file is removed before the first request and none is written', async () => {
    await fs.writeFile(path.join(ws, 'stale.json'), '{"event":"COMMENT","comments":[]}');
    const run = await audit(['--diff', 'main...feature', '--review-output', 'stale.json'], [], 'inconclusive');
    expect(run.run.code).toBe(5);
    expect(existsSync(path.join(ws, 'stale.json'))).toBe(false);
    expect(run.run.stderr).toContain('no review written to');
    expect(run.run.stderr).toContain('(inconclusive); a stale file there was removed');
  });
});

describe('review and SARIF paths: usage errors, one line each, before any request', () => {
  it.each<[string[], string]>([
    [['--review-output', 'r.json'], '--review-output comments on the changed lines of a change: add --diff BASE'],
    [['--diff', 'main', '--previous-review', 'p.json'], '--previous-review only shapes a review: add --review-output'],
    [['--diff', 'main', '--review-output', 'repo/reports/r.json'], 'reports is a symbolic link inside the repository'],
    [['--sarif', 'repo/reports/x.sarif'], 'reports is a symbolic link inside the repository'],
    [['--diff', 'main', '--review-output', 'r.json', '--previous-review', 'repo/p.json'], 'is inside the repository, where the change being audited could edit it'],
    [['--diff', 'main', '--review-output', 'r.json', '--previous-review', 'missing.json'], '--previous-review'],
    [['--baseline', 'repo/reports/b.json', '--update-baseline'], 'reports is a symbolic link inside the repository'],
  ])('%j', async (args, fragment) => {
    const run = await runCli(['audit', '-C', root, ...args, 'q'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' }, cwd: ws });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(fragment);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(await fs.readdir(path.join(ws, 'elsewhere'))).toEqual([]);
  });

  it('--review-output without the audit subcommand is refused', async () => {
    const run = await runCli(['-C', root, '--review-output', 'r.json', 'q'], { env: { ANTHROPIC_API_KEY: 'k' }, cwd: ws });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--review-output only works with the audit subcommand');
  });
});
