import type { ToolDefinition as BaseToolDefinition } from '../tools/tool.js';
import type { Effort } from './effort.js';
import type { Usage } from './events.js';

/**
 * `-m opus|sonnet|haiku`: the newest model of each family (ids with a row in pricing.ts, so budgets and costs work).
 * An alias is resolved before the first request, so the request, the usage lines and saved sessions name the real id.
 */
export const MODEL_ALIASES: ReadonlyMap<string, string> = new Map([
  ['opus', 'claude-opus-5-5'],
  ['sonnet', 'claude-sonnet-5-5'],
  ['haiku', 'claude-haiku-5-5'],
]);

/** The model id `name` stands for: an alias (any case) becomes its id; anything else is passed on as typed. */
export function resolveModelAlias(name: string): string {
  return MODEL_ALIASES.get(name.toLowerCase()) ?? name;
}

/** A content block as spelunk stores it in the conversation (the Messages API shapes it uses). */
export type Block =
  | { type: 'text'; text: string; cache_control?: CacheControl }
  | { type: 'thinking'; thinking: string; signature: string; cache_control?: CacheControl }
  | { type: 'redacted_thinking'; data: string; cache_control?: CacheControl }
  | { type: 'tool_use'; id: string; name: string; input: unknown; cache_control?: CacheControl }
  | {
      type: 'tool_result';
      tool_use_id: string;
      content: string;
      is_error?: boolean;
      cache_control?: CacheControl;
    };

interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export interface Message {
  role: 'user' | 'assistant';
  content: Block[];
}

export interface SystemBlock {
  type: 'text';
  text: string;
  cache_control?: CacheControl;
}

/** A tool as the request lists it: the tools layer's definition, with a cache breakpoint on the last one. */
export type ToolDefinition = BaseToolDefinition & { cache_control?: CacheControl };

/** Exactly the request body spelunk sends (no temperature/top_p/top_k: the current API version rejects them). */
export interface ModelRequest {
  model: string;
  max_tokens: number;
  system: SystemBlock[];
  tools: ToolDefinition[];
  messages: Message[];
  thinking?: { type: 'adaptive' };
  /** Asks the API why the cache missed, compared with that earlier response; sent only to Anthropic's endpoint. */
  diagnostics?: { previous_message_id: string | null };
  output_config?: { effort: Effort };
}

export type StopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded'
  | (string & {});

/** The completed assistant turn. */
export interface ModelResponse {
  content: Block[];
  stopReason: StopReason | null;
  usage: Usage;
  requestId: string | null;
  /** The response's `msg_…` id (null from a client that has none). */
  id?: string | null;
  /** The API message's `model` and `stop_sequence`, for consumers that want the message as the API sent it. */
  model?: string;
  stopSequence?: string | null;
  /** The API's `diagnostics.cache_miss_reason.type`, when it diagnosed one. */
  cacheMissReason?: string | null;
}

/** What a streaming request yields: deltas for the live view, then exactly one final `message`. */
export type ModelChunk =
  | { type: 'text'; text: string }
  | { type: 'thinking'; text: string }
  | { type: 'notice'; message: string }
  | { type: 'message'; response: ModelResponse };

/** The one seam between the loop and the API; the loop's unit tests inject a scripted one (principle 4). */
export interface ModelClient {
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelChunk>;
  /** Prompt tokens the request would cost, for the budget pre-check; null when it cannot be counted. */
  countTokens(request: ModelRequest, signal: AbortSignal): Promise<number | null>;
}

/** A failure of the model API, normalised for one-line messages and exit codes. */
export class ModelError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly errorType: string | null,
    readonly requestId: string | null,
    /** True when text of this request was already shown (a cut stream is then reported, not retried). */
    readonly afterOutput: boolean,
    /** The request did not fit the model's context window (a 400 "prompt is too long", a 413): a limit, not a fault. */
    readonly contextExceeded = false,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

/** The request was cancelled by the caller (Ctrl+C, SIGTERM, --timeout). */
export class ModelAbortError extends Error {
  constructor(
    /** Usage the API had reported before the cancel (message_start onwards): that request is billed. */
    readonly usage: Usage | null = null,
    readonly requestId: string | null = null,
  ) {
    super('request cancelled');
    this.name = 'ModelAbortError';
  }
}
