import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { reply, startMockApi, text, toolUse, type Reply } from '../support/mock-api.js';
import { BIN } from '../support/pty.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';
import { errorText, structured, useMcp, waitFor } from './harness.js';

// The MCP server's call lifecycle through the built binary and a real MCP client: what a call reports when the
// repository changes under it, which conversations the server keeps, and what a client that goes away stops.
const repo = useRepo(APP_FILES, { git: true });
const mcp = useMcp(repo);

/** An MCP client in its own process: it spawns `spelunk mcp`, prints the server's pid, starts an ask, and waits. */
const CLIENT = `
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
const e = process.env;
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [e.SPELUNK_BIN, 'mcp', '-C', e.REPO_ROOT],
  env: { PATH: e.PATH, HOME: e.REPO_ROOT + '/..', ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: e.API_URL },
  stderr: 'ignore',
});
const client = new Client({ name: 'leaving-client', version: '1.0.0' });
await client.connect(transport);
process.stdout.write('server ' + transport.pid + '\\n');
client.callTool({ name: 'ask', arguments: { question: 'where is the server?' } }, undefined, { timeout: 600000 }).catch(() => {});
setInterval(() => {}, 1000);
`;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('spelunk mcp: the life of a call', () => {
  it('a client that disconnects mid-call aborts the call: the model request is cut at the API, and the server exits', async () => {
    const api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue({ kind: 'hang' });
    const client = spawn(process.execPath, ['--input-type=module', '-e', CLIENT], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SPELUNK_BIN: BIN, REPO_ROOT: repo.root, API_URL: api.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    client.stdout.on('data', (d: Buffer) => (out += d.toString()));
    client.stderr.on('data', (d: Buffer) => (err += d.toString()));
    let server = 0;
    try {
      await waitFor(() => /server \d+\n/.test(out), 15_000).catch(() => {
        throw new Error(`the client never connected: ${err}`);
      });
      server = Number(/server (\d+)/.exec(out)![1]);
      await api.waitForRequests(1);
      const call = api.requests.find((r) => r.path === '/v1/messages')!;
      expect(call.clientLeft).toBeUndefined();
      // The client dies without a word: no cancellation, no close; its pipes to the server simply end.
      client.kill('SIGKILL');
      await waitFor(() => call.clientLeft === true, 5_000);
      // The server cut the request itself, while it was still running, then exited: nothing is left behind.
      await waitFor(() => !alive(server), 5_000);
    } finally {
      if (client.exitCode === null) client.kill('SIGKILL');
      if (server && alive(server)) process.kill(server, 'SIGKILL');
      await api.close();
    }
  });

  it('a repository another program changes during the call is said in notes; spelunk is still proven read-only', async () => {
    const api = await mcp.api({ minCacheTokens: 256 });
    const planted = path.join(repo.root, 'src', 'planted.js');
    // Held 400 ms while an editor writes 150 ms into it: between tool calls, as another program's save.
    const changeRepo = (): Reply => {
      setTimeout(() => writeFileSync(planted, 'changed while spelunk answered\n'), 150);
      return { kind: 'slow', delayMs: 400, then: reply(text('The server is in src/server.js:4.')) };
    };
    api.enqueue(reply(toolUse('read_file', { path: 'src/server.js' })), changeRepo);
    const { client } = await mcp.connect();
    const answer = structured(await client.callTool({ name: 'ask', arguments: { question: 'where is the server?' } }));
    expect(answer).toMatchObject({ answer_markdown: 'The server is in src/server.js:4.', stop_reason: 'end_turn', readonly_verified: true });
    expect(answer.notes).toEqual([expect.stringMatching(/^other programs changed the repository during the run: .*planted\.js/)]);
  });

  it('a busy conversation is never evicted: 32 newer ones later, its follow-up is still "answering", not forgotten', async () => {
    const api = await mcp.api({ minCacheTokens: 256, fallback: reply(text('Another answer.')) });
    api.enqueue(reply(text('First answer.')), { kind: 'hang' });
    const { client } = await mcp.connect(['--max-concurrent-calls', '2']);
    const first = structured(await client.callTool({ name: 'ask', arguments: { question: 'where is the server?' } }));
    const id = first.session_id as string;
    // The follow-up hangs at the API: its conversation is busy (and, touched last, the newest) until it ends.
    const busy = client.callTool({ name: 'ask_followup', arguments: { session_id: id, question: 'and the router?' } }, undefined, { timeout: 120_000 });
    busy.catch(() => {});
    await api.waitForRequests(2);
    // 32 newer conversations: the server keeps 32, so one must go, and the busy one is now the least recently used.
    const newer: string[] = [];
    for (let i = 0; i < 32; i++) newer.push(structured(await client.callTool({ name: 'ask', arguments: { question: `question ${i}` } })).session_id as string);
    const again = errorText(await client.callTool({ name: 'ask_followup', arguments: { session_id: id, question: 'still there?' } }));
    expect(again).toBe('spelunk: that session is still answering an earlier question; wait for it, or start a new one with ask');
    // The least recently used idle one went instead.
    const evicted = errorText(await client.callTool({ name: 'ask_followup', arguments: { session_id: newer[0]!, question: 'x' } }));
    expect(evicted).toMatch(/^spelunk: unknown session_id .*the server keeps the last 32/);
  }, 120_000);

  it('a limit is worded in MCP terms, never as a flag: the ask notes name max_turns, the audit result its own words', async () => {
    const api = await mcp.api({ minCacheTokens: 256, fallback: reply(toolUse('read_file', { path: 'src/server.js' })) });
    api.enqueue(reply(text('Looking.'), toolUse('read_file', { path: 'src/server.js' })));
    const { client } = await mcp.connect();
    const ask = structured(await client.callTool({ name: 'ask', arguments: { question: 'where is the server?', max_turns: 1 } }));
    expect(ask).toMatchObject({ stop_reason: 'max_turns', answer_markdown: 'Looking.' });
    expect(ask.notes).toEqual(['stopped after 1 model request (max_turns 1) before a final answer; raise max_turns or ask a narrower question']);
    const audit = structured(await client.callTool({ name: 'audit', arguments: { question: 'does login shell out?' } }));
    expect(audit).toMatchObject({ stop_reason: 'max_turns', subtype: 'error_max_turns', exit_code: 3 });
    expect(audit.error.message).toMatch(/^stopped after \d+ model requests \(max_turns \d+\) before a final answer/);
    expect(JSON.stringify([ask.notes, audit.errors, audit.error])).not.toContain('--');
  }, 60_000);
});
