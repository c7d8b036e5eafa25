import type { AgentEvent, Usage } from '../agent/events.js';
import type { OutStream } from '../io.js';
import { roundUsd, SCHEMA_VERSION, type ResultObject } from './result.js';

/**
 * Tool output is included so a CI log shows what the model saw, but bounded: a `rg` over a monorepo can return
 * hundreds of kilobytes per call. `output_chars` always carries the full size.
 */
export const STREAM_CONTENT_MAX_CHARS = 2_000;

export interface StreamJsonInit {
  model: string;
  cwd: string;
  /** Names of the tools the model is offered. */
  tools: string[];
  spelunkVersion: string;
  sessionId?: string;
  /** Prices one request; without it `cost_usd` is null. */
  costOf?: (model: string, usage: Usage) => number | null;
}

export interface StreamJsonRenderer {
  /** Writes the init line; called implicitly by the first `handle` so init is always first. */
  start(): void;
  handle(event: AgentEvent): void;
  /** Writes the result object as the last line; anything handed over afterwards is dropped. */
  result(obj: ResultObject): void;
}

/**
 * `--output-format stream-json`: one JSON object per line (schema/stream-event.schema.json), each written with a
 * single `write` of a complete line, so a reader never sees half an event. Text deltas are emitted as they stream
 * (live, like the terminal): concatenate consecutive `assistant`/`text` events of a turn to get its text.
 * request_start, first_token and done produce no line: done's content is in the result object that follows.
 */
export function createStreamJsonRenderer(out: OutStream, init: StreamJsonInit): StreamJsonRenderer {
  let started = false;
  let finished = false;
  let turn = 0;
  const emit = (obj: Record<string, unknown>): void => {
    out.write(`${JSON.stringify(obj)}\n`);
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
      ...(init.sessionId === undefined ? {} : { session_id: init.sessionId }),
    });
  };
  return {
    start,
    handle(event) {
      if (finished) return;
      start();
      if (event.type === 'request_start') turn = event.turn;
      const line = lineFor(event, turn, init.costOf);
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

function lineFor(
  event: AgentEvent,
  turn: number,
  costOf: StreamJsonInit['costOf'],
): Record<string, unknown> | null {
  switch (event.type) {
    case 'text':
      return { type: 'assistant', subtype: 'text', turn, text: event.text };
    case 'thinking':
      return { type: 'assistant', subtype: 'thinking', turn, text: event.text };
    case 'tool_start':
      return { type: 'tool_use', id: event.id, name: event.name, input: event.input ?? null, display: event.display };
    case 'tool_end': {
      const content = bounded(event.outcome.content);
      return {
        type: 'tool_result',
        id: event.id,
        name: event.name,
        is_error: event.outcome.isError,
        duration_ms: Math.round(event.durationMs),
        output_chars: event.outcome.content.length,
        summary: event.outcome.summary,
        content,
        content_truncated: content.length < event.outcome.content.length,
      };
    }
    case 'usage': {
      const cost = costOf?.(event.model, event.usage) ?? null;
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

/** First STREAM_CONTENT_MAX_CHARS characters, never ending on half a surrogate pair. */
function bounded(content: string): string {
  if (content.length <= STREAM_CONTENT_MAX_CHARS) return content;
  const code = content.charCodeAt(STREAM_CONTENT_MAX_CHARS - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? STREAM_CONTENT_MAX_CHARS - 1 : STREAM_CONTENT_MAX_CHARS;
  return content.slice(0, end);
}
