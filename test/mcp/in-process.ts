import { Readable } from 'node:stream';
import { Ajv } from 'ajv';
import { afterEach, expect } from 'vitest';
import { parseArgs } from '../../src/args.js';
import { resolveConfig } from '../../src/config.js';
import type { Io } from '../../src/io.js';
import { Researcher, type CallControl, type CallOutcome } from '../../src/mcp/research.js';
import { MCP_TOOLS, parseCall, type McpCall } from '../../src/mcp/tools.js';
import { openSession } from '../../src/run/session.js';
import { startMockApi, type MockApi, type MockOptions } from '../support/mock-api.js';

/**
 * The MCP server's research tool in this process (no spawned binary, so a mutant of src/mcp/research.ts is seen): a
 * Researcher over a real temporary repository, talking to the local Messages API through the real SDK.
 */
export interface InProcess {
  api: MockApi;
  researcher: Researcher;
  /** What the researcher logged on stderr so far. */
  stderr(): string;
  /** Runs one call (validated with parseCall, as the server does); `ctl` defaults to no cancel and no progress. */
  call(tool: string, args: Record<string, unknown>, ctl?: Partial<CallControl>): Promise<CallOutcome>;
}

const ajv = new Ajv({ strict: false });
const outputChecks = new Map<string, ReturnType<Ajv['compile']>>(MCP_TOOLS.map((t) => [t.name, ajv.compile(t.outputSchema)]));
const never = new AbortController().signal;

/** A starter for the tests of one file; the API each test starts is closed after it. */
export function useResearcher(repo: { readonly root: string }): (argv?: string[], opts?: MockOptions) => Promise<InProcess> {
  let api: MockApi | null = null;
  afterEach(async () => {
    await api?.close();
    api = null;
  });
  return async (argv = [], opts = {}) => {
    api = await startMockApi({ minCacheTokens: 256, ...opts });
    const parsed = await parseArgs(['mcp', '-C', repo.root, ...argv], undefined);
    if (parsed.kind !== 'run' || !parsed.mcp) throw new Error('not spelunk mcp');
    const env = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, HOME: '/nonexistent-home' };
    const config = await resolveConfig(parsed.flags, env, repo.root, false, true);
    let stderr = '';
    const io: Io = {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (stderr += s) },
      stdin: Readable.from([]),
      env: { HOME: '/nonexistent-home' },
      cwd: repo.root,
      signals: { on: () => undefined, off: () => undefined },
    };
    const researcher = new Researcher(config, openSession(config), io);
    const started = api;
    return {
      api: started,
      researcher,
      stderr: () => stderr,
      async call(tool, args, ctl = {}) {
        const parsed = parseCall(tool, args);
        if (typeof parsed === 'string') throw new Error(`parseCall refused ${tool}: ${parsed}`);
        return researcher.run(parsed as McpCall, { signal: never, progress: null, ...ctl });
      },
    };
  };
}

/** The structured result of a successful call, after checking it against the tool's outputSchema (as a client does). */
export function ok(outcome: CallOutcome, tool = 'ask'): Record<string, any> {
  if (!outcome.ok) throw new Error(`expected a result, got the error: ${outcome.message}`);
  const check = outputChecks.get(tool)!;
  expect(check(outcome.structured), ajv.errorsText(check.errors)).toBe(true);
  return outcome.structured;
}

/** The message of a failed call. */
export function refused(outcome: CallOutcome): string {
  if (outcome.ok) throw new Error(`expected an error, got ${JSON.stringify(outcome.structured).slice(0, 300)}`);
  return outcome.message;
}

/** The /v1/messages requests the API saw. */
export const messagesOf = (api: MockApi) => api.requests.filter((r) => r.path === '/v1/messages');
