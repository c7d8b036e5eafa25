import type { Config } from '../config.js';
import type { Io, OutStream } from '../io.js';
import { createTextRenderer, type TextRenderer } from '../output/text.js';
import type { MarkdownView } from '../output/markdown.js';
import type { SourcesOptions } from '../output/sources.js';
import { citationUrl, hyperlinksEnabled, osc8 } from '../output/hyperlink.js';
import { linkCitations } from '../output/citation-links.js';
import { shouldUseColor } from '../output/color.js';
import type { VerifiedCitation } from '../citations/verify.js';
import type { RunPhase } from './run-question.js';
import type { Session } from './session.js';

/** What a terminal needs beyond plain text, loading (never awaited before the first request) when a stream is one. */
interface TextView {
  markdown: Promise<((opts: { width: number; color: boolean }) => MarkdownView) | null> | null;
  detectHyperlinks: Promise<((stream: 'stdout' | 'stderr') => boolean) | null> | null;
}

/** Default width for rendering when the terminal does not say. */
const DEFAULT_COLUMNS = 80;

/**
 * Loads the terminal-only modules (marked, marked-terminal, supports-hyperlinks: separate chunks) when stdout or
 * stderr is a terminal; a run writing to files or pipes never pays for them.
 */
export function loadTextView(config: Config, io: Io): TextView {
  const renders = config.outputFormat === 'text' && config.render && io.stdout.isTTY === true;
  const anyTty = io.stdout.isTTY === true || io.stderr.isTTY === true;
  // A chunk that fails to load means plain output, not a failed run.
  const markdown = renders ? import('../output/markdown.js').then((m) => m.loadMarkdown()).catch(() => null) : null;
  const detect = anyTty
    ? import('supports-hyperlinks').then((m) => (stream: 'stdout' | 'stderr') => m.default[stream]).catch(() => null)
    : null;
  return { markdown, detectHyperlinks: detect };
}

/** Where the text view's answer goes in json modes: stdout belongs to the JSON there. */
const DISCARD: OutStream = { write: () => true, isTTY: false };

/**
 * The live text view of a session (answer on stdout, activity on stderr; the spinner only on a terminal). `view`
 * brings the terminal-only renderer and hyperlink detection. With `activityOnly` (json and stream-json) the answer is
 * dropped and stderr shows the same progress lines as text mode, so a long CI run shows signs of life without
 * touching the machine-readable stdout.
 */
export function liveTextRenderer(
  config: Config,
  io: Io,
  session: Session,
  color: boolean,
  opts: { view?: TextView | null; activityOnly?: boolean } = {},
): TextRenderer {
  const { view = null, activityOnly = false } = opts;
  const linkOn = async (stream: 'stdout' | 'stderr'): Promise<boolean> => {
    const detect = (await view?.detectHyperlinks) ?? null;
    return hyperlinksEnabled(io[stream], io.env, detect ? () => detect(stream) : null);
  };
  const link = (c: VerifiedCitation, label: string): string => {
    const url = c.abs === null ? null : citationUrl(c.abs, c.path, c.start_line, config.editorUrl);
    return url === null ? label : osc8(url, label);
  };
  const width = io.stdout.columns || DEFAULT_COLUMNS;
  const colorOut = shouldUseColor(io.stdout, io.env, config.color);
  const render = view?.markdown ? view.markdown.then((make) => (make ? make({ width, color: colorOut }).render : null)) : null;
  const stdoutLinks = render !== null && config.verifyCitations !== 'off' ? linkOn('stdout') : null;
  const sourcesLink: Promise<SourcesOptions['link'] | null> = linkOn('stderr').then((on) => (on ? link : null));
  return createTextRenderer({
    stdout: activityOnly ? DISCARD : io.stdout,
    stderr: io.stderr,
    color,
    verbose: config.verbose,
    showThinking: config.showThinking,
    spinner: io.stderr.isTTY === true && !config.quiet,
    ledger: session.ledger,
    quiet: config.quiet,
    render,
    decorate: stdoutLinks
      ? async (block, rendered) => ((await stdoutLinks) ? linkCitations(config.root, block, rendered, link) : rendered)
      : null,
    sourcesLink,
  });
}

/** How a front end words the citation fix turn: starting (for `bad` citations), or no turn left for it. */
interface FixWords {
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
