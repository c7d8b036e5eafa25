import type { AgentEvent } from '../agent/events.js';
import { groupDigits } from '../digits.js';
import { askQuestion, type Budget, type LoopConfig } from '../agent/loop.js';
import type { Config } from '../config.js';
import { lastRequestWhy } from '../exit-codes.js';
import { withHint } from '../locate/hint.js';
import type { Io, OutStream } from '../io.js';
import { createTextRenderer, type TextRenderer } from '../output/text.js';
import type { MarkdownView } from '../output/markdown.js';
import type { SourcesOptions } from '../output/sources.js';
import { citationUrl, hyperlinksEnabled, osc8 } from '../output/hyperlink.js';
import { shouldUseColor } from '../output/color.js';
import { extractCitations } from '../citations/extract.js';
import { verifyExtracted, type VerifiedCitation } from '../citations/verify.js';
import { placeCitationLinks } from '../output/citation-links.js';
import { estimateTokens } from '../preamble/system-prompt.js';
import type { Session } from './session.js';
import { describeSandbox } from '../sandbox/kernel.js';

/** An audit's last request a limit allows: the report is the answer. */
const AUDIT_FINISH =
  'Do not call any other tool: call report_findings now with your verdict (inconclusive when the evidence you have does not settle the question), a summary, and the findings whose locations you verified.';

/** Something that consumes the loop's events (text renderer, stream-json, result collector). */
export interface EventSink {
  handle(event: AgentEvent): void;
}

/** The loop settings of a session; `onRead` feeds the read-only manifest. */
export function loopConfig(session: Session, config: Config, onRead?: (abs: string) => void): LoopConfig {
  const budget: Budget | undefined =
    config.maxBudgetUsd === null
      ? undefined
      : {
          maxUsd: config.maxBudgetUsd,
          spentUsd: () => session.ledger.totalCostUsd() ?? Number.POSITIVE_INFINITY,
        };
  // The CLI names its flags in the model's last request, MCP its tool parameters.
  const front = config.mcp === null ? 'cli' : 'mcp';
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
  onRead?: (abs: string) => void,
  turnsBefore = 0,
): Promise<Extract<AgentEvent, { type: 'done' }>> {
  const all = Array.isArray(sinks) ? sinks : [sinks as EventSink];
  let last: Extract<AgentEvent, { type: 'done' }> | null = null;
  // --hint: only the first question of a conversation; appended to it, after the cached system prompt and tools.
  const first = config.hint === true && turnsBefore === 0 && session.conversation.messages.length === 0;
  const asked = first ? await withHint(question, config.root, signal) : question;
  for await (const event of askQuestion(asked, session.conversation, { ...loopConfig(session, config, onRead), turnsBefore }, signal)) {
    for (const sink of all) sink.handle(event);
    if (event.type === 'done') last = event;
  }
  return last ?? { type: 'done', stop: 'api_error', text: '', turns: 0, error: 'the loop ended without a result' };
}

/** What a terminal needs beyond plain text, loading (never awaited before the first request) when a stream is one. */
export interface TextView {
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

/** `rendered` with every verified citation of `block` made a hyperlink, at the places the answer cited it. */
export async function linkCitations(
  root: string,
  block: string,
  rendered: string,
  link: (c: VerifiedCitation, label: string) => string,
): Promise<string> {
  const cites = extractCitations(block);
  const verified = new Map<string, VerifiedCitation>();
  for (const c of await verifyExtracted(root, cites)) {
    if (c.status === 'ok' && c.abs !== null) verified.set(citationKey(c.commit, c.path, c.start_line, c.end_line), c);
  }
  if (verified.size === 0) return rendered;
  const places = cites.map((cite) => {
    const c = verified.get(citationKey(cite.commit, cite.path, cite.startLine, cite.endLine));
    return { raw: cite.raw, link: c ? (label: string) => link(c, label) : null };
  });
  return placeCitationLinks(block, rendered, places);
}

/** The verifier's grouping: one distinct citation per commit, path and lines. */
function citationKey(commit: string | undefined, p: string, start: number | null, end: number | null): string {
  return `${commit ?? ''}\0${p}\0${start ?? ''}\0${end ?? ''}`;
}

/** The `/context` report: what the preamble holds and roughly what it costs. */
export function renderContext(session: Session, config: Config): string {
  const { instructions, listing } = session;
  const tools = JSON.stringify(session.registry.definitions());
  const systemText = session.system.map((b) => b.text).join('');
  const lines = [
    `root          ${config.root}`,
    `instructions  ${instructionsLine(session)}`,
    `nested        ${instructions.nested.length === 0 ? 'none' : instructions.nested.join(', ')}`,
    `listing       ${listing.shown} entries shown, ${listing.omitted} omitted (--depth ${config.depth}, --map-tokens ${config.mapTokens}${config.maxEntries === null ? '' : `, --max-entries ${config.maxEntries}`})`,
    ...mapLines(listing),
    `tools         ${session.registry.names().join(', ')} · ~${groupDigits(estimateTokens(tools))} tokens`,
    `system        ${session.system.length} blocks · ~${groupDigits(estimateTokens(systemText))} tokens`,
    `conversation  ${session.conversation.messages.length} messages · last prompt ${groupDigits(session.conversation.lastPromptTokens)} tokens`,
    `programs      ${session.programs.join(' ')}`,
    `sandbox       ${describeSandbox(session.sandbox)}`,
    `git           ${session.git}`,
  ];
  return lines.join('\n');
}

/** Every instructions file loaded, outermost first, with its size and any cut. */
function instructionsLine(session: Session): string {
  const { instructions } = session;
  const files = [
    ...(instructions.ancestors ?? []).map((a) => ({ name: a.path, bytes: a.bytes, cut: a.truncatedBytes })),
    ...(instructions.file ? [{ name: instructions.file, bytes: instructions.bytes, cut: instructions.truncatedBytes }] : []),
  ];
  if (files.length === 0) return 'none (no AGENTS.md or CLAUDE.md at the root or above it in the git work tree)';
  const size = groupDigits;
  return files.map((f) => `${f.name}, ${size(f.bytes)} bytes${f.cut > 0 ? ` (${size(f.cut)} bytes cut)` : ''}`).join('; ');
}

/** The map's budget use: tokens, directories named and collapsed, coverage, what was cut and why. */
function mapLines(listing: Session['listing']): string[] {
  const map = listing.map;
  if (!map) return [];
  const share = (c: { named: number; total: number }) => `${c.named}/${c.total}`;
  const members = listing.workspaces
    ? ` · ${listing.workspaces.members.length} workspace members (${listing.workspaces.sources.join(', ')})`
    : '';
  return [
    `map           ~${groupDigits(map.tokens)} of ${groupDigits(map.budgetTokens)} tokens · ${map.dirsNamed} directories named, ${map.dirsCollapsed} in collapsed groups · depth 1 ${share(map.depth1)}, depth 2 ${share(map.depth2)} named${members}`,
    ...map.cut.map((reason) => `  cut         ${reason}`),
  ];
}
