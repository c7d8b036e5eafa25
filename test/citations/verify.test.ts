import { promises as fs } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { extractCitations } from '../../src/citations/extract.js';
import { describeBad, formatCitation, verifyCitations } from '../../src/citations/verify.js';
import { useRepo } from '../support/temp-repo.js';
import { CITATION_FILES } from './citation-repo.js';
import { CITATION_ROWS, type Expected } from './citation-table.js';

const repo = useRepo(CITATION_FILES);

async function verified(text: string): Promise<Expected[]> {
  const found = await verifyCitations(repo.root, text.replaceAll('{root}', repo.root));
  return found.map((c) => [c.path, c.start_line, c.end_line, c.status]);
}

describe('the citation table (issue 9)', () => {
  it('has at least 60 forms', () => {
    expect(CITATION_ROWS.length).toBeGreaterThanOrEqual(60);
  });

  it.each(CITATION_ROWS.map((r) => [r.text, r.expected] as const))('%s', async (text, expected) => {
    const rooted = expected.map(([p, ...rest]) => [p.replaceAll('{root}', repo.root), ...rest]);
    expect(await verified(text)).toEqual(rooted);
  });
});

describe('verifyCitations', () => {
  it('gives the excerpt of the first cited line, trimmed', async () => {
    const [c] = await verifyCitations(repo.root, 'see lib/router/index.js:43-44');
    expect(c).toMatchObject({ status: 'ok', excerpt: 'var self = this;' });
  });

  it('says how many lines the file has when a line is out of range', async () => {
    const [c] = await verifyCitations(repo.root, 'lib/router/index.js:999');
    expect(describeBad(c!)).toBe('lib/router/index.js:999: line_out_of_range (the file has 200 lines)');
  });

  it('refuses a symlink that leads outside the root, as read_file does', async () => {
    await fs.symlink('/etc/hosts', path.join(repo.root, 'lib/hosts.txt'));
    try {
      const [c] = await verifyCitations(repo.root, 'see lib/hosts.txt:1 and `lib/hosts.txt`');
      expect(c).toMatchObject({ path: 'lib/hosts.txt', status: 'outside_root', excerpt: null });
    } finally {
      await fs.rm(path.join(repo.root, 'lib/hosts.txt'));
    }
  });

  it('reports a fifo as not a file without opening it', async () => {
    const { execFileSync } = await import('node:child_process');
    execFileSync('mkfifo', [path.join(repo.root, 'pipe.txt')]);
    try {
      const [c] = await verifyCitations(repo.root, 'see pipe.txt:1');
      expect(c).toMatchObject({ status: 'not_a_file' });
    } finally {
      await fs.rm(path.join(repo.root, 'pipe.txt'));
    }
  });

  it('opens only the cited files: every other file here is a fifo, which would block any read of it', async () => {
    const { execFileSync } = await import('node:child_process');
    const dir = path.join(repo.root, 'traps');
    await fs.mkdir(dir);
    try {
      await fs.writeFile(path.join(dir, 'cited.js'), 'one\ntwo\n');
      for (const name of ['a.js', 'b.js', 'index.js', 'cited.js.map']) execFileSync('mkfifo', [path.join(dir, name)]);
      const found = await verifyCitations(repo.root, 'see traps/cited.js:2 and `traps/cited.js`, near traps/');
      expect(found.map((c) => c.status)).toEqual(['ok', 'ok']);
    } finally {
      await fs.rm(dir, { recursive: true });
    }
  });

  it('returns nothing for an answer without citations', async () => {
    expect(await verifyCitations(repo.root, 'Express is a web framework.')).toEqual([]);
  });

  it('formats ranges the way answers write them', () => {
    expect(formatCitation({ path: 'a.js', start_line: 3, end_line: 9 })).toBe('a.js:3-9');
    expect(formatCitation({ path: 'a.js', start_line: 3, end_line: 3 })).toBe('a.js:3');
    expect(formatCitation({ path: 'a.js', start_line: null, end_line: null })).toBe('a.js');
  });

  it('extracts in linear time from a hostile answer (100k path-like characters, no separators)', () => {
    const hostile = `${'a/'.repeat(50_000)}:1 ${'`'.repeat(10_000)} ${'['.repeat(10_000)}`;
    const started = performance.now();
    extractCitations(hostile);
    // Not a timing assertion on the machine's speed: a quadratic scan of this input takes minutes, not seconds.
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
