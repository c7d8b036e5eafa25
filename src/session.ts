import os from 'node:os';
import path from 'node:path';
import { Conversation } from './agent/conversation.js';
import type { ModelClient, SystemBlock } from './agent/model.js';
import type { Config } from './config.js';
import { buildListing, type Listing } from './preamble/listing.js';
import { loadProjectInstructions, type ProjectInstructions } from './preamble/agents-md.js';
import { buildSystemPrompt } from './preamble/system-prompt.js';
import { resolvePrograms } from './sandbox/programs.js';
import { createBashTool } from './tools/bash.js';
import { readFileTool } from './tools/read-file.js';
import { ToolRegistry } from './tools/registry.js';
import type { Tool } from './tools/tool.js';
import { UsageLedger } from './render/usage.js';

/** Everything one run (one-shot or REPL) shares across questions. */
export interface Session {
  system: SystemBlock[];
  registry: ToolRegistry;
  client: ModelClient;
  conversation: Conversation;
  ledger: UsageLedger;
  instructions: ProjectInstructions;
  listing: Listing;
  programs: string[];
  /** Things the person should know about the preamble (AGENTS.md cut or refused); shown once on stderr. */
  warnings: string[];
}

/**
 * Builds the preamble, tools and model client. The listing, AGENTS.md and program lookup run while the SDK chunk
 * loads (it is imported lazily), which is most of the start-up time on a large repository.
 */
export async function openSession(config: Config, extraTools: readonly Tool<any>[] = []): Promise<Session> {
  const sdk = import('./agent/client.js');
  const programsPromise = resolvePrograms();
  const rgPath = programsPromise.then((p) => p.get('rg') ?? null);
  const [programs, instructions, listing, clientModule] = await Promise.all([
    programsPromise,
    rgPath.then((rg) => loadProjectInstructions(config.root, rg ?? undefined)),
    rgPath.then((rg) =>
      rg
        ? buildListing(config.root, { depth: config.depth, maxEntries: config.maxEntries, rgPath: rg })
        : { text: '(listing unavailable: the ripgrep binary from @vscode/ripgrep was not found; reinstall spelunk)', shown: 0, omitted: 0, truncatedDirs: 0 },
    ),
    sdk,
  ]);
  const programNames = [...programs.keys()];
  const system = buildSystemPrompt({
    repoName: path.basename(config.root),
    platform: os.platform(),
    programs: programNames,
    instructions,
    listing,
    audit: extraTools.some((t) => t.name === 'report_findings'),
  });
  const registry = new ToolRegistry([readFileTool, createBashTool(programs), ...extraTools]);
  const client = clientModule.createAnthropicClient({ apiKey: config.apiKey, baseURL: config.baseURL });
  return { system, registry, client, conversation: new Conversation(), ledger: new UsageLedger(), instructions, listing, programs: programNames, warnings: instructions.warnings ?? [] };
}
