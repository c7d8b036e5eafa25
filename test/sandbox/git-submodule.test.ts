import { execFileSync, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useSandbox } from '../../src/sandbox/exec.js';
import { TABLES_ONLY } from '../../src/sandbox/kernel.js';
import { bothLayers, runTool } from '../support/git-layers.js';
import {
  clearMarkers,
  configure,
  makeSubmodulePlant,
  markersLeft,
  VICTIM_AUTHOR,
  VICTIM_CONTENT,
  VICTIM_MESSAGE,
  type SubmodulePlant,
} from '../support/submodule-plant.js';

/**
 * Third red team, F1 and F2: git enters a submodule. With `diff.submodule=diff` it starts a git inside the
 * submodule, which reads the submodule's own configuration and attributes and runs its diff drivers; with `log` (or
 * `submodule.recurse` for grep) it reads another repository's history and files. The git tool must never enter a
 * submodule, in either layer: each row runs the real tool under the tables alone (what macOS and machines without
 * user namespaces get) and under the kernel sandbox (skipped where bwrap cannot run). Control rows run plain git on
 * the same plant and show that each vector is live.
 */
let plant: SubmodulePlant;

beforeAll(async () => {
  plant = await makeSubmodulePlant();
});
afterAll(async () => {
  useSandbox(TABLES_ONLY);
  await plant.cleanup();
});
afterEach(async () => {
  for (const key of ['diff.submodule', 'submodule.recurse', 'submodule.vsub.active', 'submodule.vsub.url']) configure(plant, 'super', key, null);
  for (const key of ['diff.pwn.command', 'diff.pwn.textconv', 'diff.external']) configure(plant, 'sub', key, null);
  await clearMarkers(plant);
});

/** Plain git, none of spelunk's options: the control that shows a vector is live. stdout and stderr together. */
function plainGit(args: string[]): string {
  const run = spawnSync('/usr/bin/git', ['--no-pager', ...args], {
    cwd: plant.root,
    env: { PATH: '/usr/bin:/bin', HOME: plant.base, GIT_CONFIG_NOSYSTEM: '1' },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return `${run.stdout}${run.stderr}`;
}

/** The submodule's drivers (F1 and its variants): a diff command, a textconv, diff.external; each leaves a marker. */
const DRIVERS: Array<[string, string, (p: SubmodulePlant) => string, string]> = [
  ['diff.<drv>.command', 'diff.pwn.command', (p) => p.command('cmd'), 'cmd'],
  ['diff.<drv>.textconv', 'diff.pwn.textconv', (p) => p.command('tc', 'cat'), 'tc'],
  ['diff.external', 'diff.external', (p) => p.command('ext'), 'ext'],
];
/** Every history form of the tool that diffs a commit range holding the gitlink change. */
const DIFFING = ['show HEAD', 'log -p -n1', 'diff HEAD~1 HEAD', 'log -p --stat -n1', 'show --word-diff=plain HEAD', 'diff -U0 HEAD~1..HEAD -- sub'];

describe('F1: a submodule whose git directory is inside the root runs nothing (diff.submodule=diff)', () => {
  const rows = DRIVERS.flatMap(([name, key, value, marker]) => DIFFING.map((command): [string, string, string, (p: SubmodulePlant) => string, string] => [command, name, key, value, marker]));
  bothLayers('%s with the submodule\'s %s: no program runs, the gitlink change is shown as two commit ids', rows, async (layer, command, _name, key, value, marker) => {
    configure(plant, 'super', 'diff.submodule', 'diff');
    configure(plant, 'sub', key, value(plant));
    const content = await runTool(plant.root, command, layer);
    expect(content).not.toContain('PWNED');
    expect(content).not.toContain('cannot run');
    expect(await markersLeft(plant)).toEqual([]);
    // Under the tables the gitlink's change is shown (two commit ids); the kernel's diff also ignores submodules.
    if (layer === 'tables') expect(content).toMatch(/diff --git a\/sub b\/sub|^ sub \|/m);
    expect(marker).not.toBe('');
  });

  it.each(DRIVERS)('control: plain git show HEAD runs the submodule\'s %s', async (_name, key, value, marker) => {
    configure(plant, 'super', 'diff.submodule', 'diff');
    configure(plant, 'sub', key, value(plant));
    expect(plainGit(['show', '--no-ext-diff', '--no-textconv', 'HEAD'])).toContain(`PWNED-${marker}`);
    expect(await markersLeft(plant)).toEqual([marker]);
  });
});

describe('F2: a submodule whose git directory is another repository outside the root is never read', () => {
  const rows: Array<[string, string, Array<[string, string]>]> = [
    ...['show HEAD', 'log -p -n1', 'diff HEAD~1 HEAD', 'log -p --first-parent -n2'].flatMap((command): Array<[string, string, Array<[string, string]>]> => [
      [command, 'diff.submodule=log', [['diff.submodule', 'log']]],
      [command, 'diff.submodule=diff', [['diff.submodule', 'diff']]],
    ]),
    ['grep -n VICTIM HEAD', 'submodule.recurse=true, vsub active', [['submodule.recurse', 'true'], ['submodule.vsub.active', 'true'], ['submodule.vsub.url', './vsub']]],
    ['grep -n -e VICTIM -e Subproject HEAD -- vsub', 'submodule.recurse=true, vsub active', [['submodule.recurse', 'true'], ['submodule.vsub.active', 'true'], ['submodule.vsub.url', './vsub']]],
  ];
  bothLayers('%s with %s: nothing of the other repository, not even whether it exists', rows, async (layer, command, _name, settings) => {
    for (const [key, value] of settings) configure(plant, 'super', key, value);
    const content = await runTool(plant.root, command, layer);
    for (const secret of [VICTIM_MESSAGE, VICTIM_AUTHOR, VICTIM_CONTENT, plant.victim, 'not a git repository']) expect(content).not.toContain(secret);
  });

  it.each<[string, string[], Array<[string, string]>, string]>([
    ['diff.submodule=log: its commit messages and authors', ['show', 'HEAD'], [['diff.submodule', 'log']], VICTIM_MESSAGE],
    ['submodule.recurse=true: its files, through grep', ['grep', '-n', 'VICTIM', 'HEAD'], [['submodule.recurse', 'true'], ['submodule.vsub.active', 'true'], ['submodule.vsub.url', './vsub']], VICTIM_CONTENT],
  ])('control: plain git reads the other repository (%s)', (_name, args, settings, secret) => {
    for (const [key, value] of settings) configure(plant, 'super', key, value);
    expect(plainGit(args)).toContain(secret);
  });
});

describe('submodule git directories: ignored (never entered), wherever they are and whatever they hold', () => {
  // The decision: git is kept out of every submodule (diff.submodule=short, --submodule=short, submodule.recurse=false,
  // grep --no-recurse-submodules), so a submodule's git directory is never opened and the metadata checks do not walk
  // it. A FIFO where git would read proves it: an entered submodule would wait out the time limit.
  let fifoRoot: string;
  beforeAll(async () => {
    fifoRoot = path.join(plant.base, 'fifo-repo');
    const outside = path.join(plant.base, 'fifo-gitdir');
    await fs.mkdir(path.join(fifoRoot, 'in'), { recursive: true });
    await fs.mkdir(path.join(fifoRoot, 'out'), { recursive: true });
    const run = (...args: string[]): string =>
      execFileSync('/usr/bin/git', ['-c', 'user.name=t', '-c', 'user.email=t@e', '-c', 'init.defaultBranch=main', ...args], { cwd: fifoRoot, env: { PATH: '/usr/bin:/bin', HOME: plant.base, GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' });
    run('init', '-q');
    await fs.writeFile(path.join(fifoRoot, 'a.txt'), 'x\n');
    await fs.writeFile(path.join(fifoRoot, '.gitmodules'), '[submodule "in"]\n\tpath = in\n\turl = ./in\n[submodule "out"]\n\tpath = out\n\turl = ./out\n');
    run('add', 'a.txt', '.gitmodules');
    run('update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},in`, '--cacheinfo', `160000,${'2'.repeat(40)},out`);
    run('commit', '-q', '-m', 'c1');
    run('update-index', '--cacheinfo', `160000,${'3'.repeat(40)},in`, '--cacheinfo', `160000,${'4'.repeat(40)},out`);
    run('commit', '-q', '-m', 'c2');
    run('config', 'diff.submodule', 'log');
    run('config', 'submodule.recurse', 'true');
    run('config', 'submodule.in.active', 'true');
    run('config', 'submodule.out.active', 'true');
    // Planted last: git's own commit above would wait on them too.
    for (const dir of [path.join(fifoRoot, '.fifogit'), outside]) {
      await fs.mkdir(path.join(dir, 'objects'), { recursive: true });
      await fs.mkdir(path.join(dir, 'refs'), { recursive: true });
      for (const name of ['HEAD', 'config', 'commondir']) execFileSync('/usr/bin/mkfifo', [path.join(dir, name)]);
    }
    await fs.writeFile(path.join(fifoRoot, 'in', '.git'), 'gitdir: ../.fifogit\n');
    await fs.writeFile(path.join(fifoRoot, 'out', '.git'), `gitdir: ${outside}\n`);
  });

  bothLayers('%s: answers at once, both gitlinks shown as commit ids', ['show HEAD', 'log -p -n1', 'diff HEAD~1 HEAD', 'grep -n x HEAD', 'ls-tree -r HEAD'].map((c): [string] => [c]), async (layer, command) => {
    const content = await runTool(fifoRoot, command, layer, 10_000);
    expect(content).not.toMatch(/timed out|not a git repository/);
    // The kernel's diff ignores submodules altogether (KERNEL_RELAXED); everywhere else the gitlink is shown.
    if (!(layer === 'kernel' && command.startsWith('diff'))) expect(content).toMatch(/Subproject commit 3{40}|HEAD:a\.txt:1:x|160000 commit 3{40}\tin/);
  });

  it('control: plain git enters the submodule and waits on the FIFO', () => {
    const out = execFileSync('/bin/sh', ['-c', 'timeout 3 /usr/bin/git --no-pager show HEAD; echo "exit $?"'], { cwd: fifoRoot, env: { PATH: '/usr/bin:/bin', HOME: plant.base, GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' });
    expect(out).toContain('exit 124');
  });
});
