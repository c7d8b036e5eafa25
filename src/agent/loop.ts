import type { Conversation } from './conversation.js';
import type { AgentEvent, StopKind, Usage } from './events.js';
import { ModelAbortError, ModelError, type Block, type ModelClient, type ModelResponse, type SystemBlock } from './model.js';
import { runToolRound, type ToolRoundConfig } from './tool-round.js';

/** Prompt size at which old tool results are elided (well inside a 200k-token context window). */
const DEFAULT_COMPACT_AT_TOKENS = 150_000;
/** Used for the budget pre-check when count_tokens is unavailable: code tokenises at ~3-4 chars, so 2 over-counts. */
const CONSERVATIVE_CHARS_PER_TOKEN = 2;

/** Appended to a question whose answer was cancelled, so the next question is not read as a continuation of it. */
export const INTERRUPTED_MARK = '[interrupted by the user before an answer]';
const TIMED_OUT_MARK = '[stopped by the time limit before an answer]';

/** Why an abort happened; the run's AbortController is aborted with one of these as its reason. */
export const ABORT_TIMEOUT = 'timeout';
export const ABORT_INTERRUPT = 'interrupt';

export interface Budget {
  maxUsd: number;
  /** Estimated cost already spent in this run. */
  spentUsd(): number;
  /** Worst-case cost of a request with this prompt and max output; null = unknown price (the CLI refuses that earlier). */
  worstCaseUsd(promptTokens: number, maxOutputTokens: number): number | null;
}

export interface LoopConfig extends ToolRoundConfig {
  client: ModelClient;
  model: string;
  maxTokens: number;
  maxTurns: number;
  thinking: boolean;
  system: SystemBlock[];
  budget?: Budget;
  compactAtTokens?: number;
  /** --timeout in ms, for the message when it is reached. */
  timeoutMs?: number | null;
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
  let turns = 0;
  let lastText = '';
  let textShown = false;

  for (;;) {
    if (signal.aborted) return yield aborted(conversation, signal, config, lastText, turns);
    if (turns >= config.maxTurns) {
      return yield done('max_turns', lastText, turns, `stopped after ${turns} model requests (--max-turns ${config.maxTurns}) before a final answer; raise --max-turns or ask a narrower question`);
    }
    const compactAt = config.compactAtTokens ?? DEFAULT_COMPACT_AT_TOKENS;
    if (conversation.lastPromptTokens > compactAt) {
      const elided = conversation.compact();
      if (elided > 0) yield { type: 'warning', message: `conversation near the context window: replaced ${elided} old tool results with placeholders` };
    }
    const request = conversation.request({ model: config.model, maxTokens: config.maxTokens, system: config.system, tools, thinking: config.thinking });

    if (config.budget) {
      const over = await budgetExceeded(config, request, signal);
      if (signal.aborted) return yield aborted(conversation, signal, config, lastText, turns);
      if (over) return yield done('max_budget', lastText, turns, over);
    }

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
          yield { type: 'usage', turn: turns, model: config.model, usage: error.usage, durationMs: Date.now() - started, requestId: error.requestId, interrupted: true };
        }
        return yield aborted(conversation, signal, config, lastText, turns);
      }
      const message = error instanceof ModelError ? error.message : `unexpected failure: ${String(error)}`;
      return yield done('api_error', lastText, turns, message);
    }
    if (!response) return yield done('api_error', lastText, turns, 'the API stream ended without a message');

    conversation.lastPromptTokens = promptTokens(response.usage);
    yield { type: 'usage', turn: turns, model: config.model, usage: response.usage, durationMs: Date.now() - started, requestId: response.requestId };
    lastText = textOf(response.content);

    switch (response.stopReason) {
      case 'tool_use': {
        conversation.addAssistant(response.content);
        const results = yield* runToolRound(response.content, config, signal);
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
        return yield done('end_turn', lastText, turns);
    }
  }
}

async function budgetExceeded(config: LoopConfig, request: Parameters<ModelClient['countTokens']>[0], signal: AbortSignal): Promise<string | null> {
  const budget = config.budget!;
  const counted = await config.client.countTokens(request, signal);
  const prompt = counted ?? Math.ceil(JSON.stringify(request).length / CONSERVATIVE_CHARS_PER_TOKEN);
  const worst = budget.worstCaseUsd(prompt, config.maxTokens);
  const spent = budget.spentUsd();
  if (worst === null) return `no price is known for ${config.model}, so --max-budget-usd cannot be enforced`;
  if (spent + worst <= budget.maxUsd) return null;
  if (spent === 0) return firstRequestOverBudget(budget, prompt, config.maxTokens, worst);
  return `stopped before the next request: spent ~$${spent.toFixed(4)}, and the next could cost up to ~$${worst.toFixed(4)} (${prompt} prompt tokens + ${config.maxTokens} output), over --max-budget-usd ${budget.maxUsd}`;
}

/** The budget cannot cover even the first request: say its worst case and the --max-tokens that would fit. */
function firstRequestOverBudget(budget: Budget, prompt: number, maxTokens: number, worst: number): string {
  const head = `--max-budget-usd ${budget.maxUsd} is below the first request's worst case of ~$${worst.toFixed(4)} (${grouped(prompt)} prompt tokens + ${grouped(maxTokens)} output)`;
  const promptOnly = budget.worstCaseUsd(prompt, 0) ?? worst;
  const perToken = (budget.worstCaseUsd(prompt, 1) ?? worst) - promptOnly;
  const fits = perToken > 0 ? Math.floor((budget.maxUsd - promptOnly) / perToken) : 0;
  // Below ~1,000 output tokens an answer with evidence rarely fits: suggest a budget instead.
  if (fits < 1000) return `${head}; raise it to at least ~$${(promptOnly + 1000 * perToken).toFixed(2)}`;
  const nice = fits >= 10_000 ? Math.floor(fits / 1000) * 1000 : Math.floor(fits / 100) * 100;
  return `${head}; lower it with --max-tokens ${grouped(nice)} or raise the budget`;
}

function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+$)/g, ',');
}

function done(stop: StopKind, text: string, turns: number, message?: string): AgentEvent {
  return { type: 'done', stop, text, turns, ...(message ? { message } : {}) };
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
