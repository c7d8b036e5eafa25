import { describe, expect, it } from 'vitest';
import { allowance, emptyExpansions, entryLines as entries, plan, topLines as top, type PlanCase } from '../support/map-plan.js';

/**
 * The map planner (src/preamble/map.ts) on trees built in memory, as the listing hands them over: crowds of siblings
 * and workspace members — which directories open, what stays in a group line, the budget and --max-entries kept.
 * map-planner-limits.test.ts: the source opened below the depth limit, cuts and files.
 */
const pad = (n: number) => String(n).padStart(2, '0');
const WORDS = [
  'anchor', 'bishop', 'candle', 'dagger', 'ember', 'falcon', 'garnet', 'harbor', 'icicle', 'jigsaw', 'kettle',
  'lantern', 'meadow', 'nickel', 'oyster', 'pepper', 'quartz', 'ribbon', 'saddle', 'timber', 'umbra', 'velvet',
  'walrus', 'xenon', 'yonder', 'zephyr', 'acorn', 'basalt', 'cobalt', 'dynamo', 'easel', 'fjord', 'gravel',
  'hollow', 'indigo', 'juniper', 'kernel', 'ledger', 'marble', 'nectar', 'orchid',
];

/** 40 unrelated top-level directories with one subdirectory each, and solo/ with three source files and none. */
const CROWD: PlanCase = {
  depth: 2,
  noDeepen: true,
  files: [...WORDS.slice(0, 40).map((w, i) => `${w}/sub${pad(i)}/a.txt`), 'solo/x.ts', 'solo/y.ts', 'solo/z.ts'],
};
/** 41 unrelated top-level directories, each with a subdirectory of two files and a file of its own. */
const CROWD_ALL: PlanCase = {
  depth: 2,
  noDeepen: true,
  files: WORDS.flatMap((w, i) => [`${w}/sub${pad(i)}/a.txt`, `${w}/sub${pad(i)}/b.txt`, `${w}/f.txt`]),
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
    expect(tops.at(-1)).toBe('{d64x,d65x,d66x,d67x,d68x,d69x}/ 6 dirs, 6 files');
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
    expect(top(p.lines).filter((line) => !/^[a-z]+\/$/.test(line))).toEqual(['{docs,examples,vendor}/ 3 dirs, 27 files']);
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
        '39 dirs, 41 files (5 more not named)',
    ]);
    expect(p.text.length).toBeLessThanOrEqual(allowance(c, p));
    // basalt/ was tried and went back to the group: no reason is kept for a cut that is not shown.
    expect(p.stats.cut).toEqual([]);
  });

  it('counts in the group line only the files of the members left in it', async () => {
    const lines = (await plan({ ...CROWD_ALL, budgetChars: 1992 })).lines;
    expect(top(lines).at(-1)).toBe('{yonder,zephyr}/ 2 dirs, 6 files');
    expect(top(lines)).toHaveLength(40);
  });

  it('drops the group line once every member has a line of its own', async () => {
    const c = { ...CROWD_ALL, budgetChars: 2056 };
    const p = await plan(c);
    expect(top(p.lines)).toEqual(WORDS.map((w) => `${w}/`).sort());
    expect(p.lines.filter((line) => line === '  f.txt')).toHaveLength(1);
    expect(p.text.length).toBeLessThanOrEqual(allowance(c, p));
  });

  it('reads no member once the budget is used up, and reads those it tries', async () => {
    // At 278 characters the group line takes the budget exactly; at 310 solo/ (no subdirectories) and acorn/ are tried.
    expect((await plan({ ...CROWD, budgetChars: 278 })).read).toEqual([]);
    expect((await plan({ ...CROWD, budgetChars: 310 })).read).toEqual(['solo', 'acorn']);
  });

  it('pulls first from the crowd whose members rank higher (source files), wherever it lies', async () => {
    const p = await plan({
      depth: 3, noDeepen: true, mentioned: ['big'], budgetChars: 652,
      files: [
        ...WORDS.map((w, i) => `${w}/sub${pad(i)}/a.txt`),
        ...WORDS.flatMap((w, i) => [`big/${w}x/in${pad(i)}/m.ts`, `big/${w}x/in${pad(i)}/n.ts`]),
      ],
    });
    expect(p.lines).toEqual([
      '{{acorn,anchor,basalt,bishop,candle,cobalt,dagger,dynamo,easel,ember,falcon,fjord,garnet,gravel,harbor,hollow,icicle,indigo,jigsaw,' +
        'juniper,kernel,kettle,lantern,ledger,marble,meadow,nectar,nickel,orchid,oyster,pepper,quartz,ribbon,saddle},…}/ 41 dirs, 41 files (7 more not named)',
      'big/',
      '  acornx/',
      '    in26/ (2 files)',
      '  {{anchorx,basaltx,bishopx,candlex,cobaltx,daggerx,dynamox,easelx,emberx,falconx,fjordx,garnetx,gravelx,harborx,hollowx,iciclex,' +
        'indigox,jigsawx,juniperx,kernelx,kettlex,lanternx,ledgerx,marblex,meadowx,nectarx,nickelx,orchidx,oysterx},…}/ 40 dirs, 80 files (11 more not named)',
    ]);
  });

  it('gives the files what the member left alone no longer takes', async () => {
    const notes = Array.from({ length: 30 }, (_, k) => `note-${pad(k)}.txt`);
    const p = await plan({ ...CROWD, files: [...CROWD.files, ...notes], budgetChars: 1992 });
    expect(top(p.lines).slice(-4)).toEqual(['yonder/', 'zephyr/', 'note-00.txt', '… (29 more, all note-*.txt)']);
    expect(top(p.lines)).toContain('solo/ (3 files)');
  });

  it('at every budget from 60 to 1,200 characters: within budget, every member once, none taken out for nothing', async () => {
    for (let budgetChars = 60; budgetChars <= 1_200; budgetChars += 2) {
      const c = { ...CROWD, budgetChars };
      const p = await plan(c);
      const at = `at ${budgetChars}`;
      expect(p.text.length, at).toBeLessThanOrEqual(allowance(c, p));
      expect(emptyExpansions(p.lines), at).toEqual([]);
      const groups = top(p.lines).filter((line) => line.startsWith('{'));
      const grouped = groups.reduce((sum, line) => sum + Number(/\/ (\d+) dirs/.exec(line)![1]), 0);
      const own = top(p.lines).filter((line) => /^[a-z]+\/$/.test(line));
      const closed = top(p.lines).filter((line) => /^[a-z]+\/ \(\d+ files?\)$/.test(line));
      // The root holds no file: its "… (N more)" line counts directories only.
      const more = Number(/^… \((\d+) more/.exec(p.lines.at(-1)!)?.[1] ?? 0);
      expect(grouped + own.length + closed.length + more, at).toBe(41);
      // A member leaves the group only to be opened; the last one left becomes a line of its own instead of a group.
      expect(closed.length, at).toBe(groups.length === 0 && closed.length === 1 ? 1 : 0);
      expect(p.stats.cut.filter((reason) => !reason.startsWith('./: ')), at).toEqual([]);
    }
  });

  it('at every --max-entries from 0 to 90 names at most that many entries', async () => {
    for (let maxEntries = 0; maxEntries <= 90; maxEntries++) {
      const p = await plan({ ...CROWD, maxEntries });
      expect(entries(p.lines).length, `at ${maxEntries}`).toBeLessThanOrEqual(maxEntries);
      expect(emptyExpansions(p.lines), `at ${maxEntries}`).toEqual([]);
    }
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
    [164, ['  pkg-05/ (13 files)']],
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

  it('names the largest directory first when only one fits', async () => {
    expect((await plan({ ...WORKSPACE, budgetChars: 30 })).lines).toEqual(['packages/ (90 files)', '… (1 more)']);
  });

  it('at every --max-entries from 0 to 80 names at most that many entries', async () => {
    for (let maxEntries = 0; maxEntries <= 80; maxEntries++) {
      const p = await plan({ ...WORKSPACE, maxEntries });
      expect(entries(p.lines).length, `at ${maxEntries}`).toBeLessThanOrEqual(maxEntries);
    }
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
    expect(p.read).toEqual(['pkg-00', 'pkg-04', 'pkg-07']);
  });

  /** Two groups of members: libs/ (2 to 11 source files each) outranks apps/ (2 each). */
  const TWO_GROUPS: PlanCase = {
    depth: 3,
    members: [...Array.from({ length: 10 }, (_, i) => `apps/app-${pad(i)}`), ...Array.from({ length: 10 }, (_, i) => `libs/lib-${pad(i)}`)],
    files: [
      ...Array.from({ length: 10 }, (_, i) => [`apps/app-${pad(i)}/main.ts`, `apps/app-${pad(i)}/src/x.ts`]).flat(),
      ...Array.from({ length: 10 }, (_, i) => Array.from({ length: i + 2 }, (_, k) => `libs/lib-${pad(i)}/src/f${k}.ts`)).flat(),
    ],
    deeper: Array.from({ length: 10 }, (_, i) => `libs/lib-${pad(i)}/src/deep/d.ts`),
  };

  it('highlights the members of the higher-ranked group first', async () => {
    expect((await plan({ ...TWO_GROUPS, budgetChars: 220 })).lines).toEqual([
      'apps/', '  app-*/ 10 dirs, 20 files (workspace members, named above)',
      'libs/', '  lib-*/ 10 dirs, 65 files (workspace members, named above)', '  lib-09/ (11 files)',
    ]);
  });

  it('walks deeper the 8 directories at the limit that rank highest with their parents', async () => {
    const p = await plan({ ...TWO_GROUPS, budgetChars: 1004 });
    expect(p.deepened).toEqual([[
      'libs/lib-09/src', 'libs/lib-08/src', 'libs/lib-07/src', 'libs/lib-06/src', 'libs/lib-05/src', 'apps/app-00/src', 'apps/app-01/src', 'apps/app-02/src',
    ]]);
  });

  it('at every budget from 100 to 900 characters: within budget, no empty expansion', async () => {
    for (let budgetChars = 100; budgetChars <= 900; budgetChars += 4) {
      const c = { ...WORKSPACE, budgetChars };
      const p = await plan(c);
      expect(p.text.length, `at ${budgetChars}`).toBeLessThanOrEqual(allowance(c, p));
      expect(emptyExpansions(p.lines), `at ${budgetChars}`).toEqual([]);
    }
  });
});
