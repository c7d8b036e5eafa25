import type { Conversation } from './conversation.js';
import type { Effort } from './effort.js';
import type { AgentEvent, ApiMessage, BudgetOver, StopFacts, StopKind } from './events.js';
import {
  ModelAbortError,
  ModelError,
  type Block,
  type ModelClient,
  type ModelRequest,
  type ModelResponse,
  type SystemBlock,
} from './model.js';
import { runToolRound, type ToolRoundConfig } from './tool-round.js';
import { checkBudget, lastRequestNote, type Budget, type FinalLimit } from './budget.js';

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
  /** The run's time limit in ms, reported in the `done` of a timeout. */
  timeoutMs?: number | null;
  /** How the model should finish when one request is left (default: answer with what it has; audits: file the report). */
  finishInstruction?: string;
  /**
   * Why a request is the last, in the front end's words (`--max-turns 3 allows no request after this one`); the loop
   * names no flag or parameter of its own. Default: neutral words.
   */
  lastRequestWhy?: (limit: FinalLimit) => string;
}

/** What the model is asked to do in its last request when nothing says otherwise. */
const ANSWER_NOW = 'Do not call any more tools: answer the question now with what you have found, cite the evidence you have read, and say plainly what you could not check.';

/** Where a question stands between requests. */
interface Progress {
  /** Requests made for this question by this call. */
  turns: number;
  /** The text of the last completed response. */
  lastText: string;
  /** Whether any text was yielded yet (text of a later request then starts a new paragraph). */
  textShown: boolean;
  /** Set once the model has been told that a request is its last (by the turn limit or the budget). */
  finalBy: FinalLimit | null;
  /** The max_tokens of the latest request when the budget lowered it below the configured one, else null. */
  budgetCap: number | null;
}

type Done = Extract<AgentEvent, { type: 'done' }>;

/**
 * Answers one question: streams requests, runs the requested tools, and yields typed events until the model ends
 * its turn or a limit, failure or abort stops it. It never prints and never throws for API, tool or abort failures;
 * whatever happens, `conversation` is left valid for the next question. Its `done` is data (stop, limit, value): the
 * front ends word it.
 */
export async function* askQuestion(
  question: string,
  conversation: Conversation,
  config: LoopConfig,
  signal: AbortSignal,
): AsyncGenerator<AgentEvent> {
  const mark = conversation.addQuestion(question);
  const tools = config.registry.definitions();
  const before = config.turnsBefore ?? 0;
  const q: Progress = { turns: 0, lastText: '', textShown: false, finalBy: null, budgetCap: null };

  for (;;) {
    if (signal.aborted) return yield aborted(conversation, signal, config, q);
    if (before + q.turns >= config.maxTurns) {
      return yield done('max_turns', q, { limit: 'maxTurns', value: config.maxTurns, requests: before + q.turns });
    }
    const compactAt = config.compactAtTokens ?? DEFAULT_COMPACT_AT_TOKENS;
    if (conversation.lastPromptTokens > compactAt) {
      const elided = conversation.compact();
      if (elided > 0) {
        yield {
          type: 'warning',
          message: `conversation near the context window: replaced ${elided} old tool results with placeholders`,
        };
      }
    }
    const settings = {
      model: config.model,
      maxTokens: config.maxTokens,
      system: config.system,
      tools,
      thinking: config.thinking,
      effort: config.effort ?? null,
    };
    const gate = await nextRequestGate(settings, conversation, config, q, before, signal);
    if (gate === 'aborted') return yield aborted(conversation, signal, config, q);
    if ('kind' in gate) {
      return yield done('max_budget', q, { limit: 'maxBudgetUsd', value: config.budget?.maxUsd, budget: gate });
    }
    // One request left: say so in it, at the end of the last user message (the cached prefix stays byte-identical).
    if (gate.final !== null) {
      conversation.addNote(noteFor(gate.final, config));
      q.finalBy = gate.final;
    }
    q.budgetCap = gate.maxTokens < config.maxTokens ? gate.maxTokens : null;
    const base = { ...settings, maxTokens: gate.maxTokens };
    // diagnostics asks the API why a cache missed, against the previous response; the client sends it only to Anthropic.
    const request = { ...conversation.request(base), diagnostics: { previous_message_id: conversation.lastMessageId } };
    const turn = yield* streamTurn(request, conversation, config, q, signal);
    if ('stop' in turn) return yield turn;
    const end = yield* settleResponse(turn.response, conversation, config, q, mark, signal);
    if (end) return yield end;
  }
}

/**
 * Before a request: whether it is the last a limit allows (the limit to name in it) and the max_tokens it may use,
 * whether the budget forbids it (why), or whether the question was cancelled meanwhile. Once the model was told, it
 * is not told again.
 */
async function nextRequestGate(
  base: Parameters<Conversation['request']>[0],
  conversation: Conversation,
  config: LoopConfig,
  q: Progress,
  before: number,
  signal: AbortSignal,
): Promise<{ final: FinalLimit | null; maxTokens: number } | BudgetOver | 'aborted'> {
  const lastByTurns = q.finalBy === null && before + q.turns + 1 >= config.maxTurns;
  if (!config.budget) return { final: lastByTurns ? 'max_turns' : null, maxTokens: config.maxTokens };
  // The budget prices the request as it would be sent, the last-request note included.
  const note = q.finalBy === null ? noteFor(lastByTurns ? 'max_turns' : 'max_budget', config) : null;
  const run = {
    cache: conversation.cache,
    lastPromptTokens: conversation.lastPromptTokens,
    largestOutputTokens: conversation.largestOutputTokens,
    now: Date.now(),
  };
  const check = await checkBudget(config.budget, config, conversation.draft(base, note), run, signal);
  if (signal.aborted) return 'aborted';
  if (check.over) return check.over;
  const final = lastByTurns ? 'max_turns' : q.finalBy === null && check.lastOne ? 'max_budget' : null;
  return { final, maxTokens: check.maxTokens };
}

/** The last-request note, with the front end's words for the limit (neutral ones when it gave none). */
function noteFor(limit: FinalLimit, config: LoopConfig): string {
  const why =
    config.lastRequestWhy?.(limit) ??
    (limit === 'max_turns'
      ? `the limit of ${config.maxTurns} model requests allows no request after this one`
      : 'the budget leaves room for no request after this one');
  return lastRequestNote(why, config.finishInstruction ?? ANSWER_NOW);
}

/**
 * One request, streamed: yields its text, thinking, retry and usage events and returns the response, or the `done`
 * that ends the question (a cancel, an API failure).
 */
async function* streamTurn(
  request: ModelRequest,
  conversation: Conversation,
  config: LoopConfig,
  q: Progress,
  signal: AbortSignal,
): AsyncGenerator<AgentEvent, { response: ModelResponse } | Done> {
  q.turns++;
  const turn = q.turns;
  yield { type: 'request_start', turn };
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
        yield { type: 'first_token', turn };
      }
      if (chunk.type === 'thinking') {
        yield { type: 'thinking', text: chunk.text };
        continue;
      }
      // Text of a later request starts a new paragraph, so "Let me look." and the answer do not run together.
      if (!requestText && q.textShown) yield { type: 'text', text: '\n\n' };
      requestText = true;
      q.textShown = true;
      yield { type: 'text', text: chunk.text };
    }
  } catch (error) {
    if (error instanceof ModelAbortError || signal.aborted) {
      // The API bills a cancelled request from message_start on: it belongs in /usage and the totals.
      if (error instanceof ModelAbortError && error.usage) {
        yield {
          type: 'usage',
          turn,
          model: config.model,
          usage: error.usage,
          durationMs: Date.now() - started,
          requestId: error.requestId,
          interrupted: true,
          ...effortOf(config),
        };
      }
      return aborted(conversation, signal, config, q);
    }
    const message = error instanceof ModelError ? error.message : `unexpected failure: ${String(error)}`;
    // The API's "prompt is too long" is the same end as stop_reason model_context_window_exceeded (exit 3).
    return done(error instanceof ModelError && error.contextExceeded ? 'context_exceeded' : 'api_error', q, { error: message });
  }
  if (!response) return done('api_error', q, { error: 'the API stream ended without a message' });

  conversation.settled(response.usage, Date.now());
  yield {
    type: 'usage',
    turn,
    model: config.model,
    usage: response.usage,
    durationMs: Date.now() - started,
    requestId: response.requestId,
    ...effortOf(config),
  };
  conversation.lastMessageId = response.id ?? null;
  const miss = conversation.cacheWatch.observe(request, response.usage, response.cacheMissReason ?? null);
  if (miss) yield { type: 'cache_miss', turn, miss };
  yield { type: 'assistant_message', turn, message: apiMessage(response, config.model) };
  q.lastText = textOf(response.content);
  return { response };
}

/** Files a response in the conversation and runs its tools; returns the `done` that ends the question, or null to go on. */
async function* settleResponse(
  response: ModelResponse,
  conversation: Conversation,
  config: LoopConfig,
  q: Progress,
  mark: ReturnType<Conversation['addQuestion']>,
  signal: AbortSignal,
): AsyncGenerator<AgentEvent, Done | null> {
  switch (response.stopReason) {
    case 'tool_use': {
      conversation.addAssistant(response.content);
      const results = yield* runToolRound(response.content, config, signal);
      yield { type: 'tool_results', turn: q.turns, content: results.map(withoutCacheControl) };
      conversation.addToolResults(results);
      return null;
    }
    case 'pause_turn':
      conversation.addAssistant(response.content);
      conversation.addContinue();
      return null;
    case 'max_tokens':
      conversation.addAssistant(textBlocks(response.content));
      // Cut where the money ran out rather than at --max-tokens: a budget stop, with the text it had.
      if (q.budgetCap !== null) return done('max_budget', q, { limit: 'maxBudgetUsd', value: config.budget?.maxUsd, answered: true });
      return done('max_tokens', q, { limit: 'maxTokens', value: config.maxTokens });
    case 'refusal':
      conversation.rollback(mark);
      return done('refusal', q);
    case 'model_context_window_exceeded':
      conversation.addAssistant(textBlocks(response.content));
      return done('context_exceeded', q);
    default:
      conversation.addAssistant(textBlocks(response.content));
      // Told to finish by a limit, the model answered with what it had: the answer stands, marked incomplete.
      if (q.finalBy === 'max_turns') return done('max_turns', q, { limit: 'maxTurns', value: config.maxTurns, answered: true });
      if (q.finalBy === 'max_budget') return done('max_budget', q, { limit: 'maxBudgetUsd', value: config.budget?.maxUsd, answered: true });
      return done('end_turn', q);
  }
}

function done(stop: StopKind, q: Progress, facts: Omit<StopFacts, 'stop' | 'text' | 'turns'> = {}): Done {
  const defined = Object.fromEntries(Object.entries(facts).filter(([, v]) => v !== undefined));
  return { type: 'done', stop, text: q.lastText, turns: q.turns, ...defined };
}

/**
 * The `done` of a cancelled question. The question stays in the conversation, marked, so the model reads the next
 * question as new rather than answering both (and the conversation still ends on a user message).
 */
function aborted(conversation: Conversation, signal: AbortSignal, config: LoopConfig, q: Progress): Done {
  const timedOut = signal.reason === ABORT_TIMEOUT;
  conversation.addQuestion(timedOut ? TIMED_OUT_MARK : INTERRUPTED_MARK);
  if (!timedOut) return done('aborted', q);
  return done('timeout', q, config.timeoutMs ? { limit: 'timeoutMs', value: config.timeoutMs } : {});
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

function textBlocks(content: Block[]): Block[] {
  return content.filter((b) => b.type === 'text');
}

function textOf(content: Block[]): string {
  return content
    .filter((b): b is Extract<Block, { type: 'text' }> => b.type === 'text')
    .map((b) => b.text)
    .join('');
}
