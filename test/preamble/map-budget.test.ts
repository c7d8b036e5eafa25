import { rgPath } from '@vscode/ripgrep';
import { describe, expect, it } from 'vitest';
import { buildListing } from '../../src/preamble/listing.js';
import { planMap, type MapPlanInput } from '../../src/preamble/map.js';
import { summarise, TreeCollector } from '../../src/preamble/tree.js';
import { useRepo } from '../support/temp-repo.js';

const pad = (n: number) => String(n).padStart(2, '0');

/** Three top-level directories, each with subdirectories and files, and root files: every level can be cut. */
const tree = useRepo(
  Object.fromEntries(
    [...Array.from({ length: 30 }, (_, i): [string, string] => [`root-${pad(i)}-${'y'.repeat(i)}.txt`, ''])].concat(['alpha', 'beta', 'gamma'].flatMap((top) => [
      ...Array.from({ length: 6 }, (_, i): [string, string] => [`${top}/sub${pad(i)}/file${pad(i)}.ts`, '']),
      ...Array.from({ length: 12 }, (_, i): [string, string] => [`${top}/note-${pad(i)}-${'x'.repeat(i * 3)}.md`, '']),
    ])),
  ),
);

describe('--max-entries', () => {
  it('once exhausted, stops expanding: the directories named last keep their file counts and get no "more" line', async () => {
    const listing = await buildListing(tree.root, { depth: 3, rgPath, maxEntries: 3 });
    const lines = listing.text.split('\n').slice(1);
    expect(lines).toEqual(['alpha/ (18 files)', 'beta/ (18 files)', 'gamma/ (18 files)', '… (30 more, all root-*.txt)']);
    expect(listing.shown).toBe(3);
  });

  it.each([4, 5, 9, 12])('at %i entries names at most that many, and every directory left closed keeps its count', async (maxEntries) => {
    const listing = await buildListing(tree.root, { depth: 3, rgPath, maxEntries });
    expect(listing.shown).toBeLessThanOrEqual(maxEntries);
    const lines = listing.text.split('\n').slice(1);
    // A directory line without a count was expanded: something below it is named, or its "more" line says why not.
    lines.forEach((line, i) => {
      if (!/^ *[^ …][^ ]*\/$/.test(line)) return;
      const indent = line.length - line.trimStart().length;
      const next = lines[i + 1] ?? '';
      expect(next.length - next.trimStart().length, `${line} is expanded but names nothing`).toBeGreaterThan(indent);
      expect(next.trim().startsWith('…'), `${line} is expanded but names nothing`).toBe(false);
    });
  });
});

describe('the token budget', () => {
  // Every budget from tight to loose: a plan that forgot to reserve a "… (N more)" line overflows at some of them.
  it.each(Array.from({ length: 40 }, (_, i) => 80 + 5 * i))('keeps room for each "more" line at %i tokens', async (mapTokens) => {
    const listing = await buildListing(tree.root, { depth: 3, rgPath, mapTokens });
    expect(listing.text.length).toBeLessThanOrEqual(mapTokens * 4);
  });
});

describe('planMap with --max-entries exhausted', () => {
  /** `tops` top-level directories, each with two subdirectories holding a file (named apart: a crowd, not a shape). */
  function input(tops: number, maxEntries: number) {
    const collector = new TreeCollector(200, () => false);
    for (let i = 0; i < tops; i++) for (const sub of ['lib', 'src']) collector.add(`top${pad(i)}/${sub}${pad(i)}/main.ts`);
    summarise(collector.tree);
    const read: string[] = [];
    const plan: MapPlanInput = {
      tree: collector.tree, depth: 3, maxEntries, budgetChars: 100_000, hints: { mentioned: new Set(), workspace: new Set() },
      keyFiles: new Set(), workspaceNamed: new Set(), memberPaths: [], discover: (rel) => read.push(rel),
    };
    return { plan, read };
  }

  it.each([
    ['3 directories, 3 entries', 3, 3],
    ['45 directories in a crowd, 1 entry', 45, 1],
  ])('%s: reads no directory for expansion, keeps the counts and says why', async (_, tops, maxEntries) => {
    const { plan, read } = input(tops, maxEntries);
    const result = await planMap(plan);
    expect(read).toEqual([]);
    expect(result.lines.every((line) => !line.startsWith(' '))).toBe(true);
    expect(result.lines.join('\n')).toContain(tops === 3 ? 'top00/ (2 files)' : ' dirs, 90 files');
    expect(result.stats.cut.filter((reason) => reason.includes('token budget'))).toEqual([]);
  });
});
