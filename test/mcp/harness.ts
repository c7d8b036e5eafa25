import { execFileSync } from 'node:child_process';
import { promises as fs, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, expect } from 'vitest';
import { startMockApi, type MockApi, type MockOptions } from '../support/mock-api.js';
import { BIN } from '../support/pty.js';

/** One test's server: the local Messages API and a real MCP client that spawned the built binary against it. */
export interface McpHarness {
  /** Starts the local Messages API (closed after the test). */
  api(opts?: MockOptions): Promise<MockApi>;
  /** Spawns `spelunk mcp -C <root>` against the started API and connects a client (closed after the test). */
  connect(extraArgs?: string[], env?: Record<string, string>): Promise<{ client: Client; transport: StdioClientTransport }>;
  /** What the server wrote on stderr so far. */
  readonly stderr: string;
}

/** A harness for the tests of one file; everything it starts is stopped after each test. */
export function useMcp(repo: { readonly root: string }): McpHarness {
  let api: MockApi | null = null;
  let client: Client | null = null;
  let stderr = '';
  afterEach(async () => {
    await client?.close();
    client = null;
    await api?.close();
    api = null;
  });
  return {
    async api(opts = {}) {
      api = await startMockApi(opts);
      return api;
    },
    async connect(extraArgs = [], env = {}) {
      if (!api) throw new Error('useMcp: start the API before connecting');
      stderr = '';
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp', '-C', repo.root, ...extraArgs],
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: path.dirname(repo.root), ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, ...env },
        stderr: 'pipe',
      });
      transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      client = new Client({ name: 'spelunk-test', version: '1.0.0' });
      await client.connect(transport);
      return { client, transport };
    },
    get stderr() {
      return stderr;
    },
  };
}

/** The structuredContent of a successful result, after checking that its text copy is the same JSON. */
export function structured(result: Awaited<ReturnType<Client['callTool']>>): Record<string, any> {
  const r = result as CallToolResult;
  expect(r.isError ?? false).toBe(false);
  // The text copy is the same object, for clients that read only text.
  expect(JSON.parse((r.content[0] as { text: string }).text)).toEqual(r.structuredContent);
  return r.structuredContent as Record<string, any>;
}

/** The text of an error result. */
export function errorText(result: Awaited<ReturnType<Client['callTool']>>): string {
  const r = result as CallToolResult;
  expect(r.isError).toBe(true);
  return (r.content[0] as { text: string }).text;
}

/**
 * Runs `body` with a 20 GB sparse file at data/huge.bin: `wc -w` over it runs for minutes, so a tool is still running
 * whenever the test looks.
 */
export async function withHugeFile(root: string, body: () => Promise<void>): Promise<void> {
  const sparse = path.join(root, 'data', 'huge.bin');
  await fs.mkdir(path.dirname(sparse), { recursive: true });
  execFileSync('/usr/bin/truncate', ['-s', '20G', sparse]);
  try {
    await body();
  } finally {
    await fs.rm(sparse, { force: true });
  }
}

/** Pids of the server's descendants that run `wc` (read from /proc: the tool's process group is its own). */
export function toolProcesses(pid: number): number[] {
  const parents = new Map<number, number>();
  const wc: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited while listing
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z') continue;
    parents.set(Number(entry), Number(ppid));
    if (comm === 'wc') wc.push(Number(entry));
  }
  // Under the kernel sandbox wc is a grandchild (bwrap, then the sandbox's init): any descendant counts.
  const descends = (child: number): boolean => {
    for (let at = parents.get(child), hops = 0; at !== undefined && hops < 16; at = parents.get(at), hops++) if (at === pid) return true;
    return false;
  };
  return wc.filter(descends);
}

export async function waitFor(check: () => boolean, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
