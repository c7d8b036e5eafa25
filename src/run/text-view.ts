import type { TextRenderer } from '../output/text.js';
import type { RunPhase } from './run-question.js';

/** How a front end words the citation fix turn: starting (for `bad` citations), or no turn left for it. */
export interface FixWords {
  fixing(bad: number): string;
  noRoom: string | null;
}

/** The one-shot CLI names its flags. */
export const CLI_FIX_WORDS = (maxTurns: number): FixWords => ({
  fixing: (bad) => `${bad} citation(s) did not check out; asking the model for a corrected answer (--verify-citations fix)`,
  noRoom: `no turn left for --verify-citations fix (--max-turns ${maxTurns}); the citations are reported as they are`,
});

/** The REPL's question has no flags of its own to name. */
export const REPL_FIX_WORDS: FixWords = {
  fixing: () => 'some citations did not check out; asking the model for a corrected answer',
  noRoom: null,
};

/**
 * The text view's part in a run's phases: the answer's Sources block once its citations are checked (after the
 * answer's text has been drawn), and a note on the citation fix turn. Warnings are the front end's to print.
 */
export async function showPhase(view: TextRenderer, phase: RunPhase, words: FixWords): Promise<void> {
  if (phase.type === 'answered') {
    await view.settled();
    view.finishAnswer(phase.citations);
  }
  if (phase.type === 'citation_fix') view.note(words.fixing(phase.bad.length));
  if (phase.type === 'citation_no_room' && words.noRoom !== null) view.note(words.noRoom);
}
