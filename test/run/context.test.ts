import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config.js';
import { renderContext } from '../../src/run/ask.js';
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
