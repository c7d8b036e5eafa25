import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ErrorCode, LATEST_PROTOCOL_VERSION, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { reply, text, toolUse } from '../support/mock-api.js';
import { runCli } from '../support/cli.js';
import { BIN } from '../support/pty.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';
import { structured, toolProcesses, useMcp, waitFor, withHugeFile } from './harness.js';

// A real MCP client from the same SDK spawns the built binary (`dist/spelunk.js mcp`) against the local Messages API.
const repo = useRepo({ ...APP_FILES, 'data/README': 'the sparse file beside this one is created by the test\n' }, { git: true });
const mcp = useMcp(repo);

describe('spelunk mcp (the built binary, a real MCP client)', () => {
  it('lists ask, ask_followup, audit and locate, read-only, with input and output schemas, at the latest protocol revision', async () => {
    const api = await mcp.api();
    const { client } = await mcp.connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['ask', 'ask_followup', 'audit', 'locate']);
    for (const tool of tools) {
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: false });
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      // No tool lets the client choose a directory: the root is fixed at start.
      expect(JSON.stringify(tool.inputSchema)).not.toMatch(/"(dir|root|cwd|path)"/);
    }
    expect(client.getServerVersion()?.name).toBe('spelunk');
    expect(LATEST_PROTOCOL_VERSION).toBe('2025-11-25');
    expect(api.requests).toHaveLength(0);
  });

  it('locate ranks the files without a model request: paths relative to the root, best first, the defining file on top', async () => {
    const api = await mcp.api();
    const { client } = await mcp.connect();
    const result = structured(await client.callTool({ name: 'locate', arguments: { question: 'where does createServer start the http server?', k: 3 } }));
    expect(result).toMatchObject({ type: 'locate', query: 'where does createServer start the http server?' });
    expect(result.results.length).toBeLessThanOrEqual(3);
    expect(result.results[0]).toMatchObject({ path: 'src/server.js', symbols: [{ name: 'createServer', kind: 'function', line: 4 }] });
    expect(api.requests).toHaveLength(0);
    const bad = await client.callTool({ name: 'locate', arguments: { question: 'q', k: 0 } });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toMatch(/k must be a whole number from 1 to 50/);
  });

  it('locate keeps parsed symbols in the same XDG cache as the CLI, so a new server reuses them', async () => {
    const cache = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-mcp-cache-'));
    try {
      await mcp.api();
      const question = 'where does createServer start the http server?';
      const first = structured(await (await mcp.connect([], { XDG_CACHE_HOME: cache })).client.callTool({ name: 'locate', arguments: { question, k: 3 } }));
      const entries = await cacheEntries(path.join(cache, 'spelunk', 'symbols'));
      expect(entries.length).toBeGreaterThan(0);
      const again = structured(await (await mcp.connect([], { XDG_CACHE_HOME: cache })).client.callTool({ name: 'locate', arguments: { question, k: 3 } }));
      expect(again).toEqual(first);
      expect(await cacheEntries(path.join(cache, 'spelunk', 'symbols'))).toEqual(entries);
    } finally {
      await fs.rm(cache, { recursive: true, force: true });
    }
  });

  it('ask answers with usage and a session_id; ask_followup continues the same conversation', async () => {
    const api = await mcp.api({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('bash', { command: 'ls src' })), reply(text('Routing is in src/router.js:3.')), reply(text('It returns 404 at src/router.js:5, not src/router.js:99.')));
    const { client } = await mcp.connect();
    const first = structured(await client.callTool({ name: 'ask', arguments: { question: 'Where is routing?' } }));
    expect(first).toMatchObject({ answer_markdown: 'Routing is in src/router.js:3.', truncated: false, stop_reason: 'end_turn', readonly_verified: true });
    // Citations come back verified, as in the json result.
    expect(first.citations).toEqual([{ path: 'src/router.js', start_line: 3, end_line: 3, status: 'ok', excerpt: 'function handle(req, res) {' }]);
    expect(first.usage).toMatchObject({ requests: 2 });
    expect(first.usage.cost_usd).toBeGreaterThan(0);
    expect(first.session_id).toMatch(/^[0-9a-f-]{36}$/);

    const second = structured(await client.callTool({ name: 'ask_followup', arguments: { session_id: first.session_id, question: 'And unknown routes?' } }));
    expect(second).toMatchObject({ answer_markdown: 'It returns 404 at src/router.js:5, not src/router.js:99.', session_id: first.session_id });
    expect(second.citations.map((c: { status: string }) => c.status)).toEqual(['ok', 'line_out_of_range']);
    const messages = api.requests.at(-1)!.body.messages!;
    expect(JSON.stringify(messages[0])).toContain('Where is routing?');
    expect(JSON.stringify(messages.at(-1))).toContain('And unknown routes?');
    // The conversation's prefix was cached by the first ask, so the follow-up reads it.
    expect(second.usage.cache_read).toBeGreaterThan(0);
    expect(mcp.stderr).toContain('spelunk mcp: serving');
  });

  it.each([
    ['ask', {}, /question is required/],
    ['ask', { question: 'q', max_turns: 0 }, /max_turns must be a whole number from 1 to 100/],
    ['ask_followup', { question: 'q', session_id: 'nope' }, /unknown session_id "nope".*start again with ask/],
    ['ask_followup', { question: 'q' }, /session_id is required/],
    ['audit', { question: 'q', fail_on: 'severe' }, /fail_on must be low, medium, high or critical/],
  ])('%s %j is refused with a one-line error and no model request', async (name, args, message) => {
    const api = await mcp.api();
    const { client } = await mcp.connect();
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toMatch(message);
    expect(api.requests).toHaveLength(0);
  });

  it.each(['rm', 'constructor', 'ASK'])('an unknown tool (%s) is a JSON-RPC protocol error -32602, not a tool result, and sends nothing', async (name) => {
    const api = await mcp.api();
    const { client } = await mcp.connect();
    const call = client.callTool({ name, arguments: { question: 'q' } });
    await expect(call).rejects.toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringContaining(`unknown tool "${name}"; the tools are ask, ask_followup, audit and locate`) });
    expect(api.requests).toHaveLength(0);
    // The server is still serving.
    expect((await client.listTools()).tools).toHaveLength(4);
  });

  it('audit returns the audit result object, with the exit code fail_on implies', async () => {
    const api = await mcp.api();
    const finding = { rule_id: 'shell-injection', severity: 'medium', title: 'User input reaches exec', message: 'login() concatenates user into a shell command', path: 'src/auth.js', start_line: 4 };
    api.enqueue(reply(toolUse('report_findings', { verdict: 'fail', summary: 'one injection', findings: [finding] })), reply(text('Done.')));
    const { client } = await mcp.connect();
    const high = structured(await client.callTool({ name: 'audit', arguments: { question: 'Is user input passed to a shell?' } }));
    expect(high).toMatchObject({ type: 'result', fail_on: 'high', exit_code: 0, readonly_verified: true, audit: { verdict: 'fail' } });
    expect(high.audit.findings).toHaveLength(1);
    api.enqueue(reply(toolUse('report_findings', { verdict: 'fail', summary: 'one injection', findings: [finding] })), reply(text('Done.')));
    const medium = structured(await client.callTool({ name: 'audit', arguments: { question: 'Is user input passed to a shell?', fail_on: 'medium' } }));
    expect(medium).toMatchObject({ fail_on: 'medium', exit_code: 4 });
  });

  it('sends progress notifications on a slow answer when the call carries a progress token', async () => {
    const api = await mcp.api();
    api.enqueue({ kind: 'slow', delayMs: 1500, then: reply(text('Slow but done.')) });
    const { client } = await mcp.connect([], { SPELUNK_MCP_PROGRESS_SECONDS: '0.3' });
    const seen: { progress: number; message?: string }[] = [];
    const result = await client.callTool({ name: 'ask', arguments: { question: 'q' } }, undefined, { onprogress: (p) => seen.push(p) });
    expect(structured(result).answer_markdown).toBe('Slow but done.');
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.map((p) => p.progress)).toEqual([...seen.map((p) => p.progress)].sort((a, b) => a - b));
    expect(seen.at(-1)!.message).toMatch(/waiting for the model · 1 model request · 0 tool calls · .* · \d+ s/);
  });

  it('progress names the tool call that is running, with the counts so far', async () => {
    await withHugeFile(repo.root, async () => {
      const api = await mcp.api();
      api.enqueue(reply(toolUse('bash', { command: 'wc -w data/huge.bin' })));
      const { client } = await mcp.connect([], { SPELUNK_MCP_PROGRESS_SECONDS: '0.2' });
      const controller = new AbortController();
      const seen: string[] = [];
      const call = client.callTool({ name: 'ask', arguments: { question: 'how many words?' } }, undefined, {
        signal: controller.signal,
        onprogress: (p) => void seen.push(p.message ?? ''),
      });
      call.catch(() => {});
      await waitFor(() => seen.some((m) => m.startsWith('running ')), 10_000);
      controller.abort();
      expect(seen.find((m) => m.startsWith('running '))).toMatch(/^running bash wc -w data\/huge\.bin · 1 model request · 0 tool calls · ~\$0\.\d+ · \d+ s$/);
    });
  });

  it.each(['ask', 'audit'])('a cancelled %s stops the loop and kills its tool process within a second', async (tool) => {
    await withHugeFile(repo.root, async () => {
      const api = await mcp.api();
      api.enqueue(reply(toolUse('bash', { command: 'wc -w data/huge.bin' })));
      const { client, transport } = await mcp.connect();
      const controller = new AbortController();
      const call = client.callTool({ name: tool, arguments: { question: 'how many words?' } }, undefined, {
        signal: controller.signal,
        onprogress: () => {},
      });
      call.catch(() => {});
      await waitFor(() => toolProcesses(transport.pid!).length > 0, 10_000);
      controller.abort();
      await expect(call).rejects.toThrow(/abort/i);
      const cancelledAt = Date.now();
      await waitFor(() => toolProcesses(transport.pid!).length === 0, 5_000);
      expect(Date.now() - cancelledAt).toBeLessThan(1000);
      // The loop stopped: no second model request; the server still answers the next call.
      expect(api.requests).toHaveLength(1);
      api.enqueue(reply(text('Still here.')));
      expect(structured(await client.callTool({ name: 'ask', arguments: { question: 'alive?' } })).answer_markdown).toBe('Still here.');
    });
  });

  it('eight concurrent asks of four tool calls each never run more programs at once than the memory budget allows', async () => {
    await withHugeFile(repo.root, async () => {
      const api = await mcp.api();
      const four = reply(...Array.from({ length: 4 }, () => toolUse('bash', { command: 'wc -w data/huge.bin' })));
      for (let i = 0; i < 8; i++) api.enqueue(four);
      const { client, transport } = await mcp.connect(['--max-concurrent-calls', '8', '--max-memory-gib', '2']);
      const controller = new AbortController();
      const calls = Array.from({ length: 8 }, () => client.callTool({ name: 'ask', arguments: { question: 'how many words?' } }, undefined, { signal: controller.signal }));
      for (const call of calls) call.catch(() => {});
      await waitFor(() => api.requests.length === 8 && toolProcesses(transport.pid!).length > 0, 15_000);
      let most = 0;
      for (const until = Date.now() + 1_500; Date.now() < until; ) {
        most = Math.max(most, toolProcesses(transport.pid!).length);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      // 2 GiB at 1 GiB of address space per program: two programs, where 32 ran before the bound.
      expect(most).toBe(2);
      controller.abort();
      await Promise.allSettled(calls);
      await waitFor(() => toolProcesses(transport.pid!).length === 0, 5_000);
    });
  });

  it('a call over --max-concurrent-calls waits in the queue and says so in its progress', async () => {
    await withHugeFile(repo.root, async () => {
      const api = await mcp.api();
      api.enqueue(reply(toolUse('bash', { command: 'wc -w data/huge.bin' })));
      const { client, transport } = await mcp.connect(['--max-concurrent-calls', '1']);
      const controller = new AbortController();
      const first = client.callTool({ name: 'ask', arguments: { question: 'how many words?' } }, undefined, { signal: controller.signal });
      first.catch(() => {});
      await waitFor(() => toolProcesses(transport.pid!).length > 0, 10_000);
      const messages: string[] = [];
      const second = client.callTool({ name: 'ask', arguments: { question: 'and now?' } }, undefined, {
        signal: controller.signal,
        onprogress: (p) => messages.push(p.message ?? ''),
      });
      second.catch(() => {});
      await waitFor(() => messages.length > 0, 5_000);
      expect(messages[0]).toMatch(/^queued: 1 calls running, 0 waiting before this one \(--max-concurrent-calls 1\)$/);
      // Still one model request: the queued call has not started.
      expect(api.requests).toHaveLength(1);
      controller.abort();
      await Promise.allSettled([first, second]);
    });
  });

  it.each([
    [['--max-concurrent-calls', '0'], '--max-concurrent-calls must be a whole number of at least 1'],
    [['--max-memory-gib', '1.5'], '--max-memory-gib must be a whole number of at least 1'],
  ])('spelunk mcp %j is a usage error', async (flags, message) => {
    const run = await runCli(['mcp', '-C', repo.root, ...flags], { env: { ANTHROPIC_API_KEY: 'k' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
  });

  it('exits 0 when the client closes stdin, with nothing but protocol on stdout', async () => {
    const api = await mcp.api();
    const child = spawn(process.execPath, [BIN, 'mcp', '-C', repo.root], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: path.dirname(repo.root), ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`);
    await waitFor(() => out.includes('\n'), 10_000);
    child.stdin.end();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    const lines = out.trim().split('\n').map((l) => JSON.parse(l) as { id: number; result: { protocolVersion: string; serverInfo: { name: string } } });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.result).toMatchObject({ protocolVersion: '2025-11-25', serverInfo: { name: 'spelunk' } });
    expect(err).toContain('spelunk mcp: serving');
  });

  it('--max-budget-usd-total: once the calls have spent it, the next call is refused without a request', async () => {
    const api = await mcp.api();
    // One expensive answer (60k output tokens ≈ $0.60 at list price) spends the whole $0.50.
    api.enqueue({ kind: 'message', content: [text('First.')], usage: { output_tokens: 60_000 } });
    const { client } = await mcp.connect(['--max-budget-usd-total', '0.5']);
    expect(structured(await client.callTool({ name: 'ask', arguments: { question: 'q' } })).answer_markdown).toBe('First.');
    const requests = api.requests.length;
    const refused = (await client.callTool({ name: 'ask', arguments: { question: 'again' } })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect((refused.content[0] as { text: string }).text).toMatch(/the server's budget is spent \(~\$0\.6\d+ of --max-budget-usd-total 0\.5\); restart spelunk mcp with a larger one/);
    expect(api.requests).toHaveLength(requests);
  });

  it('--max-budget-usd-per-call: a call whose spending crosses it stops before its next request, and the total counts it', async () => {
    const api = await mcp.api();
    // The first response alone costs ~$0.60 (60k output tokens): over the call's $0.50, so no second request is sent.
    api.enqueue({ kind: 'message', content: [text('Looking at the router.'), toolUse('bash', { command: 'ls src' })], usage: { output_tokens: 60_000 } });
    api.enqueue({ kind: 'message', content: [toolUse('bash', { command: 'ls src' })], usage: { output_tokens: 60_000 } });
    const { client } = await mcp.connect(['--max-budget-usd-per-call', '0.5', '--max-budget-usd-total', '1']);
    const first = structured(await client.callTool({ name: 'ask', arguments: { question: 'Where is routing?' } }));
    // With text from the model, the call returns it, marked: stop_reason max_budget and a note saying why.
    expect(first).toMatchObject({ answer_markdown: 'Looking at the router.', stop_reason: 'max_budget', truncated: false });
    expect(first.notes).toEqual([expect.stringMatching(/^stopped before the next request: ~\$0\.6\d of the call's budget \(\$0\.5\) is spent, and the next needs ~\$0\.\d+ \([\d,]+ prompt tokens ~\$0\.\d+ \+ 1,024 output tokens ~\$0\.\d+\)$/)]);
    expect(first.usage).toMatchObject({ requests: 1, output: 60_000 });
    expect(api.requests.filter((r) => r.path === '/v1/messages')).toHaveLength(1);
    // Without text, the call is an error with the same reason.
    const second = (await client.callTool({ name: 'ask', arguments: { question: 'And auth?' } })) as CallToolResult;
    expect(second.isError).toBe(true);
    expect((second.content[0] as { text: string }).text).toMatch(/^spelunk: stopped before the next request: ~\$0\.6\d of the call's budget \(\$0\.[0-9]+\) is spent, /);
    // Both calls counted toward the total ($1.20 of $1): the next call is refused without a request.
    const requests = api.requests.length;
    const refused = (await client.callTool({ name: 'ask', arguments: { question: 'again' } })) as CallToolResult;
    expect((refused.content[0] as { text: string }).text).toMatch(/the server's budget is spent \(~\$1\.2\d+ of --max-budget-usd-total 1\)/);
    expect(api.requests).toHaveLength(requests);
  });

  it.each(['ask', 'audit'])('a cancelled %s still counts toward --max-budget-usd-total (its requests were billed)', async (tool) => {
    await withHugeFile(repo.root, async () => {
      const api = await mcp.api();
      api.enqueue({ kind: 'message', content: [toolUse('bash', { command: 'wc -w data/huge.bin' })], usage: { output_tokens: 60_000 } });
      const { client, transport } = await mcp.connect(['--max-budget-usd-total', '0.5']);
      const controller = new AbortController();
      const call = client.callTool({ name: tool, arguments: { question: 'how many words?' } }, undefined, { signal: controller.signal });
      call.catch(() => {});
      await waitFor(() => toolProcesses(transport.pid!).length > 0, 10_000);
      controller.abort();
      await expect(call).rejects.toThrow(/abort/i);
      const requests = api.requests.length;
      const refused = (await client.callTool({ name: 'ask', arguments: { question: 'again' } })) as CallToolResult;
      expect((refused.content[0] as { text: string }).text).toMatch(/the server's budget is spent \(~\$0\.6\d+ of --max-budget-usd-total 0\.5\)/);
      expect(api.requests).toHaveLength(requests);
    });
  });

  it.each([
    [['--max-budget-usd-per-call', '1', 'q'], /--max-budget-usd-per-call only works with the mcp subcommand/],
    [['mcp', '--max-budget-usd-total', '0'], /--max-budget-usd-total must be a number greater than 0/],
    [['mcp', '-m', 'claude-unknown-9', '--max-budget-usd-per-call', '1'], /a budget needs a known price, and claude-unknown-9 has none/],
  ])('spelunk %j is a usage error (exit 2)', async (argv, message) => {
    const run = await runCli(['-C', repo.root, ...argv], { env: { ANTHROPIC_API_KEY: 'k' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).toBe('');
  });
});

/** The entry files of a symbol cache directory (its shard directories hold them), sorted. */
async function cacheEntries(dir: string): Promise<string[]> {
  const shards = await fs.readdir(dir).catch(() => [] as string[]);
  const files = await Promise.all(shards.map(async (shard) => (await fs.readdir(path.join(dir, shard)).catch(() => [] as string[])).map((f) => `${shard}/${f}`)));
  return files.flat().sort();
}
