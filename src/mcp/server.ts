import type { Readable, Writable } from 'node:stream';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { priceFor } from '../agent/pricing.js';
import type { Config } from '../config.js';
import { UsageError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import type { Io } from '../io.js';
import { openSession } from '../run/session.js';
import { lazySymbols } from '../symbols/layer.js';
import { VERSION } from '../version.js';
import { CHILD_ADDRESS_SPACE_BYTES, limitChildren } from '../sandbox/exec.js';
import { Slots } from '../sandbox/slots.js';
import { PROGRESS_INTERVAL_MS, progressReporter } from './progress.js';
import { Researcher, type CallOutcome } from './research.js';
import { MCP_TOOLS, parseCall, unknownTool } from './tools.js';

/** Calls waiting for a free slot before the server answers "busy" instead of queueing more. */
const CALL_QUEUE = 16;

/** Overrides the ~10 s between progress notifications (seconds); for clients that want more or fewer. */
const PROGRESS_ENV = 'SPELUNK_MCP_PROGRESS_SECONDS';

const INSTRUCTIONS =
  'spelunk researches one repository (fixed when the server started) with read-only tools and answers with path:line evidence. Use ask for a question, ask_followup to continue it, audit for a pass/fail check, and locate (free, no model) to rank the files most likely to matter for a question.';

/**
 * `spelunk mcp`: serves ask, ask_followup, audit and locate (which needs no key) over stdio until the client closes
 * stdin (or SIGINT/SIGTERM).
 * stdout carries only the protocol; every log line goes to stderr.
 */
export async function runMcp(config: Config, io: Io): Promise<number> {
  const budgets = config.mcp && (config.mcp.perCallUsd !== null || config.mcp.totalUsd !== null);
  if ((budgets || config.maxBudgetUsd !== null) && priceFor(config.model) === null) {
    throw new UsageError(`a budget needs a known price, and ${config.model} has none; pick a listed model or drop the budget flags`);
  }
  const intervalMs = progressInterval(io.env);
  // Opened once, in the background: initialize is answered at once, and every ask shares the byte-stable preamble.
  // One symbol layer for the server: the asks' outlines and the locate tool share its grammars and parses.
  const symbols = lazySymbols(io.env);
  const base = openSession(config, { symbols });
  base.then(
    (session) => session.warnings.forEach((w) => io.stderr.write(`spelunk mcp: warning: ${w}\n`)),
    (error: unknown) =>
      io.stderr.write(`spelunk mcp: could not read the repository: ${error instanceof Error ? error.message : String(error)}\n`),
  );
  const researcher = new Researcher(config, base, io, symbols);
  // Server-wide bounds: calls answered at once, and programs run at once across all calls (each may reserve
  // CHILD_ADDRESS_SPACE_BYTES), so eight agents asking at once cannot reserve more memory than the stated budget.
  const maxCalls = config.mcp?.maxCalls ?? 4;
  const memoryGib = config.mcp?.maxMemoryGib ?? 4;
  const calls = new Slots(maxCalls, CALL_QUEUE);
  const children = Math.max(1, Math.floor((memoryGib * 1024 ** 3) / CHILD_ADDRESS_SPACE_BYTES));
  limitChildren(children);
  const shutdown = new AbortController();
  const server = new Server({ name: 'spelunk', version: VERSION }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: MCP_TOOLS as unknown as McpTool[] }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    // An unknown tool is a protocol error (the SDK sends a thrown McpError as the JSON-RPC error); bad arguments to a
    // known tool stay a tool error, which the calling model can read and correct.
    const unknown = unknownTool(request.params.name);
    if (unknown !== null) throw protocolError(ErrorCode.InvalidParams, unknown);
    const call = parseCall(request.params.name, request.params.arguments);
    if (typeof call === 'string') return errorResult(call);
    const token = extra._meta?.progressToken;
    const progress =
      token === undefined
        ? null
        : progressReporter((n, message) => {
            extra
              .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: n, message } })
              .catch(() => {});
          }, intervalMs);
    const signal = AbortSignal.any([extra.signal, shutdown.signal]);
    if (calls.held >= calls.size && token !== undefined) {
      const message = `queued: ${calls.held} calls running, ${calls.waiting} waiting before this one (--max-concurrent-calls ${calls.size})`;
      extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 0, message } }).catch(() => {});
    }
    const release = await calls.acquire(signal);
    if (release === 'full') {
      progress?.stop();
      return errorResult(
        `the server is busy: ${calls.held} calls running and ${calls.waiting} waiting (the most it queues); try again when one finishes, or start it with a larger --max-concurrent-calls`,
      );
    }
    if (release === 'aborted') {
      progress?.stop();
      return errorResult('cancelled');
    }
    try {
      return toResult(await researcher.run(call, { signal, progress }));
    } catch (error) {
      return errorResult(`internal error: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      release();
      progress?.stop();
    }
  });

  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  const stop = (): void => {
    shutdown.abort();
    void server.close();
  };
  server.onerror = (error) => io.stderr.write(`spelunk mcp: ${error.message}\n`);
  // The stdio transport does not watch for the end of stdin: a client that exits must not leave the server behind.
  io.stdin.on('end', stop);
  io.stdin.on('close', stop);
  io.signals.on('SIGINT', stop);
  io.signals.on('SIGTERM', stop);
  await server.connect(new StdioServerTransport(io.stdin as unknown as Readable, io.stdout as unknown as Writable));
  io.stderr.write(
    `spelunk mcp: serving ${config.root} (model ${config.model}) on stdio; ${maxCalls} calls and ${children} programs at once (${memoryGib} GiB allowance)\n`,
  );
  if (config.missingCredential !== undefined) io.stderr.write(`spelunk mcp: only locate works: ${config.missingCredential}\n`);
  await closed;
  io.signals.off('SIGINT', stop);
  io.signals.off('SIGTERM', stop);
  return EXIT.ok;
}

/** The MCP form of a call's outcome: structuredContent plus its text copy (for clients that read only text). */
function toResult(outcome: CallOutcome): CallToolResult {
  if (!outcome.ok) return errorResult(outcome.message);
  return { content: [{ type: 'text', text: JSON.stringify(outcome.structured) }], structuredContent: outcome.structured };
}

/**
 * A JSON-RPC error for the SDK to send. Not an McpError: its message already starts "MCP error -32602:", and the
 * client's McpError adds that prefix again; the SDK sends `code` and `message` as they are.
 */
function protocolError(code: ErrorCode, message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code });
}

function errorResult(message: string): CallToolResult {
  return { content: [{ type: 'text', text: `spelunk: ${message}` }], isError: true };
}

function progressInterval(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env[PROGRESS_ENV]?.trim();
  if (raw === undefined || raw === '') return PROGRESS_INTERVAL_MS;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new UsageError(`${PROGRESS_ENV} must be a number of seconds greater than 0 (got "${raw}")`);
  }
  return seconds * 1000;
}
