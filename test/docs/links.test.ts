import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The README is the first screens and an index; docs/ holds the rest. A moved section must leave no dead link behind,
// every page must be reachable from the README, and the README keeps what CI and a newcomer look for first.
const ROOT = path.resolve(import.meta.dirname, '../..');
const DOCS = readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
const PAGES = ['README.md', ...DOCS];
const read = (page: string): string => readFileSync(path.join(ROOT, page), 'utf8');

/** The text outside code blocks and code spans, where a `[x](y)` is a link. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '').replace(/``[^`]*``|`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lowercase, punctuation dropped (hyphens and underscores kept), spaces as hyphens. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

function anchors(page: string): Set<string> {
  return new Set([...prose(read(page)).matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

/** Every relative link of a page: [page it is on, target file (relative to the root), anchor or ''] */
function links(page: string): Array<[string, string, string]> {
  return [...prose(read(page)).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z]+:/.test(target))
    .map((target) => {
      const [file, anchor = ''] = target.split('#') as [string, string?];
      return [page, file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file)), anchor];
    });
}

describe('README and docs/', () => {
  it('slugs headings as GitHub does', () => {
    expect(slug('The sandbox: what the tools allow and refuse')).toBe('the-sandbox-what-the-tools-allow-and-refuse');
    expect(slug('spelunk as an MCP server')).toBe('spelunk-as-an-mcp-server');
    expect(slug('Many repositories: a matrix, a category per repository')).toBe('many-repositories-a-matrix-a-category-per-repository');
  });

  it.each(PAGES)('every relative link of %s reaches a file and a heading in it', (page) => {
    const found = links(page);
    if (page === 'README.md') expect(found.length).toBeGreaterThan(DOCS.length);
    for (const [, file, anchor] of found) {
      expect(existsSync(path.join(ROOT, file)), `${page} → ${file}`).toBe(true);
      if (anchor !== '') expect([...anchors(file)], `${page} → ${file}#${anchor}`).toContain(anchor);
    }
  });

  it('the README links every page of docs/, and every page links back', () => {
    const fromReadme = new Set(links('README.md').map(([, file]) => file));
    for (const doc of DOCS) {
      expect(fromReadme, doc).toContain(doc);
      expect(links(doc).some(([, file]) => file === 'README.md'), doc).toBe(true);
    }
  });

  it('the README keeps the install and test commands and stays an index, not a manual', () => {
    const readme = read('README.md');
    expect(readme).toMatch(/\bnpm (ci|install)\b/);
    expect(readme).toMatch(/\bnpm test\b/);
    expect(readme.split('\n').length).toBeLessThan(250);
  });
});

/**
 * Paths under src/ that docs/ names from other repositories (examples of citations, locate's output, a read_file
 * call): they are not spelunk's and need not exist here. Each must still appear in docs/, so the list stays true.
 */
const OTHER_REPOSITORIES = ['src/a.ts', 'src/app.ts', 'src/router/reg-exp-router/matcher.ts', 'src/commonTest/', 'src/jvmTest/'];

/** Every `src/…` path a page names that is spelunk's kind of path: a .ts file or a folder (`src/run/`). */
function srcPaths(page: string): string[] {
  const found = [...read(page).matchAll(/(?<![\w./-])src\/[\w./-]*[\w/]/g)].map((m) => m[0]);
  return found.filter((p) => /\.ts$|\/$/.test(p));
}

/**
 * The names docs/architecture.md's source layout gives below each folder (`src/run/   ask.ts (…), cited.ts …`): a
 * name is relative to its entry's folder, or to src/ when it names another folder's file (`locate/redact.ts`).
 */
function layoutNames(): Array<[string, string]> {
  const text = read('docs/architecture.md');
  const block = text.slice(text.indexOf('## Source layout'));
  const names: Array<[string, string]> = [];
  let folder: string | null = null;
  for (const line of block.split('\n')) {
    const entry = /^src\/([\w-]+\/)?/.exec(line);
    if (entry) folder = entry[1] ? `src/${entry[1]}` : 'src/';
    else if (!/^\s{10,}/.test(line)) folder = null;
    if (folder === null) continue;
    const rest = entry ? line.slice(entry[0].length) : line;
    for (const m of rest.matchAll(/(?<![\w./-])([\w-]+(?:\/[\w-]+)*\.ts)\b/g)) names.push([folder, m[1]!]);
  }
  return names;
}

describe('docs/ names only files that exist', () => {
  it.each(DOCS)('every src/ path %s names exists', (page) => {
    for (const p of srcPaths(page).filter((p) => !OTHER_REPOSITORIES.includes(p))) {
      expect(existsSync(path.join(ROOT, p)), `${page} names ${p}`).toBe(true);
    }
  });

  it('the list of other repositories\' paths is still named in docs/', () => {
    const named = new Set(DOCS.flatMap(srcPaths));
    for (const p of OTHER_REPOSITORIES) expect(named, p).toContain(p);
  });

  it('every file the source layout of docs/architecture.md names exists, in its folder or below src/', () => {
    const names = layoutNames();
    expect(names.length).toBeGreaterThan(80);
    for (const [folder, name] of names) {
      const candidates = name.startsWith('src/') ? [name] : [path.join(folder, name), path.join('src', name)];
      const exists = candidates.some((c) => existsSync(path.join(ROOT, c)));
      expect(exists, `${folder} names ${name}`).toBe(true);
    }
  });

  it.each<[string, string, boolean]>([
    ['a path of spelunk\'s', 'see `src/agent/pricing.ts`.', true],
    ['a folder', 'in src/run/ there', true],
    ['a moved file is caught', 'one table in `src/render/pricing.ts`', true],
    ['another repository\'s example file is not a .ts path of ours', 'src/server.js:4', false],
    ['a glob is not a path', 'src/**/*.ts', false],
  ])('the path finder: %s', (_name, text, found) => {
    const matches = [...text.matchAll(/(?<![\w./-])src\/[\w./-]*[\w/]/g)].map((m) => m[0]).filter((p) => /\.ts$|\/$/.test(p));
    expect(matches.length > 0).toBe(found);
  });
});
