import type { ToolRegistry } from '../tools/registry.js';
import type { ToolOutcome } from '../tools/tool.js';
import type { Conversation } from './conversation.js';
import type { AgentEvent, StopKind, Usage } from './events.js';
import { ModelAbortError, ModelError, type Block, type ModelClient, type ModelResponse, type SystemBlock } from './model.js';

/** Tools of one turn that may run at once (2 cores; rg is itself multi-threaded). */
const TOOL_CONCURRENCY = 4;
/** Prompt size at which old tool results are elided (well inside a 200k-token context window). */
const DEFAULT_COMPACT_AT_TOKENS = 150_000;
/** Used for the budget pre-check when count_tokens is unavailable: code tokenises at ~3-4 chars, so 2 over-counts. */
const CONSERVATIVE_CHARS_PER_TOKEN = 2;

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

export interface LoopConfig {
  client: ModelClient;
  model: string;
  maxTokens: number;
  maxTurns: number;
  thinking: boolean;
  system: SystemBlock[];
  registry: ToolRegistry;
  root: string;
  toolTimeoutMs: number;
  onRead?: (absPath: string) => void;
  budget?: Budget;
  compactAtTokens?: number;
}

/**
 * Answers one question: streams requests, runs the requested tools, and yields typed events until the model ends
 * its turn or a limit, failure or abort stops it. It never prints and never throws for API, tool or abort failures;
 * whatever happens, `conversation` is left valid for the next question.
 */
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
    if (signal.aborted) return yield done(abortStop(signal), lastText, turns, abortMessage(signal));
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
      if (error instanceof ModelAbortError || signal.aborted) return yield done(abortStop(signal), lastText, turns, abortMessage(signal));
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
        const results = yield* runTools(response.content, config, signal);
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

/** Runs every tool_use of a turn (up to TOOL_CONCURRENCY at once); yields start/end events; returns results in request order. */
async function* runTools(content: Block[], config: LoopConfig, signal: AbortSignal): AsyncGenerator<AgentEvent, Block[]> {
  const calls = content.filter((b): b is Extract<Block, { type: 'tool_use' }> => b.type === 'tool_use');
  for (const call of calls) {
    yield { type: 'tool_start', id: call.id, name: call.name, input: call.input, display: config.registry.display(call.name, call.input) };
  }
  const ctx = { root: config.root, signal, timeoutMs: config.toolTimeoutMs, onRead: config.onRead };
  const outcomes = new Map<string, ToolOutcome>();
  const pending = new Map<string, Promise<{ id: string; outcome: ToolOutcome; durationMs: number }>>();
  let next = 0;
  const launch = (): void => {
    const call = calls[next++];
    if (!call) return;
    const started = Date.now();
    pending.set(
      call.id,
      config.registry.dispatch(call.name, call.input, ctx).then((outcome) => ({ id: call.id, outcome, durationMs: Date.now() - started })),
    );
  };
  while (next < Math.min(TOOL_CONCURRENCY, calls.length)) launch();
  while (pending.size > 0) {
    const finished = await Promise.race(pending.values());
    pending.delete(finished.id);
    outcomes.set(finished.id, finished.outcome);
    const call = calls.find((c) => c.id === finished.id)!;
    yield { type: 'tool_end', id: call.id, name: call.name, input: call.input, outcome: finished.outcome, durationMs: finished.durationMs };
    launch();
  }
  return calls.map((call) => {
    const outcome = outcomes.get(call.id)!;
    const text = outcome.content === '' ? '(no output)' : outcome.content;
    return { type: 'tool_result', tool_use_id: call.id, content: text, ...(outcome.isError ? { is_error: true } : {}) };
  });
}

async function budgetExceeded(config: LoopConfig, request: Parameters<ModelClient['countTokens']>[0], signal: AbortSignal): Promise<string | null> {
  const budget = config.budget!;
  const counted = await config.client.countTokens(request, signal);
  const prompt = counted ?? Math.ceil(JSON.stringify(request).length / CONSERVATIVE_CHARS_PER_TOKEN);
  const worst = budget.worstCaseUsd(prompt, config.maxTokens);
  const spent = budget.spentUsd();
  if (worst === null) return `no price is known for ${config.model}, so --max-budget-usd cannot be enforced`;
  if (spent + worst <= budget.maxUsd) return null;
  return `stopped before the next request: spent ~$${spent.toFixed(4)}, and the next could cost up to ~$${worst.toFixed(4)} (${prompt} prompt tokens + ${config.maxTokens} output), over --max-budget-usd ${budget.maxUsd}`;
}

function done(stop: StopKind, text: string, turns: number, message?: string): AgentEvent {
  return { type: 'done', stop, text, turns, ...(message ? { message } : {}) };
}

function abortStop(signal: AbortSignal): StopKind {
  return signal.reason === ABORT_TIMEOUT ? 'timeout' : 'aborted';
}

function abortMessage(signal: AbortSignal): string {
  return signal.reason === ABORT_TIMEOUT ? 'stopped: the run reached --timeout' : 'cancelled';
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
