import { describe, expect, it } from 'vitest';
import { sessionTools } from '../../src/tools/index.js';
import { createBashTool } from '../../src/tools/bash.js';
import { readFileTool } from '../../src/tools/read-file.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { WHITELIST } from '../../src/sandbox/programs.js';

// The tool definitions are the first bytes of every request's cached prefix: a change here is a reviewed diff and a
// visible prompt-cache change (principle 10). A fixed program map keeps the snapshot independent of the machine.
// Built from WHITELIST (the policy tables' keys), so a program added to the tables shows up in the snapshot.
const programs = new Map(WHITELIST.map((p) => [p, `/usr/bin/${p}`]));

describe('tool definitions sent to the model', () => {
  it('match the reviewed snapshot (ask and audit)', async () => {
    // The real list the session uses, so a tool added there shows up here as a reviewed snapshot change.
    const ask = new ToolRegistry(sessionTools(programs, null)).definitions();
    const audit = new ToolRegistry(sessionTools(programs, { report: null, warnings: [] })).definitions();
    await expect(`${JSON.stringify({ ask, audit }, null, 2)}\n`).toMatchFileSnapshot('__snapshots__/tool-definitions.json');
  });

  it('the git tool, offered when the root is a confined repository, matches its reviewed snapshot', async () => {
    const withGit = new ToolRegistry(sessionTools(programs, null, '/usr/bin/git')).definitions();
    expect(withGit.map((t) => t.name)).toEqual(['read_file', 'bash', 'git']);
    await expect(`${JSON.stringify(withGit[2], null, 2)}\n`).toMatchFileSnapshot('__snapshots__/git-tool-definition.json');
  });

  it('list only the programs that are installed', () => {
    const [, bash] = new ToolRegistry([readFileTool, createBashTool(new Map([['rg', '/x/rg'], ['ls', '/bin/ls']]))]).definitions();
    expect(bash!.description).toContain('Available programs: rg, ls.');
    expect(bash!.description.split('\n')[0]).not.toContain('tree');
  });
});

describe('bash when a program cannot start', () => {
  it('is an infrastructure failure (the run must not exit 0), not the model’s mistake', async () => {
    const tool = createBashTool(new Map([['ls', '/nonexistent/ls']]));
    const outcome = await tool.run({ command: 'ls' }, { root: '/tmp', signal: new AbortController().signal, timeoutMs: 5000 });
    expect(outcome).toMatchObject({ isError: true, infrastructure: true });
    expect(outcome.summary).toContain('could not start');
  });
});

describe('a tool that crashes inside spelunk', () => {
  it('comes back as an infrastructure failure, never thrown, so the run cannot exit 0', async () => {
    const crashing = { ...readFileTool, name: 'crash', run: async () => { throw new Error('boom'); } };
    const outcome = await new ToolRegistry([crashing]).dispatch('crash', { path: 'a' }, { root: '/tmp', signal: new AbortController().signal, timeoutMs: 1000 });
    expect(outcome).toEqual({ content: 'crash failed: boom', summary: 'failed: boom', isError: true, infrastructure: true });
  });
});

describe('bash feeds the read-only manifest', () => {
  it('reports the real path of every confined operand and path value to ctx.onRead, and nothing for a refused command', async () => {
    const { makeRepo } = await import('../support/temp-repo.js');
    const repo = await makeRepo({ 'src/a.ts': 'a\n', 'pats.txt': 'a\n' });
    try {
      const tool = createBashTool(new Map([['grep', '/usr/bin/grep'], ['cat', '/usr/bin/cat']]));
      const reads: string[] = [];
      const ctx = { root: repo.root, signal: new AbortController().signal, timeoutMs: 5000, onRead: (abs: string) => reads.push(abs) };
      await tool.run({ command: 'grep -f pats.txt src/a.ts' }, ctx);
      expect(reads).toEqual([`${repo.root}/pats.txt`, `${repo.root}/src/a.ts`]);
      reads.length = 0;
      await tool.run({ command: 'cat src/a.ts /etc/passwd' }, ctx);
      expect(reads).toEqual([]);
    } finally {
      await repo.cleanup();
    }
  });
});
