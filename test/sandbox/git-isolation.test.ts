import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLOR_KEYS, COLUMN_KEYS } from '../../src/sandbox/git.js';
import { hideCredentials, hideUrl } from '../../src/tools/git.js';
import { bothLayers, KERNEL, runTool, WHY_SKIPPED } from '../support/git-layers.js';
import { makeRepo } from '../support/temp-repo.js';

/**
 * Third red team, F13 and F16 and their siblings: remote URLs' secrets, and colour the repository's configuration turns
 * on (a command-specific key wins over color.ui; column layout starts a `git column` child).
 */
let repo: { root: string; cleanup(): Promise<void> };
const git = (...args: string[]): string =>
  spawnSync('/usr/bin/git', ['-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { cwd: repo.root, env: { PATH: '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', HOME: repo.root }, encoding: 'utf8' }).stdout;

beforeAll(async () => {
  repo = await makeRepo({ 'a.txt': 'a\nb\n' }, { git: true });
  await import('node:fs/promises').then((fs) => fs.writeFile(`${repo.root}/a.txt`, 'a\nc\nd  \n'));
  git('commit', '-q', '-a', '-m', 'two');
  for (const tag of ['v1', 'v2', 'v3']) git('tag', tag);
  for (const key of [...COLOR_KEYS, 'color.blame']) git('config', key, 'always');
  git('config', 'color.pager', 'true');
  for (const key of COLUMN_KEYS) git('config', key, 'always');
  git('config', 'blame.coloring', 'highlightRecent');
  git('config', 'diff.colorMoved', 'zebra');
  git('config', 'log.decorate', 'full');
});
afterAll(async () => repo.cleanup());

describe('F16: colour from the repository\'s configuration never reaches the output', () => {
  const ANSI = /\x1b|\[(?:\d+;)*\d*m/;
  bothLayers('%s: no ANSI sequence', [
    'log -p -n2', 'show HEAD', 'diff HEAD~1 HEAD', 'log --graph --oneline', 'grep -n a HEAD', 'blame HEAD -- a.txt', 'branch --list -v', 'tag --list',
    'show-ref', 'reflog', 'shortlog -sn', 'log --stat -n1', 'diff --stat HEAD~1 HEAD', 'log -p --word-diff=plain -n1',
  ].map((c): [string] => [c]), async (layer, command) => {
    const content = await runTool(repo.root, command, layer);
    expect(content).not.toMatch(ANSI);
    expect(content).not.toMatch(/Command refused/);
  });

  bothLayers('tag --list with column.tag=always: one tag a line (no `git column` child laid them out)', [[]], async (layer) => {
    expect(await runTool(repo.root, 'tag --list', layer)).toMatch(/^v1\nv2\nv3\n/);
  });

  it('every colour switch and column key of the installed git is overridden (a newer git adds rows here)', () => {
    const run = spawnSync('/usr/bin/git', ['help', '--config'], { encoding: 'utf8' });
    if (run.status !== 0) return expect(run.status).not.toBe(0);
    const keys = run.stdout.split('\n');
    const colours = keys.filter((k) => /^color\.[A-Za-z]+$/.test(k) && k !== 'color.pager');
    expect(colours.length).toBeGreaterThan(5);
    expect([...COLOR_KEYS]).toEqual(expect.arrayContaining(colours));
    expect([...COLUMN_KEYS]).toEqual(expect.arrayContaining(keys.filter((k) => /^column\.[A-Za-z]+$/.test(k))));
  });

  it('control: plain git colours every one of them', () => {
    expect(git('log', '-p', '-n1')).toMatch(/\x1b\[/);
    expect(git('-c', 'color.ui=never', 'log', '-p', '-n1')).toMatch(/\x1b\[/);
    expect(git('tag', '--list')).toMatch(/v1 +v2 +v3/);
  });
});

describe('F13: remote URLs keep no secret', () => {
  it.each<[string, string]>([
    ['https://alice:ghp_TOKEN@example.com/r.git', 'https://***@example.com/r.git'],
    ['https://u:p@ss@host/r.git', 'https://***@host/r.git'],
    ['https://u:SEC RET4@host/r', 'https://***@host/r'],
    ['https://u:SEC/RET5@host/r', 'https://***@host/r'],
    ['https://u:SEC?RET6@host/r', 'https://***@host/r'],
    ['https://u:SEC#RET7@host/r', 'https://***@host/r'],
    ['https://host/r.git?private_token=glpat-SECRET1', 'https://host/r.git?private_token=***'],
    ['https://host/r.git?a=1&SECRET&b=2', 'https://host/r.git?a=***&***&b=***'],
    ['https://host/r.git#tok=SECRET2', 'https://host/r.git#***'],
    ['https://u:p@host/r?x=a@b#f', 'https://***@b#***'],
    ['tok-SECRET10@host:r.git', '***@host:r.git'],
    ['ssh://git@host/r.git', 'ssh://***@host/r.git'],
    ['/srv/git/r.git', '/srv/git/r.git'],
    ['https://host/r.git', 'https://host/r.git'],
  ])('%s → %s', (url, shown) => {
    expect(hideUrl(url)).toBe(shown);
  });

  it.each<[string, boolean, string]>([
    ['origin\thttps://u:SEC\tRET9@host/r (fetch)\n', true, 'origin\thttps://***@host/r (fetch)\n'],
    ['nl\thttps://u:pa\nMIDSECRET\nss@host/r (fetch)\n', true, '[a line of a remote URL that holds a line break: hidden]\n[a line of a remote URL that holds a line break: hidden]\n[a line of a remote URL that holds a line break: hidden]\n'],
    ['origin\nupstream\n', false, 'origin\nupstream\n'],
  ])('remote output %j (verbose %s)', (text, verbose, shown) => {
    expect(hideCredentials(text, verbose)).toBe(shown);
  });

  const REMOTES: Array<[string, string]> = [
    ['at', 'https://u:p@SECRETa@host.example/r.git'], ['space', 'https://u:SEC RETb@host.example/r'], ['slash', 'https://u:SEC/RETc@host.example/r'],
    ['query', 'https://host.example/r.git?private_token=glpat-SECRETd'], ['frag', 'https://host.example/r.git#tok=SECRETe'],
    ['nl', 'https://u:SEC\nRETf@host.example/r'], ['tab', 'https://u:SEC\tRETg@host.example/r'],
  ];
  bothLayers('remote -v with passwords holding @, space, /, a line break, a tab, and tokens in query and fragment', [[]], async (layer) => {
    for (const [name, url] of REMOTES) git('config', `remote.${name}.url`, url);
    try {
      const content = await runTool(repo.root, 'remote -v', layer);
      if (layer === 'tables') return expect(content).toContain('kernel sandbox');
      expect(content).not.toMatch(/SEC|RET/);
      expect(content).toContain('at\thttps://***@host.example/r.git (fetch)');
      expect(content).toContain('query\thttps://host.example/r.git?private_token=*** (fetch)');
    } finally {
      for (const [name] of REMOTES) git('remote', 'remove', name);
    }
  });
  it('the kernel row above runs where bwrap works', () => expect(KERNEL !== null || WHY_SKIPPED !== '').toBe(true));
});
