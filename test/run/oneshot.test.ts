import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/args.js';
import { resolveConfig } from '../../src/config.js';
import type { Io } from '../../src/io.js';
import { runOnce } from '../../src/run/oneshot.js';
import { openSession } from '../../src/run/session.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { Tool } from '../../src/tools/tool.js';
import { Capture } from '../support/cli.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

let api: MockApi;
const repo = useRepo(APP_FILES, { git: true });

afterEach(async () => {
  await api?.close();
});

/** A read_file whose every call fails inside spelunk (an I/O error), as no model request or repository file can make it. */
const brokenReadFile: Tool<unknown> = {
  name: 'read_file',
  description: 'Reads a file.',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  parse: (input) => ({ ok: true, value: input }),
  display: () => 'broken',
  run: async () => {
    throw new Error('EIO: i/o error, read');
  },
};

async function runWithBrokenTool(format: 'text' | 'json'): Promise<{ code: number; stdout: string; stderr: string }> {
  const parsed = await parseArgs(['-C', repo.root, '--output-format', format, 'where is the server?'], undefined);
  if (parsed.kind !== 'run') throw new Error('not a run');
  const env = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, HOME: '/nonexistent-home' };
  const config = await resolveConfig(parsed.flags, env, repo.root, false);
  const stdout = new Capture();
  const stderr = new Capture();
  const io: Io = { stdout, stderr, stdin: Readable.from([]), env, cwd: repo.root, signals: new EventEmitter() as Io['signals'] };
  const code = await runOnce(config, 'where is the server?', io, async (cfg, opts) => {
    const session = await openSession(cfg, opts);
    return { ...session, registry: new ToolRegistry([brokenReadFile]) };
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe('a tool that fails inside spelunk (not a refusal)', () => {
  it.each(['text', 'json'] as const)('fails the run in %s mode: exit 1, never 0 with a partial answer', async (format) => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('read_file', { path: 'src/server.js' })), reply(text('The server is somewhere.')));
    const run = await runWithBrokenTool(format);
    expect(run.code).toBe(1);
    // The model still got an error result for its call, so the conversation stayed valid.
    const second = api.requests.filter((r) => r.path === '/v1/messages')[1]!;
    expect(JSON.stringify(second.body.messages!.at(-1))).toContain('read_file failed: EIO: i/o error, read');
    if (format === 'json') {
      expect(JSON.parse(run.stdout)).toMatchObject({ is_error: true, error: { message: expect.stringContaining('1 tool call(s) failed inside spelunk') } });
    } else {
      expect(run.stderr).toContain('1 tool call(s) failed inside spelunk');
    }
  });
});
