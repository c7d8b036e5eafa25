import os from 'node:os';
import path from 'node:path';
import { Conversation } from '../agent/conversation.js';
import type { ModelClient, SystemBlock } from '../agent/model.js';
import type { Config } from '../config.js';
import { buildListing, type Listing, type ListingOptions } from '../preamble/listing.js';
import { loadedFiles, loadProjectInstructions, NESTED_DEFAULT_DEPTH, nestedSearch } from '../preamble/agents-md.js';
import type { ProjectInstructions } from '../preamble/agents-md.js';
import type { MentionSource } from '../preamble/rank.js';
import type { DeepHint } from '../preamble/deep-hint.js';
import { buildSystemPrompt } from '../preamble/system-prompt.js';
import { bundledRg, resolvePrograms } from '../sandbox/programs.js';
import { gitAvailability, type GitAvailability } from '../tools/git.js';
import { escapeControls } from '../escape.js';
import { findWorkTree } from '../sandbox/git.js';
import { currentSandbox } from '../sandbox/exec.js';
import type { SandboxKind } from '../sandbox/kernel.js';
import { sessionTools } from '../tools/index.js';
import type { FindingsSink } from '../audit/report.js';
import { ToolRegistry } from '../tools/registry.js';
import type { Tool } from '../tools/tool.js';
import { UsageLedger } from '../output/usage.js';
import { lazySymbols, type SymbolSource } from '../symbols/layer.js';
import { Redactor } from '../secrets/redactor.js';
import { redactInstructions } from '../preamble/redact-instructions.js';

/** Everything one run (one-shot or REPL) shares across questions. */
export interface Session {
  system: SystemBlock[];
  registry: ToolRegistry;
  client: ModelClient;
  conversation: Conversation;
  ledger: UsageLedger;
  /**
   * The sandbox this session's programs run in, read once when it opens (the process chose it at start-up, before
   * any child ran): the tools' policy, the read-only proof, the result and /context read it from here.
   */
  sandbox: SandboxKind;
  instructions: ProjectInstructions;
  /** The instructions files in the system prompt, outermost first, relative to the root (`../../CLAUDE.md`, `AGENTS.md`). */
  instructionFiles: string[];
  listing: Listing;
  programs: string[];
  /** The tools' gate (the read-only snapshot), settled never rejected; the loop waits for it and reports the wait. */
  toolsReady: Promise<void> | null;
  /** Things the person should know about the preamble (AGENTS.md cut or refused); shown once on stderr. */
  warnings: string[];
  /** What the git tool reads here, or why it is not offered (one line, for /context). */
  git: string;
  /** The symbol layer every tool call of the session shares (read_file's outline), loaded on first use. */
  symbols: SymbolSource;
  /** Where secrets are left out of tool results, the instructions files and citation excerpts (src/secrets). */
  redactor: Redactor;
}

export interface SessionOptions {
  /** An audit: where report_findings files the report (adds the tool and the audit rules to the prompt). */
  audit?: FindingsSink | null;
  /**
   * Every tool call waits for this first. One-shot runs pass the read-only snapshot (the start time and HEAD, later
   * checked with one `find -newerct` walk; see sandbox/readonly.ts): it must be taken before any tool runs, but need
   * not delay the first request.
   */
  toolsReady?: Promise<unknown>;
  /** Where the map's deeper walk may start early (the directories it opened last time, see preamble/deep-hint.ts). */
  deep?: DeepHint;
  /** The symbol layer (front ends pass one with the user's cache directory); absent: one cached in memory only. */
  symbols?: SymbolSource;
}

/** The repository map from the session's settings, or why it is unavailable (no ripgrep binary). */
async function mapOf(config: Config, rg: string | null, extra: Pick<ListingOptions, 'instructions' | 'firstWalk' | 'deep'>): Promise<Listing> {
  if (!rg) {
    const text = '(listing unavailable: the ripgrep binary from @vscode/ripgrep was not found; reinstall spelunk)';
    return { text, shown: 0, omitted: 0, truncatedDirs: 0 };
  }
  return buildListing(config.root, { depth: config.depth, maxEntries: config.maxEntries, mapTokens: config.mapTokens, rgPath: rg, ...extra });
}

/**
 * Builds the preamble, tools and model client. Order matters for start-up time: ripgrep (listing, nested AGENTS.md)
 * is spawned first, then the SDK chunk is evaluated on the main thread while it walks the repository.
 */
export async function openSession(config: Config, opts: SessionOptions = {}): Promise<Session> {
  // Settled, never rejected (handled from the start): a failed snapshot is the caller's to report; the tools still run.
  const ready = opts.toolsReady?.then(() => undefined, () => undefined);
  const rg = bundledRg();
  // The listing's first walk reaches the nested AGENTS.md search's depth unless --depth is lower: one walk serves both.
  const nested = config.depth >= NESTED_DEFAULT_DEPTH ? nestedSearch() : null;
  const redactor = new Redactor(config.allowSecrets !== true);
  const instructionsPromise = rg
    .then((rg) => loadProjectInstructions(config.root, rg ?? undefined, nested && rg ? { nested: nested.found } : {}))
    .then((loaded) => redactInstructions(loaded, redactor));
  // The map ranks directories the instructions mention first: the walk starts at once, the ranking waits for them.
  const mentions = instructionsPromise.then((loaded) => instructionTexts(loaded, config.root));
  const listingPromise = rg.then((rg) => mapOf(config, rg, { instructions: mentions, ...(nested ? { firstWalk: nested } : {}), ...(opts.deep ? { deep: opts.deep } : {}) }));
  const sdk = rg.then(() => import('../agent/client.js'));
  const [programs, instructions, listing, clientModule, git] = await Promise.all([
    resolvePrograms(rg),
    instructionsPromise,
    listingPromise,
    sdk,
    gitAvailability(config.root),
  ]);
  const programNames = [...programs.keys()];
  const system = buildSystemPrompt({
    repoName: path.basename(config.root),
    platform: os.platform(),
    programs: programNames,
    instructions,
    listing,
    audit: opts.audit !== undefined && opts.audit !== null,
    git: git.available ? null : git.reason,
  });
  const tools = sessionTools(programs, opts.audit ?? null, git.available ? git.git : null);
  const registry = new ToolRegistry(ready ? tools.map((tool) => gated(tool, ready)) : tools, redactor);
  const client = clientModule.createAnthropicClient({
    apiKey: config.apiKey,
    ...(config.credential ? { credential: config.credential } : {}),
    baseURL: config.baseURL,
    ...(config.provider ? { provider: config.provider } : {}),
  });
  return {
    system,
    registry,
    client,
    conversation: new Conversation(),
    ledger: new UsageLedger(),
    sandbox: currentSandbox().kind,
    instructions,
    instructionFiles: loadedFiles(instructions),
    listing,
    programs: programNames,
    toolsReady: ready ?? null,
    warnings: [...(instructions.warnings ?? []), ...gitWarnings(git, config.root)],
    git: gitLine(git),
    symbols: opts.symbols ?? lazySymbols({}),
    redactor,
  };
}

/**
 * What is worth a stderr line about the git tool, once: what it reads when that is more than the root's own repository
 * (a linked worktree's repository; the enclosing repository of a subdirectory root, confined to it), and why it is not
 * offered where there is a work tree (a special file, a pointer or an alternate outside it, no git binary).
 */
function gitWarnings(git: GitAvailability, root: string): string[] {
  if (git.available && git.confinedTo !== undefined) {
    return [
      `git history: the repository at ${escapeControls(git.confinedTo.top)}, confined to ${escapeControls(git.confinedTo.prefix)} (only the history of files under this root)`,
    ];
  }
  if (git.available) {
    return git.linkedTo === undefined
      ? []
      : [
          `git history: this root is a linked worktree; the git tool reads its repository at ${escapeControls(git.linkedTo)} (read-only; nothing else outside the root)`,
        ];
  }
  if (git.unsafe) return [`git is not used for this repository: ${git.reason}`];
  return findWorkTree(root) === null ? [] : [`git history is not offered: ${escapeControls(git.reason)}`];
}

function gitLine(git: GitAvailability): string {
  if (!git.available) return `not offered: ${git.reason}`;
  if (git.confinedTo !== undefined) {
    return `history of the repository at ${escapeControls(git.confinedTo.top)}, confined to ${escapeControls(git.confinedTo.prefix)} (files outside this root are never shown)`;
  }
  return git.linkedTo === undefined
    ? 'history of the repository at the root'
    : `history of the repository at ${escapeControls(git.linkedTo)} (a linked worktree)`;
}

/** The instructions as the map's ranking reads them: an ancestor's paths are re-rooted (`../../CLAUDE.md` → 2 levels). */
function instructionTexts(instructions: ProjectInstructions, root: string): MentionSource[] {
  const ancestors = (instructions.ancestors ?? []).map((a) => {
    const up = a.path.split('/').filter((part) => part === '..').length;
    return { text: a.text, below: root.split(path.sep).filter(Boolean).slice(-up).join('/') };
  });
  return [...ancestors, ...(instructions.text ? [instructions.text] : [])];
}

/**
 * `tool`, whose runs start only once `ready` resolves or the call is cancelled (the tool then reports that itself).
 * The loop already waits for `ready` before it starts the clock on a call; this gate keeps the guarantee for any
 * other caller of the registry.
 */
function gated<I>(tool: Tool<I>, ready: Promise<void>): Tool<I> {
  return {
    ...tool,
    run: async (input, ctx) => {
      // The listener is removed once the gate opens: a turn of many calls must not pile them up on one signal.
      const onAbort = (): void => release();
      let release = (): void => {};
      await new Promise<void>((resolve) => {
        release = resolve;
        void ready.then(resolve);
        if (ctx.signal.aborted) resolve();
        else ctx.signal.addEventListener('abort', onAbort, { once: true });
      });
      ctx.signal.removeEventListener('abort', onAbort);
      return tool.run(input, ctx);
    },
  };
}
