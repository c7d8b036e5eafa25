import type { Effort } from './effort.js';
import type { ToolOutcome } from '../tools/tool.js';
import type { Block } from './model.js';
import type { CacheMiss } from './cache-watch.js';

/** Token counts of one Messages API request, as the API reports them. */
export interface Usage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
  /** Split of cache writes by TTL, when the API reports it. */
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

/** Why a question's loop ended. */
export type StopKind =
  | 'end_turn' // answered
  | 'max_tokens' // answer cut by --max-tokens
  | 'refusal'
  | 'context_exceeded'
  | 'max_turns'
  | 'max_budget'
  | 'timeout'
  | 'aborted' // Ctrl+C / SIGTERM
  | 'api_error';

/** A completed model response as the Messages API returned it (the shape Claude Code's stream-json carries). */
export interface ApiMessage {
  id: string | null;
  type: 'message';
  role: 'assistant';
  model: string;
  content: Block[];
  stop_reason: string | null;
  stop_sequence: string | null;
  usage: Usage;
}

/** Everything the agent loop reports; renderers (text, json, stream-json, REPL) consume these. */
export type AgentEvent =
  | { type: 'request_start'; turn: number }
  | { type: 'first_token'; turn: number }
  | { type: 'text'; text: string }
  | { type: 'thinking'; text: string }
  | { type: 'tool_start'; id: string; name: string; input: unknown; display: string }
  | { type: 'tool_end'; id: string; name: string; input: unknown; outcome: ToolOutcome; durationMs: number }
  /** `interrupted`: the request was cancelled after the API had reported (and billed) its usage; `effort`: the effort sent. */
  | {
      type: 'usage';
      turn: number;
      model: string;
      usage: Usage;
      durationMs: number;
      requestId: string | null;
      interrupted?: boolean;
      effort?: Effort;
    }
  /** The first tool calls waited this long for the read-only snapshot (not counted in their durations). */
  | { type: 'tools_waited'; durationMs: number }
  /** Each completed response, after its usage and before its tools run. */
  | { type: 'assistant_message'; turn: number; message: ApiMessage }
  /** The tool_result blocks of one tool round, as the next request sends them to the model. */
  | { type: 'tool_results'; turn: number; content: Block[] }
  /** The request read less from the prompt cache than the previous one had cached; `miss` says what changed. */
  | { type: 'cache_miss'; turn: number; miss: CacheMiss }
  | { type: 'warning'; message: string }
  | { type: 'retry'; message: string }
  | ({ type: 'done' } & StopFacts);

/** A loop setting that can end a question, by its neutral name (each front end names it: a flag, a tool parameter). */
export type StopLimit = 'maxTurns' | 'maxTokens' | 'timeoutMs' | 'maxBudgetUsd';

/** Why the budget stopped a question, as numbers; the front end words it (exit-codes.ts `stopMessage`). */
export type BudgetOver =
  | { kind: 'no_price'; model: string }
  /**
   * After `spentUsd`, the money left cannot pay for the next request: its prompt of `promptTokens` (`promptUsd`, cache
   * reads and writes as the API will bill them) and `outputTokens` of answer (`outputUsd`).
   */
  | { kind: 'next'; spentUsd: number; promptTokens: number; promptUsd: number; outputTokens: number; outputUsd: number }
  /** The budget cannot pay for even the first request, priced as above; `raiseToUsd` would (rounded up, above it). */
  | { kind: 'first'; promptTokens: number; promptUsd: number; outputTokens: number; outputUsd: number; raiseToUsd: number };

/**
 * How a question ended, as data: no front end's wording (the CLI's flags, the REPL's commands, MCP's parameters) is
 * in it, so every front end words it through the stop table in exit-codes.ts.
 */
export interface StopFacts {
  stop: StopKind;
  /** The final answer text of the last request (may be partial when cut). */
  text: string;
  /** Model requests made for this question. */
  turns: number;
  /** The limit that ended the question, and its value (absent: no limit, or a timeout with no configured length). */
  limit?: StopLimit;
  value?: number;
  /** Model requests made by the whole question when a limit stopped it (earlier calls of the same question included). */
  requests?: number;
  /** A failure's own message (an API error, a stream cut): facts, never a front end's wording. */
  error?: string;
  /** The budget arithmetic of a `max_budget` stop before a request. */
  budget?: BudgetOver;
  /**
   * Told by a limit that this request was its last, the model finished its answer: the answer stands (shown,
   * checked), though the run still ends as the limit (`stop`) and may be incomplete.
   */
  answered?: true;
}

/** True when `done` carries a finished answer: a clean end, or one given in the last request a limit allowed. */
export function answerStands(done: Extract<AgentEvent, { type: 'done' }>): boolean {
  return done.stop === 'end_turn' || done.answered === true;
}
