import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RepoIndexes } from '../../src/locate/index/store.js';
import type { Term } from '../../src/locate/query.js';
import { maskTerms, type FileHits } from '../../src/locate/hits.js';
import { search, type SearchResult } from '../../src/locate/search.js';
import { bundledRg } from '../../src/sandbox/programs.js';

export const OPTS = { timeoutMs: 30_000 };

export async function rgPath(): Promise<string> {
  const rg = await bundledRg();
  if (rg === null) throw new Error('the bundled ripgrep is missing: npm ci');
  return rg;
}

/** A fresh cache directory for one test's indexes. */
export async function cacheDir(): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-index-cache-'));
}

/** Hits as comparable data: per file, each term's count and each line's terms, sorted. */
export function shape(hits: ReadonlyMap<string, FileHits>, terms: readonly Term[]): Record<string, { counts: Record<string, number>; lines: string[] }> {
  const out: Record<string, { counts: Record<string, number>; lines: string[] }> = {};
  for (const rel of [...hits.keys()].sort()) {
    const file = hits.get(rel)!;
    const counts: Record<string, number> = {};
    terms.forEach((t, i) => {
      if (file.count(i) > 0) counts[t.text] = file.count(i);
    });
    const lines = file.lines().map(({ line, terms: mask }) => `${line}:${maskTerms(mask).map((t) => terms[t]!.text).sort().join(',')}`);
    out[rel] = { counts, lines };
  }
  return out;
}

/** Today's rg search and the index's answer for the same terms over the same tree. */
export async function both(root: string, terms: readonly Term[], indexes: RepoIndexes): Promise<{ rg: SearchResult; index: SearchResult | null }> {
  const rg = await rgPath();
  return { rg: await search(rg, root, terms, OPTS), index: await indexes.search(rg, root, terms, OPTS) };
}
