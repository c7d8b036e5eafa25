import { answerStands, type AgentEvent } from '../agent/events.js';
import { describeBad, verifyCitations, type VerifiedCitation } from '../citations/verify.js';
import type { Config } from '../config.js';
import { askOnce, type EventSink } from './ask.js';
import type { Session } from './session.js';

type Done = Extract<AgentEvent, { type: 'done' }>;

/** A question's final outcome and its checked citations (null: not checked: --verify-citations off, or no answer). */
export interface CitedAnswer {
  done: Done;
  citations: VerifiedCitation[] | null;
  /** Model requests made, the fix turn included. */
  turns: number;
}

/** The user message of the `fix` turn: what is wrong, and what to send back. */
export function fixRequest(bad: readonly VerifiedCitation[]): string {
  const list = bad.map((c) => `- ${describeBad(c)}`).join('\n');
  return `These citations in your answer do not check out against the repository:\n${list}\n\nVerify them with the tools, then reply with the complete corrected answer (it replaces the previous one). Cite only lines you have read; drop a claim you cannot support.`;
}

/**
 * Asks `question`, then checks the answer's citations (--verify-citations report|fix). With `fix` and a bad citation,
 * the model gets one more question, inside --max-turns, listing the bad ones; its answer replaces the first and is
 * checked again. `onFixing` is told before that turn starts (the text view says so on stderr).
 */
export async function askCited(
  question: string,
  session: Session,
  config: Config,
  sinks: readonly EventSink[],
  signal: AbortSignal,
  hooks: { onRead?: (abs: string) => void; onFixing?: (bad: readonly VerifiedCitation[]) => void; onNoRoom?: () => void } = {},
): Promise<CitedAnswer> {
  const done = await askOnce(question, session, config, sinks, signal, hooks.onRead);
  if (config.verifyCitations === 'off' || !answerStands(done)) return { done, citations: null, turns: done.turns };
  const citations = await verifyCitations(config.root, done.text);
  const bad = citations.filter((c) => c.status !== 'ok');
  if (config.verifyCitations !== 'fix' || bad.length === 0) return { done, citations, turns: done.turns };
  if (done.turns >= config.maxTurns) {
    hooks.onNoRoom?.();
    return { done, citations, turns: done.turns };
  }
  hooks.onFixing?.(bad);
  const fixed = await askOnce(fixRequest(bad), session, config, sinks, signal, hooks.onRead, done.turns);
  const turns = done.turns + fixed.turns;
  if (!answerStands(fixed)) return { done: fixed, citations: null, turns };
  return { done: fixed, citations: await verifyCitations(config.root, fixed.text), turns };
}
