import { redactExcerpts } from '../secrets/citations.js';
import { answerStands, type AgentEvent } from '../agent/events.js';
import { describeBad, formatCitation, verifyCitations, type VerifiedCitation } from '../citations/verify.js';
import type { Config } from '../config.js';
import { askOnce, type AskOptions, type EventSink } from './ask.js';
import type { Session } from './session.js';

type Done = Extract<AgentEvent, { type: 'done' }>;

/** A question's final outcome and its checked citations (null: not checked: --verify-citations off, or no answer). */
interface CitedAnswer {
  done: Done;
  citations: VerifiedCitation[] | null;
  /** Model requests made, the fix turn included. */
  turns: number;
}

/** What the citation check tells the front end: a fix turn starts for `bad`, or no turn is left for one. */
export type CitationPhase = { type: 'citation_fix'; bad: readonly VerifiedCitation[] } | { type: 'citation_no_room' };

/**
 * The user message of the `fix` turn: each bad citation as the answer wrote it, what is wrong (a quote mismatch names
 * the suspect quote and shows what the cited line holds, since the citation may be right and only the quote off), and
 * what to send back.
 */
export function fixRequest(bad: readonly VerifiedCitation[]): string {
  const holds = (c: VerifiedCitation): string =>
    c.status === 'quote_mismatch' && c.excerpt !== null ? `; line ${c.start_line} reads \`${c.excerpt}\`` : '';
  const list = bad.map((c) => `- ${describeBad(c)}${written(c)}${holds(c)}`).join('\n');
  return [
    `These citations in your answer could not be confirmed against the repository:\n${list}`,
    'A quote_mismatch means the code you tied to the citation was not found near those lines: the lines or the quote may be ' +
      'wrong, or the code may not belong to that citation. Verify them with the tools, then reply with the complete ' +
      'corrected answer (it replaces the previous one). Cite only lines you have read; drop a claim you cannot support.',
  ].join('\n\n');
}

/** ` (written as "a.js#L3")` when the answer's form differs from the canonical one the list names. */
function written(c: VerifiedCitation): string {
  const forms = c.raws.filter((r) => r !== formatCitation(c));
  return forms.length === 0 ? '' : ` (written as ${forms.map((r) => `"${r}"`).join(', ')})`;
}

/**
 * Asks `question`, then checks the answer's citations (--verify-citations report|fix). With `fix` and a bad citation,
 * the model gets one more question, inside --max-turns, listing the bad ones; its answer replaces the first and is
 * checked again. `tell` hears of that turn before it starts (the text view says so on stderr), or that none was left.
 */
export async function askCited(
  question: string,
  session: Session,
  config: Config,
  sinks: readonly EventSink[],
  signal: AbortSignal,
  hooks: Omit<AskOptions, 'turnsBefore'> & { tell?: (phase: CitationPhase) => void | Promise<void> },
): Promise<CitedAnswer> {
  const ask = { front: hooks.front, ...(hooks.onRead ? { onRead: hooks.onRead } : {}) };
  const done = await askOnce(question, session, config, sinks, signal, ask);
  if (config.verifyCitations === 'off' || !answerStands(done)) return { done, citations: null, turns: done.turns };
  const citations = await redactExcerpts(await verifyCitations(config.root, done.text), session.redactor);
  const bad = citations.filter((c) => c.status !== 'ok');
  if (config.verifyCitations !== 'fix' || bad.length === 0) return { done, citations, turns: done.turns };
  if (done.turns >= config.maxTurns) {
    await hooks.tell?.({ type: 'citation_no_room' });
    return { done, citations, turns: done.turns };
  }
  await hooks.tell?.({ type: 'citation_fix', bad });
  const fixed = await askOnce(fixRequest(bad), session, config, sinks, signal, { ...ask, turnsBefore: done.turns });
  const turns = done.turns + fixed.turns;
  if (!answerStands(fixed)) return { done: fixed, citations: null, turns };
  return { done: fixed, citations: await redactExcerpts(await verifyCitations(config.root, fixed.text), session.redactor), turns };
}
