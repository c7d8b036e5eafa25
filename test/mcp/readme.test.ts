import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/args.js';
import { MCP_TOOLS } from '../../src/mcp/tools.js';

// The snippets in docs/mcp.md for adding spelunk to Claude Code, Cursor and Codex must start `spelunk mcp` as written.
const section = readFileSync(path.join(import.meta.dirname, '..', '..', 'docs', 'mcp.md'), 'utf8');

/** The `nth` (0-based) code block of language `lang` in the MCP section. */
function block(lang: string, nth = 0): string {
  const matches = [...section.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))];
  const match = matches[nth];
  if (!match) throw new Error(`no ${lang} block #${nth} in docs/mcp.md`);
  return match[1]!;
}

async function expectMcp(args: string[]): Promise<void> {
  const parsed = await parseArgs(args, 100);
  expect(parsed).toMatchObject({ kind: 'run', mcp: true, audit: false, question: null, flags: { dir: '/path/to/repo', maxBudgetUsdPerCall: 0.5 } });
}

describe('docs/mcp.md snippets', () => {
  it('Claude Code: claude mcp add … -- spelunk mcp …', async () => {
    const line = block('sh').trim();
    expect(line).toMatch(/^claude mcp add spelunk --env ANTHROPIC_API_KEY=\S+ -- spelunk /);
    await expectMcp(line.split(' -- spelunk ')[1]!.split(' '));
  });

  it('Claude Code: a .mcp.json that takes the key from the environment', async () => {
    const config = JSON.parse(block('json', 0)) as { mcpServers: { spelunk: { command: string; args: string[]; env: Record<string, string> } } };
    expect(config.mcpServers.spelunk.command).toBe('spelunk');
    expect(config.mcpServers.spelunk.env).toEqual({ ANTHROPIC_API_KEY: '${ANTHROPIC_API_KEY}' });
    await expectMcp(config.mcpServers.spelunk.args);
  });

  it('Claude Code -p: the server named in claude mcp add is allowed with --allowedTools mcp__<server>', () => {
    const server = /^claude mcp add (\S+) /.exec(block('sh').trim())![1];
    const print = block('console').trim();
    // The prompt first: since Claude Code 2.1 --allowedTools takes several values and would swallow a prompt after it.
    expect(print).toMatch(/^claude -p "[^"]+" --allowedTools (\S+)$/);
    expect(/--allowedTools (\S+)/.exec(print)![1]).toBe(`mcp__${server}`);
  });

  it('Cursor: mcpServers.spelunk in mcp.json', async () => {
    const config = JSON.parse(block('json', 1)) as { mcpServers: { spelunk: { command: string; args: string[]; env: Record<string, string> } } };
    expect(config.mcpServers.spelunk.command).toBe('spelunk');
    expect(Object.keys(config.mcpServers.spelunk.env)).toEqual(['ANTHROPIC_API_KEY']);
    await expectMcp(config.mcpServers.spelunk.args);
  });

  it('Codex: [mcp_servers.spelunk] in config.toml', async () => {
    const toml = block('toml');
    expect(toml).toMatch(/^\[mcp_servers\.spelunk\]\ncommand = "spelunk"\n/);
    expect(toml).toMatch(/\ntool_timeout_sec = \d+\n/);
    await expectMcp(JSON.parse(/\nargs = (\[.*\])\n/.exec(toml)![1]!) as string[]);
  });

  it('the table lists every tool the server lists, and the count in words is right', () => {
    const rows = [...section.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1]);
    expect(rows).toEqual(MCP_TOOLS.map((t) => t.name));
    const words = ['one', 'two', 'three', 'four', 'five'];
    expect(section).toContain(`allows all ${words[MCP_TOOLS.length - 1]}`);
    expect(section).not.toMatch(/all (two|three|five) tools|allows all (two|three|five)\b/);
  });
});
