import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config.js';
import { renderContext } from '../../src/run/context.js';
import { openSession } from '../../src/run/session.js';

const temps: string[] = [];
afterAll(async () => {
  await Promise.all(temps.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

/** A git work tree (`.git` is all findWorkTree needs) with CLAUDE.md at its top and the root one level below. */
async function workTree(): Promise<string> {
  const top = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-context-')));
  temps.push(top);
  const files: Record<string, string> = {
    '.git/HEAD': 'ref: refs/heads/main\n',
    'CLAUDE.md': 'Tools are in app/tools.\n',
    'app/AGENTS.md': 'Run the tests.\n',
    'app/package.json': JSON.stringify({ workspaces: ['packages/*'] }),
    'app/packages/one/package.json': '{"name":"one"}',
    'app/packages/two/package.json': '{"name":"two"}',
    'app/vendor/lib/x.js': '',
    'app/tools/cmd/main.ts': '',
    ...Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`app/big/b${String(i).padStart(2, '0')}/f.ts`, ''])),
    ...Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`app/src/m${String(i).padStart(2, '0')}/index.ts`, ''])),
  };
  for (const [rel, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(top, rel)), { recursive: true });
    await fs.writeFile(path.join(top, rel), content);
  }
  return path.join(top, 'app');
}

function configFor(root: string, mapTokens: number): Config {
  return {
    root, model: 'claude-sonnet-5-5', maxTurns: 25, maxTokens: 16000, depth: 3, maxEntries: null, mapTokens,
    toolTimeoutMs: 30_000, verbose: false, thinking: false, showThinking: false, color: false, debug: false,
    interactive: false, outputFormat: 'text', maxBudgetUsd: null, timeoutMs: null, audit: null, apiKey: 'k', baseURL: 'http://127.0.0.1:9',
    effort: null, quiet: false, mcp: null, session: { persist: false, resume: null }, verifyCitations: 'report', render: true, editorUrl: null, sandboxMode: 'auto',
  };
}

describe('/context and the session', () => {
  it('lists every instructions file loaded, outermost first, and exposes them on the session', async () => {
    const root = await workTree();
    const session = await openSession(configFor(root, 2000));
    expect(session.instructionFiles).toEqual(['../CLAUDE.md', 'AGENTS.md']);
    const context = renderContext(session, configFor(root, 2000));
    expect(context).toMatch(/^instructions {2}\.\.\/CLAUDE\.md, 24 bytes; AGENTS\.md, 15 bytes$/m);
    expect(session.system[2]!.text).toContain('<repository-file path="../CLAUDE.md" bytes="24">\nTools are in app/tools.\n</repository-file>');
  });

  it('ranks what an ancestor file mentions, re-rooted: app/tools in ../CLAUDE.md is tools/ here', async () => {
    const root = await workTree();
    const session = await openSession(configFor(root, 200));
    expect(session.listing.text).toMatch(/\ntools\/\n {2}cmd\/ \(1 file\)\n/);
    // The larger big/ is cut for it, not the other way round.
    expect(session.listing.map!.cut).toContainEqual(expect.stringMatching(/^big\/: \d+ directories not named \(token budget\)$/));
    expect(session.listing.map!.cut.some((reason) => reason.startsWith('tools/'))).toBe(false);
  });

  it('shows the map budget use: tokens, directories named and collapsed, coverage, what was cut and why', async () => {
    const root = await workTree();
    const config = configFor(root, 300);
    const session = await openSession(config);
    const context = renderContext(session, config);
    const map = session.listing.map!;
    expect(map.tokens).toBeLessThanOrEqual(300);
    expect(context).toContain(
      `map           ~${map.tokens} of 300 tokens · ${map.dirsNamed} directories named, ${map.dirsCollapsed} in collapsed groups · depth 1 5/5, depth 2 ${map.depth2.named}/${map.depth2.total} named · 2 workspace members (package.json workspaces)`,
    );
    expect(map.dirsCollapsed).toBeGreaterThanOrEqual(40);
    expect(context).toMatch(/^ {2}cut {9}vendor\/: not expanded \(vendored, generated, fixture, snapshot or CI-template tree\)$/m);
    expect(context).toContain('listing       ');
    expect(context).toContain('--map-tokens 300');
  });
});

describe('/context and stderr say what the git tool reads, or why not', () => {
  const gitIn = (cwd: string, ...args: string[]) =>
    execFileSync('/usr/bin/git', ['-c', 'user.name=t', '-c', 'user.email=t@e', '-c', 'init.defaultBranch=main', ...args], { cwd, env: { PATH: '/usr/bin:/bin', HOME: cwd, GIT_CONFIG_NOSYSTEM: '1' }, stdio: 'ignore' });

  it('a root below a work tree: offered, confined to the root, and one warning says what is read', async () => {
    const top = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-context-sub-')));
    temps.push(top);
    await fs.mkdir(path.join(top, 'pkg'));
    await fs.writeFile(path.join(top, 'pkg', 'a.ts'), 'export {};\n');
    gitIn(top, 'init', '-q');
    const root = path.join(top, 'pkg');
    const session = await openSession(configFor(root, 300));
    expect(renderContext(session, configFor(root, 300))).toContain(`git           history of the repository at ${top}, confined to pkg/ (files outside this root are never shown)`);
    expect(session.warnings).toContain(`git history: the repository at ${top}, confined to pkg/ (only the history of files under this root)`);
  });

  it('a repository refused for an alternate outside it: not offered, and stderr says why', async () => {
    const top = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-context-alt-')));
    temps.push(top);
    gitIn(top, 'init', '-q');
    await fs.writeFile(path.join(top, '.git', 'objects', 'info', 'alternates'), '/usr/share\n');
    const session = await openSession(configFor(top, 300));
    expect(renderContext(session, configFor(top, 300))).toMatch(/^git {11}not offered: an objects\/info\/alternates entry points outside/m);
    expect(session.warnings).toContainEqual(expect.stringMatching(/^git history is not offered: an objects\/info\/alternates entry points outside/));
  });

  it('a linked worktree: offered, reading its repository outside the root, said once', async () => {
    const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-context-wt-')));
    temps.push(base);
    const main = path.join(base, 'main');
    await fs.mkdir(main);
    await fs.writeFile(path.join(main, 'a.ts'), 'export {};\n');
    gitIn(main, 'init', '-q');
    gitIn(main, 'add', '-A');
    gitIn(main, 'commit', '-qm', 'init');
    gitIn(main, 'worktree', 'add', '-q', path.join(base, 'linked'));
    const root = path.join(base, 'linked');
    const session = await openSession(configFor(root, 300));
    expect(session.registry.names()).toContain('git');
    expect(renderContext(session, configFor(root, 300))).toMatch(new RegExp(`^git {11}history of the repository at ${path.join(main, '.git')} \\(a linked worktree\\)$`, 'm'));
    expect(session.warnings.filter((w) => w.startsWith('git'))).toEqual([`git history: this root is a linked worktree; the git tool reads its repository at ${path.join(main, '.git')} (read-only; nothing else outside the root)`]);
  });
});
