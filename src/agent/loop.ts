import type { Conversation } from './conversation.js';
import type { Effort } from './effort.js';
import type { AgentEvent, ApiMessage, StopKind, Usage } from './events.js';
import { ModelAbortError, ModelError, type Block, type ModelClient, type ModelResponse, type SystemBlock } from './model.js';
import { runToolRound, type ToolRoundConfig } from './tool-round.js';
import { checkBudget, finishedAtLimit, lastRequestNote, type Budget, type FinalLimit } from './budget.js';

export type { Budget } from './budget.js';

/** Prompt size at which old tool results are elided (well inside a 200k-token context window). */
const DEFAULT_COMPACT_AT_TOKENS = 150_000;

/** Appended to a question whose answer was cancelled, so the next question is not read as a continuation of it. */
export const INTERRUPTED_MARK = '[interrupted by the user before an answer]';
const TIMED_OUT_MARK = '[stopped by the time limit before an answer]';

/** Why an abort happened; the run's AbortController is aborted with one of these as its reason. */
export const ABORT_TIMEOUT = 'timeout';
export const ABORT_INTERRUPT = 'interrupt';

export interface LoopConfig extends ToolRoundConfig {
  client: ModelClient;
  model: string;
  maxTokens: number;
  maxTurns: number;
  /**
   * Requests this question already made before this call (the citation fix turn, the audit reminder): they count
   * against maxTurns, so the limit and its messages are the user's --max-turns, not what was left of it.
   */
  turnsBefore?: number;
  thinking: boolean;
  /** output_config.effort of every request; null or absent: none is sent. */
  effort?: Effort | null;
  system: SystemBlock[];
  budget?: Budget;
  compactAtTokens?: number;
  /** --timeout in ms, for the message when it is reached. */
  timeoutMs?: number | null;
  /** How the model should finish when one request is left (default: answer with what it has; audits: file the report). */
  finishInstruction?: string;
}

/**
 * Answers one question: streams requests, runs the requested tools, and yields typed events until the model ends
 * its turn or a limit, failure or abort stops it. It never prints and never throws for API, tool or abort failures;
 * whatever happens, `conversation` is left valid for the next question.
 */
// Long on purpose: the loop is one state machine (turns, limits, cancellation) and reads best top to bottom.
export async function* askQuestion(
  question: string,
  conversation: Conversation,
  config: LoopConfig,
  signal: AbortSignal,
): AsyncGenerator<AgentEvent> {
  const mark = conversation.addQuestion(question);
  const tools = config.registry.definitions();
  const before = config.turnsBefore ?? 0;
  let turns = 0;
  let lastText = '';
  let textShown = false;
  // Set once the model has been told that this request is its last (by --max-turns or --max-budget-usd).
  let finalBy: FinalLimit | null = null;

  for (;;) {
    if (signal.aborted) return yield aborted(conversation, signal, config, lastText, turns);
    if (before + turns >= config.maxTurns) {
      return yield done('max_turns', lastText, turns, `stopped after ${before + turns} model requests (--max-turns ${config.maxTurns}) before a final answer; raise --max-turns or ask a narrower question`);
    }
    const compactAt = config.compactAtTokens ?? DEFAULT_COMPACT_AT_TOKENS;
    if (conversation.lastPromptTokens > compactAt) {
      const elided = conversation.compact();
      if (elided > 0) yield { type: 'warning', message: `conversation near the context window: replaced ${elided} old tool results with placeholders` };
    }
    const base = { model: config.model, maxTokens: config.maxTokens, system: config.system, tools, thinking: config.thinking, effort: config.effort ?? null };
    // One request left: say so in it, at the end of the last user message (the cached prefix stays byte-identical).
    let last: FinalLimit | null = finalBy === null && before + turns + 1 >= config.maxTurns ? 'max_turns' : null;
    if (config.budget) {
      const note = finalBy === null ? lastRequestNote(last ?? 'max_budget', config) : null;
      const check = await checkBudget(config.budget, config, conversation.draft(base, note), signal);
      if (signal.aborted) return yield aborted(conversation, signal, config, lastText, turns);
      if (check.over) return yield done('max_budget', lastText, turns, check.over);
      if (finalBy === null && last === null && check.lastOne) last = 'max_budget';
    }
    if (last !== null) {
      conversation.addNote(lastRequestNote(last, config));
      finalBy = last;
    }
    // diagnostics asks the API why a cache missed, against the previous response; the client sends it only to Anthropic.
    const request = { ...conversation.request(base), diagnostics: { previous_message_id: conversation.lastMessageId } };

    turns++;
    yield { type: 'request_start', turn: turns };
    const started = Date.now();
    let response: ModelResponse | null = null;
    let firstToken = false;
    let requestText = false;
    try {
      for await (const chunk of config.client.stream(request, signal)) {
        if (chunk.type === 'message') {
          response = chunk.response;
          continue;
        }
        if (chunk.type === 'notice') {
          yield { type: 'retry', message: chunk.message };
          continue;
        }
        if (!firstToken) {
          firstToken = true;
          yield { type: 'first_token', turn: turns };
        }
        if (chunk.type === 'thinking') {
          yield { type: 'thinking', text: chunk.text };
          continue;
        }
        // Text of a later request starts a new paragraph, so "Let me look." and the answer do not run together.
        if (!requestText && textShown) yield { type: 'text', text: '\n\n' };
        requestText = true;
        textShown = true;
        yield { type: 'text', text: chunk.text };
      }
    } catch (error) {
      if (error instanceof ModelAbortError || signal.aborted) {
        // The API bills a cancelled request from message_start on: it belongs in /usage and the totals.
        if (error instanceof ModelAbortError && error.usage) {
          yield { type: 'usage', turn: turns, model: config.model, usage: error.usage, durationMs: Date.now() - started, requestId: error.requestId, interrupted: true, ...effortOf(config) };
        }
        return yield aborted(conversation, signal, config, lastText, turns);
      }
      const message = error instanceof ModelError ? error.message : `unexpected failure: ${String(error)}`;
      // The API's "prompt is too long" is the same end as stop_reason model_context_window_exceeded (exit 3).
      return yield done(error instanceof ModelError && error.contextExceeded ? 'context_exceeded' : 'api_error', lastText, turns, message);
    }
    if (!response) return yield done('api_error', lastText, turns, 'the API stream ended without a message');

    conversation.lastPromptTokens = promptTokens(response.usage);
    yield { type: 'usage', turn: turns, model: config.model, usage: response.usage, durationMs: Date.now() - started, requestId: response.requestId, ...effortOf(config) };
    conversation.lastMessageId = response.id ?? null;
    const miss = conversation.cacheWatch.observe(request, response.usage, response.cacheMissReason ?? null);
    if (miss) yield { type: 'cache_miss', turn: turns, miss };
    yield { type: 'assistant_message', turn: turns, message: apiMessage(response, config.model) };
    lastText = textOf(response.content);

    switch (response.stopReason) {
      case 'tool_use': {
        conversation.addAssistant(response.content);
        const results = yield* runToolRound(response.content, config, signal);
        yield { type: 'tool_results', turn: turns, content: results.map(withoutCacheControl) };
        conversation.addToolResults(results);
        continue;
      }
      case 'pause_turn':
        conversation.addAssistant(response.content);
        conversation.addContinue();
        continue;
      case 'max_tokens':
        conversation.addAssistant(textBlocks(response.content));
        return yield done('max_tokens', lastText, turns, `the answer was cut at --max-tokens ${config.maxTokens} output tokens; raise --max-tokens or ask for less`);
      case 'refusal':
        conversation.rollback(mark);
        return yield done('refusal', lastText, turns, 'the model declined to answer this question; rephrase it (the question was dropped from the conversation)');
      case 'model_context_window_exceeded':
        conversation.addAssistant(textBlocks(response.content));
        return yield done('context_exceeded', lastText, turns, "the conversation filled the model's context window; start a new one (/clear in the REPL) or ask a narrower question");
      default:
        conversation.addAssistant(textBlocks(response.content));
        // Told to finish by a limit, the model answered with what it had: the answer stands, marked incomplete.
        if (finalBy !== null) return yield done(finalBy, lastText, turns, finishedAtLimit(finalBy, config), true);
        return yield done('end_turn', lastText, turns);
    }
  }
}

function done(stop: StopKind, text: string, turns: number, message?: string, answered = false): AgentEvent {
  return { type: 'done', stop, text, turns, ...(message ? { message } : {}), ...(answered ? { answered: true as const } : {}) };
}

/**
 * The `done` of a cancelled question. The question stays in the conversation, marked, so the model reads the next
 * question as new rather than answering both (and the conversation still ends on a user message).
 */
function aborted(conversation: Conversation, signal: AbortSignal, config: LoopConfig, text: string, turns: number): AgentEvent {
  const timedOut = signal.reason === ABORT_TIMEOUT;
  conversation.addQuestion(timedOut ? TIMED_OUT_MARK : INTERRUPTED_MARK);
  if (!timedOut) return done('aborted', text, turns, 'cancelled');
  const limit = config.timeoutMs ? ` ${config.timeoutMs / 1000} (seconds for the whole run)` : '';
  const raise = config.timeoutMs ? `, e.g. --timeout ${(config.timeoutMs * 2) / 1000}` : '';
  return done('timeout', text, turns, `stopped: the run reached --timeout${limit} before an answer; raise it${raise}`);
}

/** The response as the API sent it; copies of the blocks, since the conversation later marks some for caching. */
function apiMessage(response: ModelResponse, model: string): ApiMessage {
  return {
    id: response.id ?? null,
    type: 'message',
    role: 'assistant',
    model: response.model ?? model,
    content: response.content.map(withoutCacheControl),
    stop_reason: response.stopReason,
    stop_sequence: response.stopSequence ?? null,
    usage: response.usage,
  };
}

function withoutCacheControl(block: Block): Block {
  const { cache_control: _omit, ...rest } = block;
  return rest as Block;
}

function effortOf(config: LoopConfig): { effort?: Effort } {
  return config.effort ? { effort: config.effort } : {};
}

function promptTokens(usage: Usage): number {
  return usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;
}

function textBlocks(content: Block[]): Block[] {
  return content.filter((b) => b.type === 'text');
}

function textOf(content: Block[]): string {
  return content
    .filter((b): b is Extract<Block, { type: 'text' }> => b.type === 'text')
    .map((b) => b.text)
    .join('');
}
