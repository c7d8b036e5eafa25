import { describe, expect, it } from 'vitest';
import { allowance, emptyExpansions, entryLines as entries, plan, type PlanCase } from '../support/map-plan.js';

/**
 * The map planner (src/preamble/map.ts) on trees built in memory: the core source opened below the depth limit (the
 * deeper walk asked for, what it opens, what it pays), directories that do not all fit, the reasons kept, the files.
 */
const pad = (n: number) => String(n).padStart(2, '0');

/** Source at the depth limit (core/src, web/app) beside data, docs and examples; the deeper walk finds more of each. */
const DEEP: PlanCase = {
  depth: 2,
  deepenChars: 50,
  files: ['core/src/a.ts', 'core/docs/x.md', 'core/data/d.json', 'core/data/e.json', 'web/app/b.ts', 'docs/guide/g.md', 'examples/demo/x.ts'],
  deeper: [
    'core/src/node/n1.ts', 'core/src/node/n2.ts', 'core/src/node/server/s.ts', 'core/src/client/c.ts', 'web/app/ui/u.ts',
    'core/data/more/m.json', 'docs/guide/more/p.md', 'core/src/__tests__/unit/t.spec.ts', 'core/src/__tests__/u.spec.ts',
  ],
};
const AT_LIMIT = ['core/', '  data/ (2 files)', '  docs/ (1 file)', '  src/ (1 file)', 'docs/', '  guide/ (1 file)', 'examples/', '  demo/ (1 file)', 'web/', '  app/ (1 file)'];

describe('opening the core source below the depth limit', () => {
  it('walks the source directories at the limit further, opens them, and keeps data closed with its new count', async () => {
    const p = await plan(DEEP);
    expect(p.deepened).toEqual([['core/src', 'web/app', 'core/data']]);
    expect(p.lines).toEqual([
      'core/', '  data/ (3 files)', '  docs/ (1 file)', '  src/', '    __tests__/ (2 files)', '    client/', '      c.ts', '    node/',
      '      server/ (1 file)', '      n1.ts', '      n2.ts', '    a.ts', 'docs/', '  guide/ (1 file)', 'examples/', '  demo/ (1 file)',
      'web/', '  app/', '    ui/', '      u.ts', '    b.ts',
    ]);
    expect(p.stats.dirsNamed).toBe(15);
    // Only the directories opened are read (tests below the source stay closed, unread).
    expect(p.read).toEqual(['core', 'web', 'core/src', 'web/app', 'core/src/client', 'core/src/node', 'web/app/ui', 'examples', 'docs']);
  });

  it.each([
    // Too tight to walk deeper: the demoted trees get their half of what is left, and examples/ does not fit in it.
    [198, ['core/', '  data/ (2 files)', '  docs/ (1 file)', '  src/ (1 file)', 'docs/ (1 file)', 'examples/ (1 file)', 'web/', '  app/ (1 file)']],
    // Walked, the header's note and the new counts paid; nothing more fits.
    [214, ['core/', '  data/ (3 files)', '  docs/ (1 file)', '  src/ (7 files)', 'docs/ (1 file)', 'examples/ (1 file)', 'web/', '  app/ (2 files)']],
    [262, ['core/', '  data/ (3 files)', '  docs/ (1 file)', '  src/ (7 files)', 'docs/ (1 file)', 'examples/ (1 file)', 'web/', '  app/ (2 files)']],
    [264, ['core/', '  data/ (3 files)', '  docs/ (1 file)', '  src/', '    a.ts', '    … (3 more)', 'docs/ (1 file)', 'examples/ (1 file)', 'web/', '  app/ (2 files)']],
    [492, [
      'core/', '  data/ (3 files)', '  docs/ (1 file)', '  src/', '    __tests__/ (2 files)', '    client/', '      c.ts', '    node/', '      n1.ts',
      '      n2.ts', '      … (1 more)', '    a.ts', 'docs/ (1 file)', 'examples/', '  demo/ (1 file)', 'web/', '  app/', '    ui/', '      u.ts', '    b.ts',
    ]],
  ])('at %i characters opens what its share of the budget pays for', async (budgetChars, lines) => {
    const c = { ...DEEP, budgetChars };
    const p = await plan(c);
    expect(p.lines).toEqual(lines);
    expect(p.text.length).toBeLessThanOrEqual(allowance(c, p));
  });

  it('states the --max-entries limit once however many passes meet it', async () => {
    const p = await plan({ ...DEEP, maxEntries: 9 });
    expect(p.lines).toEqual([
      'core/', '  data/ (3 files)', '  docs/ (1 file)', '  src/', '    client/ (1 file)', '    … (3 more)', 'docs/ (1 file)', 'examples/ (1 file)',
      'web/', '  app/ (2 files)',
    ]);
    const entriesNotes = p.stats.cut.filter((reason) => reason.startsWith('entries:'));
    expect(entriesNotes).toEqual(['entries: --max-entries reached, no more directories expanded']);
  });

  it('at every --max-entries from 0 to 30 names at most that many entries', async () => {
    for (let maxEntries = 0; maxEntries <= 30; maxEntries++) {
      const p = await plan({ ...DEEP, maxEntries });
      expect(entries(p.lines).length, `at ${maxEntries}`).toBeLessThanOrEqual(maxEntries);
    }
  });

  it.each([
    ['the deeper walk fails', { deepenWorks: false }, 1],
    ['no deeper walk is possible', { noDeepen: true }, 0],
  ])('stays at the limit when %s', async (_, over, calls) => {
    const p = await plan({ ...DEEP, ...over });
    expect(p.lines).toEqual(AT_LIMIT);
    expect(p.deepened).toHaveLength(calls);
  });

  it.each([
    ['the header\'s note would not fit', { budgetChars: 200, deepenChars: 200 }],
    // 42 characters are left at 200 once the levels at the limit are named.
    ['the header\'s note takes exactly what is left', { budgetChars: 200, deepenChars: 42 }],
    ['--max-entries is used up', { maxEntries: 8 }],
  ])('asks for no deeper walk when %s', async (_, over) => {
    const p = await plan({ ...DEEP, ...over });
    expect(p.deepened).toEqual([]);
    expect(p.lines).toEqual((await plan({ ...DEEP, ...over, noDeepen: true })).lines);
  });

  it('asks for the deeper walk when the header\'s note leaves a character', async () => {
    const p = await plan({ ...DEEP, budgetChars: 200, deepenChars: 41 });
    expect(p.deepened).toEqual([['core/src', 'web/app', 'core/data']]);
  });

  it('walks the 8 best-ranked directories at the limit, largest first', async () => {
    const mods = Array.from({ length: 10 }, (_, i) => `mod${pad(i)}`);
    const p = await plan({
      depth: 2,
      files: mods.flatMap((m, i) => Array.from({ length: i + 1 }, (_, k) => `${m}/${m}src/f${k}.ts`)),
      deeper: mods.map((m) => `${m}/${m}src/inner/x.ts`),
    });
    expect(p.deepened).toEqual([mods.slice(2).reverse().map((m) => `${m}/${m}src`)]);
    expect(p.lines.slice(0, 6)).toEqual(['mod00/', '  mod00src/ (1 file)', 'mod01/', '  mod01src/ (2 files)', 'mod02/', '  mod02src/']);
    expect(p.lines.filter((line) => line === '    inner/')).toHaveLength(8);
  });

  it('at every budget from 120 to 600 characters pays for the header\'s note and the new counts', async () => {
    for (let budgetChars = 120; budgetChars <= 600; budgetChars += 2) {
      const c = { ...DEEP, budgetChars };
      const p = await plan(c);
      expect(p.text.length, `at ${budgetChars}`).toBeLessThanOrEqual(allowance(c, p));
      expect(emptyExpansions(p.lines), `at ${budgetChars}`).toEqual([]);
    }
  });
});

describe('directories that do not all fit', () => {
  it('names the best-ranked that fit, skips one whose line is too long, and says what was cut', async () => {
    const c: PlanCase = {
      depth: 2,
      noDeepen: true,
      budgetChars: 110,
      files: [
        ...Array.from({ length: 9 }, (_, k) => `app/${'long-'.repeat(18)}name/f${k}.ts`),
        ...Array.from({ length: 3 }, (_, k) => `app/mid/f${k}.ts`),
        'app/low/x.txt',
        'app/tiny/y.txt',
      ],
    };
    const p = await plan(c);
    expect(p.lines).toEqual(['app/', '  low/ (1 file)', '  mid/ (3 files)', '  tiny/ (1 file)', '  … (1 more)']);
    expect(p.stats.cut).toEqual(['app/: 1 directories not named (token budget)']);
    expect(p.truncatedDirs).toBe(1);
  });

  it('keeps vendored trees closed and at most 8 reasons for /context', async () => {
    const tops = Array.from({ length: 12 }, (_, i) => `t${pad(i)}`);
    const p = await plan({ depth: 3, noDeepen: true, files: tops.flatMap((t, i) => [`${t}/vendor/v.js`, `${t}/src${pad(i)}/m.ts`]) });
    const reason = 'not expanded (vendored, generated, fixture, snapshot or CI-template tree)';
    expect(p.stats.cut).toEqual(tops.slice(0, 8).map((t) => `${t}/vendor/: ${reason}`));
    expect(p.lines.slice(0, 5)).toEqual(['t00/', '  src00/', '    m.ts', '  vendor/ (1 file, collapsed)', 't01/']);
    expect(p.read).not.toContain('t00/vendor');
  });

  it('opens the directories ranked after an empty one the instructions mention', async () => {
    const p = await plan({
      depth: 2, noDeepen: true, mentioned: ['aaa'], emptyDirs: ['aaa'], files: ['lib/sub/x.ts', 'lib/y.ts', 'web/page/p.ts'],
    });
    expect(p.lines).toEqual(['aaa/', 'lib/', '  sub/ (1 file)', '  y.ts', 'web/', '  page/ (1 file)']);
    expect(p.read).toEqual(['aaa', 'lib', 'web']);
  });

  it('leaves the key files out of the root\'s own files and its "more" count', async () => {
    const files = ['README.md', 'a.txt', 'b.txt', 'c.txt', 'lib/x.ts'];
    const p = await plan({ depth: 1, noDeepen: true, keyFiles: ['README.md'], budgetChars: 30, files });
    expect(p.lines).toEqual(['lib/ (1 file)', 'a.txt', 'b.txt', '… (1 more)']);
  });

  it('shows the core source\'s files before a demoted directory gets more than three', async () => {
    const p = await plan({
      depth: 2, noDeepen: true, budgetChars: 170,
      files: ['zsrc/keep.ts', ...Array.from({ length: 8 }, (_, k) => `core/c${k}.ts`), ...Array.from({ length: 8 }, (_, k) => `docs/d${k}.md`)],
    });
    expect(p.lines).toEqual([
      'core/', '  c0.ts', '  c1.ts', '  c2.ts', '  c3.ts', '  c4.ts', '  c5.ts', '  … (2 more, all *.ts)',
      'docs/', '  d0.md', '  d1.md', '  d2.md', '  … (5 more, all *.md)', 'zsrc/', '  keep.ts',
    ]);
    expect(p.stats.cut).toEqual(['files: some directories show only some of their files (token budget or --max-entries)']);
  });
});
