import type { AgentEvent } from '../agent/events.js';
import { askQuestion, type Budget, type LoopConfig } from '../agent/loop.js';
import type { Config } from '../config.js';
import { lastRequestWhy, type FrontEnd } from '../exit-codes.js';
import { withHint } from '../locate/hint.js';
import type { Session } from './session.js';

/** An audit's last request a limit allows: the report is the answer. */
const AUDIT_FINISH =
  'Do not call any other tool: call report_findings now with your verdict (inconclusive when the evidence you have does not settle the question), a summary, and the findings whose locations you verified.';

/** Something that consumes the loop's events (text renderer, stream-json, result collector). */
export interface EventSink {
  handle(event: AgentEvent): void;
}

/** How one ask is run: whose words the model's last-request note uses, the read-only manifest's feed, turns already used. */
export interface AskOptions {
  front: FrontEnd;
  onRead?: (abs: string) => void;
  turnsBefore?: number;
}

/** The loop settings of a session; the limits are named in `front`'s words (flags for the CLI, parameters for MCP). */
function loopConfig(session: Session, config: Config, { front, onRead }: AskOptions): LoopConfig {
  const budget: Budget | undefined =
    config.maxBudgetUsd === null
      ? undefined
      : {
          maxUsd: config.maxBudgetUsd,
          spentUsd: () => session.ledger.totalCostUsd() ?? Number.POSITIVE_INFINITY,
        };
  return {
    client: session.client,
    model: config.model,
    maxTokens: config.maxTokens,
    maxTurns: config.maxTurns,
    thinking: config.thinking,
    effort: config.effort,
    system: session.system,
    registry: session.registry,
    root: config.root,
    toolTimeoutMs: config.toolTimeoutMs,
    timeoutMs: config.timeoutMs,
    symbols: session.symbols,
    sandbox: session.sandbox,
    ...(session.registry.names().includes('report_findings') ? { finishInstruction: AUDIT_FINISH } : {}),
    ...(session.toolsReady ? { toolsReady: session.toolsReady } : {}),
    ...(onRead ? { onRead } : {}),
    ...(budget ? { budget } : {}),
    lastRequestWhy: (limit) => lastRequestWhy(limit, limit === 'max_turns' ? config.maxTurns : config.maxBudgetUsd ?? undefined, front),
  };
}

/** Runs one question through the loop, handing every event to each sink; returns the final `done` event. */
export async function askOnce(
  question: string,
  session: Session,
  config: Config,
  sinks: EventSink | readonly EventSink[],
  signal: AbortSignal,
  opts: AskOptions,
): Promise<Extract<AgentEvent, { type: 'done' }>> {
  const all = Array.isArray(sinks) ? sinks : [sinks as EventSink];
  let last: Extract<AgentEvent, { type: 'done' }> | null = null;
  // --hint: only the first question of a conversation; appended to it, after the cached system prompt and tools.
  const turnsBefore = opts.turnsBefore ?? 0;
  const first = config.hint === true && turnsBefore === 0 && session.conversation.messages.length === 0;
  const asked = first ? await withHint(question, config.root, signal) : question;
  for await (const event of askQuestion(asked, session.conversation, { ...loopConfig(session, config, opts), turnsBefore }, signal)) {
    for (const sink of all) sink.handle(event);
    if (event.type === 'done') last = event;
  }
  return last ?? { type: 'done', stop: 'api_error', text: '', turns: 0, error: 'the loop ended without a result' };
}
