import { groupDigits } from '../digits.js';
import type { Config } from '../config.js';
import { estimateTokens } from '../preamble/system-prompt.js';
import { describeSandbox } from '../sandbox/kernel.js';
import type { Session } from './session.js';

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
