import { describe, expect, it } from 'vitest';
import { allowance, emptyExpansions, plan, type PlanCase } from '../support/map-plan.js';

/**
 * The map planner (src/preamble/map.ts) on trees built in memory, as the listing hands them over: which directories
 * open, what stays in a group line, the "more" lines, the budget and --max-entries kept, the deeper walk asked for.
 */
const pad = (n: number) => String(n).padStart(2, '0');
const WORDS = [
  'anchor', 'bishop', 'candle', 'dagger', 'ember', 'falcon', 'garnet', 'harbor', 'icicle', 'jigsaw', 'kettle',
  'lantern', 'meadow', 'nickel', 'oyster', 'pepper', 'quartz', 'ribbon', 'saddle', 'timber', 'umbra', 'velvet',
  'walrus', 'xenon', 'yonder', 'zephyr', 'acorn', 'basalt', 'cobalt', 'dynamo', 'easel', 'fjord', 'gravel',
  'hollow', 'indigo', 'juniper', 'kernel', 'ledger', 'marble', 'nectar', 'orchid',
];
const top = (lines: readonly string[]) => lines.filter((line) => !line.startsWith(' '));
/** Lines that name something (not "… (N more)" markers): what --max-entries caps. */
const entries = (lines: readonly string[]) => lines.filter((line) => !line.trim().startsWith('…'));

/** 40 unrelated top-level directories with one subdirectory each, and solo/ with three source files and none. */
const CROWD: PlanCase = {
  depth: 2,
  noDeepen: true,
  files: [...WORDS.slice(0, 40).map((w, i) => `${w}/sub${pad(i)}/a.txt`), 'solo/x.ts', 'solo/y.ts', 'solo/z.ts'],
};

describe('a crowd of more than 40 unrelated siblings', () => {
  it('opens every member that has subdirectories; the one left becomes its own line, the group line goes', async () => {
    const p = await plan(CROWD);
    const expected = [...WORDS.slice(0, 40).map((w) => `${w}/`), 'solo/ (3 files)'].sort();
    expect(top(p.lines)).toEqual(expected);
    WORDS.slice(0, 40).forEach((w, i) => expect(p.lines[p.lines.indexOf(`${w}/`) + 1]).toBe(`  sub${pad(i)}/ (1 file)`));
    expect(p.lines).toHaveLength(81);
    expect(p.shown).toBe(81);
    expect(p.stats.depth1).toEqual({ named: 41, total: 41 });
    expect(p.stats.depth2).toEqual({ named: 40, total: 40 });
    expect(p.stats.dirsCollapsed).toBe(0);
  });

  it('opens at most 64 members of one crowd; the rest stay in its group line', async () => {
    const p = await plan({ depth: 2, noDeepen: true, files: Array.from({ length: 70 }, (_, i) => `d${pad(i)}x/s${pad(i)}/a.txt`) });
    const tops = top(p.lines);
    expect(tops).toHaveLength(65);
    expect(tops.at(-1)).toBe('{d64x,d65x,d66x,d67x,d68x,d69x}/ 6 dirs, 70 files');
    expect(tops.slice(0, 64)).toEqual(Array.from({ length: 64 }, (_, i) => `d${pad(i)}x/`));
    expect(p.stats.dirsNamed).toBe(128);
    expect(p.stats.dirsCollapsed).toBe(6);
  });

  it('keeps examples, docs and vendored trees in the group however large they are', async () => {
    const p = await plan({
      depth: 2,
      noDeepen: true,
      files: [
        ...WORDS.slice(0, 38).map((w) => `${w}/${w}0/a.txt`),
        ...['docs', 'examples', 'vendor'].flatMap((d) => Array.from({ length: 9 }, (_, k) => `${d}/inner${k}/f.ts`)),
      ],
    });
    expect(top(p.lines).filter((line) => !/^[a-z]+\/$/.test(line))).toEqual(['{docs,examples,vendor}/ 3 dirs, 65 files']);
    expect(p.lines.some((line) => line.includes('inner'))).toBe(false);
    expect(p.lines).toHaveLength(77);
  });

  it('opens nothing at the depth limit: one group line, no directory read', async () => {
    const p = await plan({ depth: 1, noDeepen: true, files: WORDS.slice(0, 41).map((w) => `${w}/${w}0/a.txt`) });
    expect(p.lines).toEqual([`{${[...WORDS.slice(0, 41)].sort().join(',')}}/ 41 dirs, 41 files`]);
    expect(p.read).toEqual([]);
  });

  it('with a tight budget keeps the rest in the group, every member counted once', async () => {
    const c = { ...CROWD, budgetChars: 400 };
    const p = await plan(c);
    expect(p.lines).toEqual([
      'acorn/',
      '  sub26/ (1 file)',
      'anchor/',
      '  sub00/ (1 file)',
      '{{basalt,bishop,candle,cobalt,dagger,dynamo,easel,ember,falcon,fjord,garnet,gravel,harbor,hollow,icicle,indigo,jigsaw,' +
        'juniper,kernel,kettle,lantern,ledger,marble,meadow,nectar,nickel,oyster,pepper,quartz,ribbon,saddle,solo,timber,umbra},…}/ ' +
        '39 dirs, 43 files (5 more not named)',
    ]);
    expect(p.text.length).toBeLessThanOrEqual(allowance(c, p));
  });

  it.each(Array.from({ length: 24 }, (_, i) => 60 + 45 * i))('at %i characters: within budget, every member once, no empty expansion', async (budgetChars) => {
    const c = { ...CROWD, budgetChars };
    const p = await plan(c);
    expect(p.text.length).toBeLessThanOrEqual(allowance(c, p));
    expect(emptyExpansions(p.lines)).toEqual([]);
    const grouped = top(p.lines).map((line) => /^\{.*\/ (\d+) dirs/.exec(line)?.[1]).filter((n) => n !== undefined).map(Number);
    const alone = top(p.lines).filter((line) => /^[a-z]+\/( \(\d+ files?\))?$/.test(line));
    // The root holds no file: its "… (N more)" line counts directories only.
    const more = Number(/^… \((\d+) more/.exec(p.lines.at(-1)!)?.[1] ?? 0);
    expect(grouped.reduce((a, b) => a + b, 0) + alone.length + more).toBe(41);
  });

  it.each([1, 2, 3, 5, 8, 13, 30])('at --max-entries %i names at most that many entries', async (maxEntries) => {
    const p = await plan({ ...CROWD, maxEntries });
    expect(entries(p.lines).length).toBeLessThanOrEqual(maxEntries);
    expect(emptyExpansions(p.lines)).toEqual([]);
  });
});

const MEMBERS = Array.from({ length: 12 }, (_, i) => `packages/pkg-${pad(i)}`);
/** 12 workspace members of different sizes (pkg-05 the largest, with 12 source files), an empty 13th, and lib/. */
const WORKSPACE: PlanCase = {
  depth: 3,
  members: [...MEMBERS, 'packages/pkg-99'],
  emptyDirs: ['packages/pkg-99'],
  files: [
    ...MEMBERS.flatMap((m, i) => Array.from({ length: ((i * 7) % 12) + 1 }, (_, k) => `${m}/src/f${k}.ts`)),
    ...MEMBERS.map((m) => `${m}/package.json`),
    'lib/a.ts',
    'lib/b.ts',
  ],
};
const files = (n: number, indent: string) => Array.from({ length: n }, (_, k) => `f${k}.ts`).sort().map((f) => `${indent}${f}`);

describe('a collapsed group of workspace members', () => {
  it('gives the five largest members lines of their own below the group, opened, and counts them once', async () => {
    const p = await plan(WORKSPACE);
    const member = (name: string, n: number) => [`  ${name}/`, '    src/', ...files(n, '      '), '    package.json'];
    expect(p.lines).toEqual([
      'lib/', '  a.ts', '  b.ts', 'packages/', '  pkg-*/ 13 dirs, 90 files (workspace members, named above)',
      ...member('pkg-01', 8), ...member('pkg-03', 10), ...member('pkg-05', 12), ...member('pkg-08', 9), ...member('pkg-10', 11),
    ]);
    expect(p.shown).toBe(77);
    expect(p.stats.dirsNamed).toBe(7);
    expect(p.stats.members).toEqual({ named: 13, total: 13 });
  });

  it.each([
    [150, []],
    [200, ['  pkg-05/', '    package.json', '    … (1 more)']],
    [250, ['  pkg-03/ (11 files)', '  pkg-05/ (13 files)', '  pkg-10/ (12 files)']],
    [300, ['  pkg-03/ (11 files)', '  pkg-05/', '    src/ (12 files)', '    package.json', '  pkg-08/ (10 files)', '  pkg-10/ (12 files)']],
    [400, [
      '  pkg-01/ (9 files)', '  pkg-03/ (11 files)', '  pkg-05/', '    src/', '      f0.ts', '      f1.ts', '      f10.ts',
      '      … (9 more, all *.ts)', '    package.json', '  pkg-08/ (10 files)', '  pkg-10/', '    src/ (11 files)', '    package.json',
    ]],
  ])('at %i characters takes half of what is left for them and their contents', async (budgetChars, below) => {
    const c = { ...WORKSPACE, budgetChars };
    const p = await plan(c);
    expect(p.lines).toEqual(['lib/', '  a.ts', '  b.ts', 'packages/', '  pkg-*/ 13 dirs, 90 files (workspace members, named above)', ...below]);
    expect(p.text.length).toBeLessThanOrEqual(allowance(c, p));
  });

  it('at --max-entries 8 stops expanding once the members took the last entries', async () => {
    const p = await plan({ ...WORKSPACE, maxEntries: 8 });
    expect(p.lines).toEqual([
      'lib/ (2 files)', 'packages/', '  pkg-*/ 13 dirs, 90 files (workspace members, named above)',
      '  pkg-01/ (9 files)', '  pkg-03/ (11 files)', '  pkg-05/ (13 files)', '  pkg-08/ (10 files)', '  pkg-10/ (12 files)',
    ]);
    expect(p.stats.cut).toEqual(['entries: --max-entries reached, no more directories expanded']);
  });

  it('never gives an empty member a line, and puts the group line before a member named first', async () => {
    const names = Array.from({ length: 13 }, (_, i) => `pkg-${pad(i)}`);
    const p = await plan({
      depth: 2, noDeepen: true, members: names, emptyDirs: names,
      files: ['pkg-00/index.ts', 'pkg-00/util.ts', 'pkg-04/main.ts', 'pkg-07/lib.ts'],
    });
    expect(p.lines).toEqual([
      'pkg-*/ 13 dirs, 4 files (workspace members, named above)', 'pkg-00/', '  index.ts', '  util.ts', 'pkg-04/', '  main.ts', 'pkg-07/', '  lib.ts',
    ]);
    expect(p.shown).toBe(17);
  });

  it.each(Array.from({ length: 20 }, (_, i) => 100 + 40 * i))('at %i characters: within budget, no empty expansion', async (budgetChars) => {
    const c = { ...WORKSPACE, budgetChars };
    const p = await plan(c);
    expect(p.text.length).toBeLessThanOrEqual(allowance(c, p));
    expect(emptyExpansions(p.lines)).toEqual([]);
  });
});

/** Source at the depth limit (core/src, web/app) beside data, docs and examples; the deeper walk finds more of each. */
const DEEP: PlanCase = {
  depth: 2,
  deepenChars: 50,
  files: ['core/src/a.ts', 'core/docs/x.md', 'core/data/d.json', 'core/data/e.json', 'web/app/b.ts', 'docs/guide/g.md', 'examples/demo/x.ts'],
  deeper: [
    'core/src/node/n1.ts', 'core/src/node/n2.ts', 'core/src/node/server/s.ts', 'core/src/client/c.ts', 'web/app/ui/u.ts',
    'core/data/more/m.json', 'docs/guide/more/p.md',
  ],
};
const AT_LIMIT = ['core/', '  data/ (2 files)', '  docs/ (1 file)', '  src/ (1 file)', 'docs/', '  guide/ (1 file)', 'examples/', '  demo/ (1 file)', 'web/', '  app/ (1 file)'];

describe('opening the core source below the depth limit', () => {
  it('walks the source directories at the limit further, opens them, and keeps data closed with its new count', async () => {
    const p = await plan(DEEP);
    expect(p.deepened).toEqual([['core/src', 'web/app', 'core/data']]);
    expect(p.lines).toEqual([
      'core/', '  data/ (3 files)', '  docs/ (1 file)', '  src/', '    client/', '      c.ts', '    node/', '      server/ (1 file)',
      '      n1.ts', '      n2.ts', '    a.ts', 'docs/', '  guide/ (1 file)', 'examples/', '  demo/ (1 file)', 'web/', '  app/',
      '    ui/', '      u.ts', '    b.ts',
    ]);
    expect(p.stats.dirsNamed).toBe(14);
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

  it.each(Array.from({ length: 16 }, (_, i) => 120 + 20 * i))('at %i characters pays for the header\'s note and the new counts', async (budgetChars) => {
    const c = { ...DEEP, budgetChars };
    const p = await plan(c);
    expect(p.text.length).toBeLessThanOrEqual(allowance(c, p));
    expect(emptyExpansions(p.lines)).toEqual([]);
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
    expect(p.stats.cut).toEqual(tops.slice(0, 8).map((t) => `${t}/vendor/: not expanded (vendored, generated, fixture, snapshot or CI-template tree)`));
    expect(p.lines.slice(0, 5)).toEqual(['t00/', '  src00/', '    m.ts', '  vendor/ (1 file, collapsed)', 't01/']);
    expect(p.read).not.toContain('t00/vendor');
  });

  it('leaves the key files out of the root\'s own files and its "more" count', async () => {
    const p = await plan({ depth: 1, noDeepen: true, keyFiles: ['README.md'], budgetChars: 30, files: ['README.md', 'a.txt', 'b.txt', 'c.txt', 'lib/x.ts'] });
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
  });
});
