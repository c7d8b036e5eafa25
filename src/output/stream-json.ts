import { randomUUID } from 'node:crypto';
import type { AgentEvent, Usage } from '../agent/events.js';
import type { Block } from '../agent/model.js';
import type { OutStream } from '../io.js';
import { roundUsd, SCHEMA_VERSION, type ResultObject } from './result.js';
import type { SandboxKind } from '../sandbox/kernel.js';
import { partialMessages } from './stream-events.js';

/**
 * Tool output is included so a CI log shows what the model saw, but bounded: a `rg` over a monorepo can return
 * hundreds of kilobytes per call. The spelunk `tool_result` event always carries the full size (`output_chars`).
 */
export const STREAM_CONTENT_MAX_CHARS = 2_000;

interface StreamJsonInit {
  model: string;
  cwd: string;
  /** Names of the tools the model is offered. */
  tools: string[];
  spelunkVersion: string;
  /** The sandbox the session's programs run in. */
  sandbox: SandboxKind;
  sessionId?: string;
  /** The instructions files in the system prompt, relative to the root, outermost first (`../AGENTS.md`, `AGENTS.md`). */
  instructionFiles?: string[];
  /**
   * Claude Code's name for where the key came from: `ANTHROPIC_API_KEY` when that key signs the requests, `none` when
   * no Anthropic API key does (a cloud's own credentials, or ANTHROPIC_AUTH_TOKEN as a bearer token).
   */
  apiKeySource: 'ANTHROPIC_API_KEY' | 'none';
  /** Prices one request; without it `cost_usd` is null. */
  costOf?: (model: string, usage: Usage) => number | null;
  /** `--include-partial-messages`: also the API's streaming events, as `stream_event` lines (stream-events.ts). */
  partialMessages?: boolean;
}

/**
 * The init fields Claude Code's readers require, with spelunk's true values (the key's source comes with the run):
 * no MCP servers, slash commands, skills or plugins are loaded into a run, and the tools only read (Claude Code's
 * read-only `plan` mode is the nearest permission mode).
 */
const CLAUDE_INIT = {
  permissionMode: 'plan',
  mcp_servers: [],
  slash_commands: [],
  skills: [],
  plugins: [],
  output_style: 'default',
} as const;

interface StreamJsonRenderer {
  /** Writes the init line; called implicitly by the first `handle` so init is always first. */
  start(): void;
  handle(event: AgentEvent): void;
  /** Writes the result object as the last line; anything handed over afterwards is dropped. */
  result(obj: ResultObject): void;
}

/**
 * `--output-format stream-json`: one JSON object per line (schema/stream-event.schema.json), each written with a
 * single `write` of a complete line, so a reader never sees half an event. The lines a Claude Code stream-json reader
 * knows come in its shapes: `system`/`init` first, an `assistant` line with the API message after each request, a
 * `user` line with the tool_result blocks after each tool round, the `result` object last. spelunk's own lines
 * (`text_delta`, `thinking_delta`, `tool_use`, `tool_result`, `usage`, `system` warning/retry) have types or subtypes
 * such readers skip. request_start, first_token and done produce no line: done's content is in the result object.
 */
export function createStreamJsonRenderer(out: OutStream, init: StreamJsonInit): StreamJsonRenderer {
  let started = false;
  let finished = false;
  let turn = 0;
  const partial = init.partialMessages === true ? partialMessages(init.model) : null;
  const thread = { parent_tool_use_id: null, ...(init.sessionId === undefined ? {} : { session_id: init.sessionId }) };
  // Claude Code gives every line a uuid; the result object brings its own.
  const emit = (obj: Record<string, unknown>): void => {
    out.write(`${JSON.stringify({ ...obj, uuid: obj['uuid'] ?? randomUUID() })}\n`);
  };
  const start = (): void => {
    if (started) return;
    started = true;
    emit({
      type: 'system',
      subtype: 'init',
      schema_version: SCHEMA_VERSION,
      model: init.model,
      cwd: init.cwd,
      tools: init.tools,
      spelunk_version: init.spelunkVersion,
      instruction_files: init.instructionFiles ?? [],
      sandbox: init.sandbox,
      ...(init.sessionId === undefined ? {} : { session_id: init.sessionId }),
      apiKeySource: init.apiKeySource,
      ...CLAUDE_INIT,
    });
  };
  return {
    start,
    handle(event) {
      if (finished) return;
      start();
      if (event.type === 'request_start') turn = event.turn;
      for (const api of partial?.eventsFor(event) ?? []) emit({ type: 'stream_event', event: api, ...thread });
      const line = lineFor(event, turn, init);
      if (line !== null) emit(line);
    },
    result(obj) {
      if (finished) return;
      start();
      finished = true;
      emit(obj as unknown as Record<string, unknown>);
    },
  };
}

function lineFor(event: AgentEvent, turn: number, init: StreamJsonInit): Record<string, unknown> | null {
  // Claude Code puts these two on every message line; spelunk has no sub-agents, so the parent is always null.
  const thread = { parent_tool_use_id: null, ...(init.sessionId === undefined ? {} : { session_id: init.sessionId }) };
  switch (event.type) {
    case 'assistant_message':
      return { type: 'assistant', message: event.message, ...thread };
    case 'tool_results':
      return { type: 'user', message: { role: 'user', content: event.content.map(boundedResult) }, ...thread };
    case 'text':
      return { type: 'text_delta', turn, text: event.text };
    case 'thinking':
      return { type: 'thinking_delta', turn, text: event.text };
    case 'tool_start':
      return { type: 'tool_use', id: event.id, name: event.name, input: event.input ?? null, display: event.display };
    case 'tool_end':
      return {
        type: 'tool_result',
        id: event.id,
        name: event.name,
        is_error: event.outcome.isError,
        duration_ms: Math.round(event.durationMs),
        output_chars: event.outcome.content.length,
        summary: event.outcome.summary,
      };
    case 'usage': {
      const cost = init.costOf?.(event.model, event.usage) ?? null;
      return {
        type: 'usage',
        turn: event.turn,
        model: event.model,
        usage: event.usage,
        cost_usd: cost === null ? null : roundUsd(cost),
        duration_ms: Math.round(event.durationMs),
        request_id: event.requestId,
      };
    }
    case 'warning':
      return { type: 'system', subtype: 'warning', message: event.message };
    case 'retry':
      return { type: 'system', subtype: 'retry', message: event.message };
    default:
      return null;
  }
}

/** A tool_result block with its text cut to STREAM_CONTENT_MAX_CHARS and a note saying how much is not shown. */
function boundedResult(block: Block): Block {
  if (block.type !== 'tool_result' || block.content.length <= STREAM_CONTENT_MAX_CHARS) return block;
  const shown = bounded(block.content);
  return { ...block, content: `${shown}\n[spelunk: ${block.content.length - shown.length} more characters were sent to the model; not shown in the stream]` };
}

/** First STREAM_CONTENT_MAX_CHARS characters, never ending on half a surrogate pair. */
function bounded(content: string): string {
  const code = content.charCodeAt(STREAM_CONTENT_MAX_CHARS - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? STREAM_CONTENT_MAX_CHARS - 1 : STREAM_CONTENT_MAX_CHARS;
  return content.slice(0, end);
}
