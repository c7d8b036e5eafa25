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
