import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { extractCitations } from '../../src/citations/extract.js';
import { citationRecord, describeBad, verifyCitations } from '../../src/citations/verify.js';
import { useRepo } from '../support/temp-repo.js';

// Citations of a file as it was at a commit (`abc1234:path:line`, as the git tool names commits) are checked in
// git's object store: the first commit's src/limit.js has 3 lines, the work tree's has 6; src/old.js exists only in
// the first commit.
const repo = useRepo({ 'src/limit.js': 'const max = 10;\nfunction rateLimit(req) {\n  return max;\n', 'src/old.js': 'module.exports = 1;\n' }, { git: true });
let first = '';
let second = '';

function git(...args: string[]): string {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: repo.root, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' };
  return execFileSync('git', args, { cwd: repo.root, env, encoding: 'utf8' }).trim();
}

beforeAll(async () => {
  first = git('rev-parse', '--short=7', 'HEAD');
  await fs.writeFile(path.join(repo.root, 'src/limit.js'), 'const max = 10;\nfunction rateLimit(req) {\n  if (!req) return 0;\n  return max;\n}\nmodule.exports = rateLimit;\n');
  await fs.rm(path.join(repo.root, 'src/old.js'));
  git('commit', '-q', '-am', 'limit: guard');
  second = git('rev-parse', 'HEAD');
});

const status = async (text: string) => (await verifyCitations(repo.root, text)).map(citationRecord);

describe('citations at a commit (abc1234:path:line)', () => {
  it('are extracted with their commit; a hex-looking word without a digit is not a commit', () => {
    expect(extractCitations('At 1a2b3c4:src/a.ts:12 and `deadbe7:lib/x.js`.').map((c) => [c.commit, c.path, c.startLine])).toEqual([
      ['1a2b3c4', 'src/a.ts', 12],
      ['deadbe7', 'lib/x.js', null],
    ]);
    expect(extractCitations('defaced:src/a.ts:3').map((c) => c.commit)).toEqual([]);
    expect(extractCitations('1a2b3c4:5d6e7f8:src/a.ts:3')).toEqual([]);
  });

  it.each<[string, (f: string, s: string) => string, Record<string, unknown>]>([
    ['a line that exists at the commit (the work tree has it too)', (f) => `${f}:src/limit.js:2`, { status: 'ok', excerpt: 'function rateLimit(req) {' }],
    ['a line past the end at the commit, though the work tree has it', (f) => `${f}:src/limit.js:5`, { status: 'line_out_of_range' }],
    ['the line one past the end at the commit (a final newline starts no line)', (f) => `${f}:src/limit.js:4`, { status: 'line_out_of_range', excerpt: null }],
    ['the last line at the commit', (f) => `${f}:src/limit.js:3`, { status: 'ok', excerpt: 'return max;' }],
    ['a line that exists only at the later commit', (_f, s) => `${s}:src/limit.js:5-6`, { status: 'ok', excerpt: '}' }],
    ['a file deleted since, cited at the commit that had it', (f) => `${f}:src/old.js:1`, { status: 'ok', excerpt: 'module.exports = 1;' }],
    ['a file that the commit does not have', (_f, s) => `${s}:src/old.js:1`, { status: 'missing_file' }],
    ['a commit the repository does not have', () => '0123abc:src/limit.js:1', { status: 'missing_file' }],
    ['a path leading out of the root', (f) => `${f}:../secret.txt:1`, { status: 'outside_root' }],
    ['a directory with a line', (f) => `${f}:src/:1`, { status: 'not_a_file' }],
    ['a quote that is not near the lines at the commit', (f) => `${f}:src/limit.js:1 \`if (!req) return 0;\``, { status: 'quote_mismatch' }],
    ['a quote that is', (_f, s) => `${s}:src/limit.js:2 \`if (!req) return 0;\``, { status: 'ok' }],
    ['a one-line citation quoting more lines than the slack', (_f, s) => `${s}:src/limit.js:1:\n\n\`\`\`js\nconst max = 10;\nfunction rateLimit(req) {\n  if (!req) return 0;\n  return max;\n}\nmodule.exports = rateLimit;\n\`\`\`\nThat is all`, { status: 'ok' }],
  ])('%s', async (_name, cite, expected) => {
    const [record] = await status(`See ${cite(first, second)}.`);
    expect(record).toMatchObject({ path: expect.any(String), commit: expect.stringMatching(/^[0-9a-f]{7,40}$/), ...expected });
  });

  it('says what is wrong, naming the commit', async () => {
    const [unknown] = await verifyCitations(repo.root, 'See 0123abc:src/limit.js:1.');
    expect(describeBad(unknown!)).toBe('0123abc:src/limit.js:1: missing_file (no commit 0123abc in this repository)');
    const [gone] = await verifyCitations(repo.root, `See ${second.slice(0, 7)}:src/old.js:1.`);
    expect(describeBad(gone!)).toBe(`${second.slice(0, 7)}:src/old.js:1: missing_file (no such file at ${second.slice(0, 7)})`);
  });

  it('are never hyperlinked: the file on disk is not the one cited', async () => {
    const [c] = await verifyCitations(repo.root, `See ${first}:src/limit.js:2.`);
    expect(c).toMatchObject({ status: 'ok', abs: null });
  });

  it('run no program the repository configures: a filter and a textconv driver stay unrun', async () => {
    const marker = path.join(path.dirname(repo.root), 'ran');
    const script = path.join(path.dirname(repo.root), 'evil.sh');
    await fs.writeFile(script, `#!/bin/sh\ntouch ${marker}\ncat\n`, { mode: 0o755 });
    await fs.writeFile(path.join(repo.root, '.git', 'info', 'attributes'), '* filter=evil diff=evil\n');
    git('config', 'filter.evil.clean', script);
    git('config', 'filter.evil.smudge', script);
    git('config', 'diff.evil.textconv', script);
    try {
      expect((await status(`See ${first}:src/limit.js:2.`))[0]).toMatchObject({ status: 'ok' });
      await expect(fs.access(marker)).rejects.toThrow();
    } finally {
      await fs.rm(path.join(repo.root, '.git', 'info', 'attributes'));
    }
  });
});
