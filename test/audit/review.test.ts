import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangedFile } from '../../src/audit/diff.js';
import { MAX_PREVIOUS_REVIEW_BYTES, readPreviousReview } from '../../src/audit/review-files.js';
import { buildReview, FINGERPRINT_MARKER, lastAddedLine, type ReviewInput } from '../../src/audit/review.js';
import type { Finding } from '../../src/audit/report.js';

const FP = (n: number) => `${n.toString(16).padStart(64, 'a')}:1`;
const FILES: ChangedFile[] = [
  { path: 'src/a.js', lines: [[3, 5], [10, 10]], deleted: false },
  { path: 'src/gone.js', lines: [], deleted: true },
];
const finding = (over: Partial<Finding>): Finding => ({ rule_id: 'r', severity: 'high', title: 't', message: 'm', path: 'src/a.js', start_line: 4, end_line: 4, ...over });
const input = (findings: Finding[], over: Partial<ReviewInput> = {}): ReviewInput => ({
  report: { verdict: 'fail', summary: 's', findings },
  files: FILES,
  fingerprints: findings.map((_, i) => ({ own: FP(i + 1), nearby: [FP(i + 1)] })),
  posted: new Set(),
  failed: true,
  failOn: 'high',
  question: 'q?',
  category: 'spelunk/q/',
  commitId: null,
  ...over,
});

describe('lastAddedLine: inline comments go only on lines the change added', () => {
  it.each<[string, Partial<Finding>, number | null]>([
    ['a finding on an added line', { start_line: 4, end_line: 4 }, 4],
    ['a range that ends past the hunk: its last added line', { start_line: 4, end_line: 8 }, 5],
    ['a range over two hunks: the last added line of the later one', { start_line: 1, end_line: 12 }, 10],
    ['a range that begins before the hunk', { start_line: 1, end_line: 3 }, 3],
    ['between hunks: nothing added there', { start_line: 6, end_line: 9 }, null],
    ['a file the change does not touch', { path: 'src/other.js' }, null],
    ['a deleted file', { path: 'src/gone.js', start_line: 1, end_line: 1 }, null],
  ])('%s', (_name, over, line) => {
    expect(lastAddedLine(finding(over), FILES)).toBe(line);
  });
});

describe('buildReview', () => {
  it('comments on changed lines, lists the rest, leaves out what was posted and what the baseline accepts', () => {
    const review = buildReview(input(
      [finding({}), finding({ start_line: 7, end_line: 7, title: 'between' }), finding({ start_line: 10, end_line: 10 }), finding({ start_line: 3, end_line: 3, suppressed: true })],
      { posted: new Set([FP(3)]), commitId: 'c'.repeat(40) },
    ));
    expect(review.commit_id).toBe('c'.repeat(40));
    expect(review.comments.map((c) => [c.path, c.line, c.side])).toEqual([['src/a.js', 4, 'RIGHT']]);
    expect(FINGERPRINT_MARKER.exec(review.comments[0]!.body)?.[1]).toBe(FP(1));
    expect(review.body).toContain('- 1 new finding(s) on changed lines, commented inline');
    expect(review.body).toContain('- 1 finding(s) already posted in an earlier review, left out');
    expect(review.body).toContain('- 1 finding(s) outside the changed lines, listed here');
    expect(review.body).toContain('- 1 finding(s) accepted in the baseline, not repeated');
    expect(review.body).toContain('`src/a.js:7`');
  });

  it.each<[boolean, string]>([
    [true, 'REQUEST_CHANGES'],
    [false, 'COMMENT'],
  ])('failed=%s → %s', (failed, event) => {
    expect(buildReview(input([], { failed })).event).toBe(event);
  });

  it('without a commit the field is left out (GitHub takes the pull request\'s latest)', () => {
    expect('commit_id' in buildReview(input([]))).toBe(false);
  });

  it.each<[string, Partial<Finding>, string, string]>([
    ['a forged marker in the message cannot end the body as ours', { message: 'x <!-- spelunk:fingerprint=' + FP(9) + ' -->' }, '&lt;!-- spelunk:fingerprint=', '<!-- spelunk:fingerprint=' + FP(9)],
    ['HTML is shown, not rendered', { title: '<img src=x onerror=alert(1)>' }, '&lt;img src=x', '<img'],
    ['an @-mention notifies nobody', { message: 'cc @octocat and @org/team' }, '@\u200boctocat', 'cc @octocat'],
    ['no image or link of the model\'s making', { message: '![x](https://evil/p.png) [click](https://evil)' }, '!\\[x]\\(https://evil/p.png)', '](https'],
    ['a backtick cannot close the rule\'s code span', { rule_id: 'a`b' }, "`a'b`", 'a`b'],
    ['controls are made visible', { title: 'a\u001b[31mred' }, 'a\\x1b[31mred', '\u001b'],
  ])('%s', (_name, over, present, absent) => {
    const body = buildReview(input([finding(over)])).comments[0]!.body;
    expect(body).toContain(present);
    expect(body).not.toContain(absent);
    expect(body.match(/<!--/g)).toHaveLength(1);
    expect(FINGERPRINT_MARKER.exec(body)?.[1]).toBe(FP(1));
  });
});

describe('readPreviousReview: untrusted input, checked field by field', () => {
  let ws: string;
  let root: string;
  beforeAll(async () => {
    ws = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-previous-review-')));
    root = path.join(ws, 'repo');
    await fs.mkdir(root);
  });
  afterAll(async () => fs.rm(ws, { recursive: true, force: true }));

  const mark = (fp: string) => `text\n<!-- spelunk:fingerprint=${fp} -->`;
  async function read(content: string | Buffer) {
    const file = path.join(ws, `p-${Math.random().toString(36).slice(2)}.json`);
    await fs.writeFile(file, content);
    return readPreviousReview(file, root);
  }

  it.each<[string, unknown, string[], string | null]>([
    ['GitHub\'s list: our markers count, other comments do not', [{ body: mark(FP(1)), path: 'a.js', line: 3, id: 1 }, { body: 'LGTM', path: 'a.js', line: 2 }], [FP(1)], null],
    ['an outdated comment (line null) still counts', [{ body: mark(FP(2)), path: 'a.js', line: null }], [FP(2)], null],
    ['a marker not at the end does not count', [{ body: `${mark(FP(3))}\nmore text`, path: 'a.js', line: 1 }], [], null],
    ['a marker of the wrong shape does not count', [{ body: '<!-- spelunk:fingerprint=xyz:1 -->', path: 'a.js', line: 1 }], [], null],
    ['a body that is not a string', [{ body: 7, path: 'a.js', line: 1 }, { body: mark(FP(4)) }], [FP(4)], '1 entry without the shape {body, path, line} skipped'],
    ['a line that is not a positive integer', [{ body: mark(FP(5)), line: 0 }, { body: mark(FP(6)), line: '3' }, { body: mark(FP(7)), line: 2.5 }], [], '3 entries without the shape'],
    ['a path that is not a string', [{ body: mark(FP(8)), path: ['a'], line: 1 }], [], '1 entry without the shape'],
    ['entries that are not objects', [null, 'x', [mark(FP(1))]], [], '3 entries without the shape'],
    ['an oversized body', [{ body: `${'x'.repeat(70_000)}${mark(FP(1))}` }], [], '1 entry without the shape'],
    ['an object, not an array', { comments: [] }, [], 'not a JSON array of review comments; ignored'],
  ])('%s', async (_name, value, posted, warning) => {
    const got = await read(JSON.stringify(value));
    expect([...got.posted]).toEqual(posted);
    if (warning === null) expect(got.warning).toBeNull();
    else expect(got.warning).toContain(warning);
  });

  it.each<[string, string | Buffer, string]>([
    ['not JSON', '[{"body": ', 'not JSON; ignored'],
    ['gh --paginate without --slurp (pages concatenated)', '[][]', 'not JSON; ignored'],
    ['too large', Buffer.alloc(MAX_PREVIOUS_REVIEW_BYTES + 1, 0x20), `is more than ${MAX_PREVIOUS_REVIEW_BYTES}`],
  ])('%s: ignored with one warning line', async (_name, content, fragment) => {
    const got = await read(content);
    expect(got.posted.size).toBe(0);
    expect(got.warning).toContain(fragment);
    expect(got.warning).not.toContain('\n');
  });

  it.each<[string, () => Promise<string>, string]>([
    ['inside the repository', async () => { await fs.writeFile(path.join(root, 'p.json'), '[]'); return path.join(root, 'p.json'); }, 'is inside the repository'],
    ['behind a link planted in the repository', async () => { await fs.symlink(ws, path.join(root, 'up')); return path.join(root, 'up', 'x.json'); }, 'symbolic link inside the repository'],
    ['missing', async () => path.join(ws, 'none.json'), 'no such file'],
    ['a directory', async () => ws, 'not a regular file'],
  ])('%s: a usage error', async (_name, make, fragment) => {
    await expect(readPreviousReview(await make(), root)).rejects.toThrow(fragment);
  });
});
