import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { reply, text, toolUse } from '../support/mock-api.js';
import { APP_FILES, appFinding, useRepo } from '../support/temp-repo.js';
import { errorText, structured, useMcp } from './harness.js';

// A real MCP client from the same SDK spawns the built binary: the server without a key, its protocol errors, and the
// audit of a change.
const repo = useRepo(APP_FILES, { git: true });
const mcp = useMcp(repo);

describe('spelunk mcp without ANTHROPIC_API_KEY', () => {
  it('starts, serves locate, and answers the model tools with an error naming the missing key, sending nothing', async () => {
    const api = await mcp.api();
    const { client } = await mcp.connect([], { ANTHROPIC_API_KEY: '' });
    expect((await client.listTools()).tools).toHaveLength(4);
    const found = structured(await client.callTool({ name: 'locate', arguments: { question: 'where does createServer start?', k: 2 } }));
    expect(found.results[0].path).toBe('src/server.js');
    for (const [name, args] of [
      ['ask', { question: 'where is the server?' }],
      ['ask_followup', { session_id: 'x', question: 'and then?' }],
      ['audit', { question: 'is input validated?' }],
    ] as const) {
      const message = errorText(await client.callTool({ name, arguments: args }));
      expect(message).toMatch(new RegExp(`^spelunk: ${name} calls the model, and ANTHROPIC_API_KEY is not set; .*claude mcp add spelunk --env ANTHROPIC_API_KEY=… -- spelunk mcp.*locate works without a key$`));
    }
    expect(api.requests).toHaveLength(0);
    expect(mcp.stderr).toContain('spelunk mcp: only locate works: ANTHROPIC_API_KEY is not set');
  });
});

describe('spelunk mcp protocol errors', () => {
  it('an unknown tool\'s error carries the "MCP error -32602:" prefix once', async () => {
    await mcp.api();
    const { client } = await mcp.connect();
    const error = (await client.callTool({ name: 'rm', arguments: {} }).catch((e: unknown) => e)) as { code: number; message: string };
    expect(error.code).toBe(ErrorCode.InvalidParams);
    expect(error.message).toMatch(/^MCP error -32602: unknown tool "rm"/);
    expect(error.message.match(/MCP error/g)).toHaveLength(1);
  });
});

describe('the audit tool with a diff base (the rules of --diff)', () => {
  it('audits the change: a finding on a changed line fails it, one outside the change does not', { timeout: 60_000 }, async () => {
    const git = (...args: string[]) => execFileSync('/usr/bin/git', ['-c', 'user.name=t', '-c', 'user.email=t@e', '-c', 'commit.gpgSign=false', ...args], { cwd: repo.root, env: { PATH: '/usr/bin:/bin', HOME: repo.root, GIT_CONFIG_NOSYSTEM: '1' } });
    await fs.writeFile(path.join(repo.root, 'src/search.js'), "function search(db, q) {\n  return db.query(\"SELECT * FROM t WHERE n = '\" + q + \"'\");\n}\n");
    git('add', '-A');
    git('commit', '-q', '-m', 'search');
    const api = await mcp.api();
    const inChange = { rule_id: 'sql-injection', severity: 'high', title: 'SQL from input', message: 'q is concatenated into SQL', path: 'src/search.js', start_line: 2 };
    const { client } = await mcp.connect();
    api.enqueue(reply(toolUse('report_findings', { verdict: 'fail', summary: 'old injection only', findings: [appFinding()] })), reply(text('Done.')));
    const outside = structured(await client.callTool({ name: 'audit', arguments: { question: 'Is input passed to a shell or SQL?', diff: 'HEAD~1' } }));
    expect(outside).toMatchObject({ exit_code: 0, audit: { verdict: 'fail', findings: [{ diff_class: 'outside-diff' }] } });
    api.enqueue(reply(toolUse('report_findings', { verdict: 'fail', summary: 'new injection', findings: [inChange] })), reply(text('Done.')));
    const changed = structured(await client.callTool({ name: 'audit', arguments: { question: 'Is input passed to a shell or SQL?', diff: 'HEAD~1...HEAD' } }));
    expect(changed).toMatchObject({ exit_code: 4, audit: { findings: [{ diff_class: 'changed-line' }] } });
    expect(JSON.stringify(api.requests.at(-2)?.body)).toContain('src/search.js');
  });

  it.each<[string, RegExp]>([
    ['--output=/tmp/x', /^spelunk: diff --output=\/tmp\/x: a revision cannot start with "-"/],
    ['a...b...c', /^spelunk: diff a\.\.\.b\.\.\.c: use one "\.\.\."/],
    ['no-such-branch', /^spelunk: diff no-such-branch/],
  ])('diff %s is refused in its own words, before any request', async (diff, message) => {
    const api = await mcp.api();
    const { client } = await mcp.connect();
    expect(errorText(await client.callTool({ name: 'audit', arguments: { question: 'q?', diff } }))).toMatch(message);
    expect(api.requests).toHaveLength(0);
  });
});
