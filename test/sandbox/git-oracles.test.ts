import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bothLayers, runTool } from '../support/git-layers.js';
import { makeRepo } from '../support/temp-repo.js';

/** Third red team, F6 and F7: answers that would depend on files outside the root (their existence, their lines). */
let repo: { root: string; cleanup(): Promise<void> };
let outside: string;
const git = (...args: string[]): string =>
  spawnSync('/usr/bin/git', ['-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { cwd: repo.root, env: { PATH: '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', HOME: repo.root }, encoding: 'utf8' }).stdout +
  '';
const plain = (...args: string[]): string => {
  const run = spawnSync('/usr/bin/git', ['--no-pager', ...args], { cwd: repo.root, env: { PATH: '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', HOME: repo.root }, encoding: 'utf8' });
  return run.stdout + run.stderr;
};

beforeAll(async () => {
  repo = await makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, { git: true });
  outside = path.join(path.dirname(repo.root), 'outside');
  await fs.mkdir(outside);
  await fs.writeFile(path.join(outside, 'ab.txt'), 'a.txt\nb.txt\n');
  await fs.writeFile(path.join(outside, 'ba.txt'), 'b.txt\na.txt\n');
  await fs.writeFile(path.join(outside, 'victim.txt'), 'x\n');
  await fs.writeFile(path.join(repo.root, 'a.txt'), 'a2\n');
  await fs.writeFile(path.join(repo.root, 'b.txt'), 'b2\n');
  git('commit', '-q', '-a', '-m', 'two');
  await fs.writeFile(path.join(repo.root, 'a.txt'), 'a3\n');
  await fs.writeFile(path.join(repo.root, 'b.txt'), 'b3\n');
  git('stash', '-q');
  const head = git('rev-parse', 'HEAD').trim();
  for (const [name, target] of [['wt1', path.join(outside, 'victim.txt')], ['wt2', path.join(outside, 'nope', '.git')]]) {
    const dir = path.join(repo.root, '.git', 'worktrees', name as string);
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, 'gitdir'), `${target}\n`);
    await fs.writeFile(path.join(dir, 'commondir'), '../..\n');
    await fs.writeFile(path.join(dir, 'HEAD'), `${head}\n`);
  }
});
afterAll(async () => repo.cleanup());

describe('F7: diff.orderFile from anywhere is never read', () => {
  const orders = (): string[] => [path.join(outside, 'missing'), path.join(outside, 'ab.txt'), path.join(outside, 'ba.txt')];
  bothLayers('%s: the same answer whatever order file the configuration names', ['stash show --stat', 'stash show -p', 'show --stat HEAD', 'log -p -n1', 'diff --stat HEAD~1 HEAD', 'log --stat -n1'].map((c): [string] => [c]), async (layer, command) => {
    git('config', '--unset', 'diff.orderFile');
    const reference = await runTool(repo.root, command, layer);
    for (const file of orders()) {
      git('config', 'diff.orderFile', file);
      expect(await runTool(repo.root, command, layer)).toBe(reference);
    }
    git('config', '--unset', 'diff.orderFile');
    expect(reference).toMatch(/a\.txt/);
    expect(reference).not.toMatch(/orderfile/);
  });

  it('control: plain git reads it (an existence oracle and the file\'s line order)', () => {
    git('config', 'diff.orderFile', path.join(outside, 'missing'));
    expect(plain('stash', 'show', '--stat')).toContain('failed to read orderfile');
    git('config', 'diff.orderFile', path.join(outside, 'ba.txt'));
    expect(plain('stash', 'show', '--stat')).toMatch(/b\.txt[\s\S]*a\.txt/);
    git('config', '--unset', 'diff.orderFile');
  });
});

describe('F6: worktree list says nothing about paths outside the root', () => {
  bothLayers('worktree list %s: refused without the kernel sandbox; under it both planted work trees read alike', [[''], [' --porcelain'], [' -v']], async (layer, flags) => {
    const content = await runTool(repo.root, `worktree list${flags}`, layer);
    if (layer === 'tables') return expect(content).toMatch(/runs only under the kernel sandbox/);
    const mark = (name: string): boolean => new RegExp(`${name}[^\\n]*(?:\\n(?!worktree )[^\\n]*)*prunable`).test(content);
    expect(content).toContain('victim.txt');
    expect(mark('victim\\.txt')).toBe(mark('nope'));
  });

  it('control: plain git tells the existing outside path from the missing one', () => {
    const out = plain('worktree', 'list', '--porcelain');
    expect(out).toMatch(/worktree [^\n]*nope\n[^]*?prunable/);
    expect(out).not.toMatch(/worktree [^\n]*victim\.txt\n(?:(?!worktree )[^\n]*\n)*prunable/);
  });
});
