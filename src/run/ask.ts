import type { AgentEvent } from '../agent/events.js';
import { askQuestion, type Budget, type LoopConfig } from '../agent/loop.js';
import type { Config } from '../config.js';
import type { Io } from '../io.js';
import { createTextRenderer, type TextRenderer } from '../output/text.js';
import { estimateTokens } from '../preamble/system-prompt.js';
import { worstCaseCostUsd } from '../agent/pricing.js';
import type { Session } from './session.js';

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
          worstCaseUsd: (prompt, output) => worstCaseCostUsd(config.model, prompt, output),
        };
  return {
    client: session.client,
    model: config.model,
    maxTokens: config.maxTokens,
    maxTurns: config.maxTurns,
    thinking: config.thinking,
    system: session.system,
    registry: session.registry,
    root: config.root,
    toolTimeoutMs: config.toolTimeoutMs,
    timeoutMs: config.timeoutMs,
    ...(session.toolsReady ? { toolsReady: session.toolsReady } : {}),
    ...(onRead ? { onRead } : {}),
    ...(budget ? { budget } : {}),
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
): Promise<Extract<AgentEvent, { type: 'done' }>> {
  const all = Array.isArray(sinks) ? sinks : [sinks as EventSink];
  let last: Extract<AgentEvent, { type: 'done' }> | null = null;
  for await (const event of askQuestion(question, session.conversation, loopConfig(session, config, onRead), signal)) {
    for (const sink of all) sink.handle(event);
    if (event.type === 'done') last = event;
  }
  return last ?? { type: 'done', stop: 'api_error', text: '', turns: 0, message: 'the loop ended without a result' };
}

/** The live text view of a session (answer on stdout, activity on stderr; the spinner only on a terminal). */
export function liveTextRenderer(config: Config, io: Io, session: Session, color: boolean): TextRenderer {
  return createTextRenderer({
    stdout: io.stdout,
    stderr: io.stderr,
    color,
    verbose: config.verbose,
    showThinking: config.showThinking,
    spinner: io.stderr.isTTY === true,
    ledger: session.ledger,
  });
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
    `tools         ${session.registry.names().join(', ')} · ~${estimateTokens(tools).toLocaleString('en-US')} tokens`,
    `system        ${session.system.length} blocks · ~${estimateTokens(systemText).toLocaleString('en-US')} tokens`,
    `conversation  ${session.conversation.messages.length} messages · last prompt ${session.conversation.lastPromptTokens.toLocaleString('en-US')} tokens`,
    `programs      ${session.programs.join(' ')}`,
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
  const size = (n: number) => n.toLocaleString('en-US');
  return files.map((f) => `${f.name}, ${size(f.bytes)} bytes${f.cut > 0 ? ` (${size(f.cut)} bytes cut)` : ''}`).join('; ');
}

/** The map's budget use: tokens, directories named and collapsed, coverage, what was cut and why. */
function mapLines(listing: Session['listing']): string[] {
  const map = listing.map;
  if (!map) return [];
  const share = (c: { named: number; total: number }) => `${c.named}/${c.total}`;
  const members = listing.workspaces ? ` · ${listing.workspaces.members.length} workspace members (${listing.workspaces.sources.join(', ')})` : '';
  return [
    `map           ~${map.tokens.toLocaleString('en-US')} of ${map.budgetTokens.toLocaleString('en-US')} tokens · ${map.dirsNamed} directories named, ${map.dirsCollapsed} in collapsed groups · depth 1 ${share(map.depth1)}, depth 2 ${share(map.depth2)} named${members}`,
    ...map.cut.map((reason) => `  cut         ${reason}`),
  ];
}
