import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolvePrograms, type Programs } from '../../src/sandbox/programs.js';
import { GIT_BINARY } from '../../src/sandbox/git.js';
import { createBashTool } from '../../src/tools/bash.js';
import { createGitTool } from '../../src/tools/git.js';
import type { ToolOutcome } from '../../src/tools/tool.js';
import { makeRepo } from '../support/temp-repo.js';

/**
 * Every command a refusal or a pipeline note names in backticks is one the named tool accepts: a suggestion the model
 * sends back must run, not be refused in turn.
 */

let repo: Awaited<ReturnType<typeof makeRepo>>;
let programs: Programs;
beforeAll(async () => {
  [repo, programs] = await Promise.all([makeRepo({ 'README.md': '# r\nneedle\n', 'src/a.ts': 'needle\n' }, { git: true }), resolvePrograms()]);
});
afterAll(async () => repo.cleanup());

const ctx = () => ({ root: repo.root, signal: new AbortController().signal, timeoutMs: 20_000 });
const bash = (command: string): Promise<ToolOutcome> => createBashTool(programs).run({ command }, ctx());
const git = (command: string): Promise<ToolOutcome> => createGitTool(GIT_BINARY as string).run({ command }, ctx());

describe('suggestions are accepted by the tool they name', () => {
  it.each<[string, 'bash' | 'git', RegExp, 'bash' | 'git']>([
    ['git log --oneline -n 5', 'bash', /use the git tool and send it `log --oneline -n 5`/, 'git'],
    ['git shortlog -sn', 'bash', /send it `shortlog -sn`/, 'git'],
    ["git log -S 'needle' --oneline", 'bash', /send it `log -S needle --oneline`/, 'git'],
    ['git show HEAD:README.md', 'bash', /send it `show HEAD:README.md`/, 'git'],
    ['cat README.md | grep needle README.md', 'bash', /run `grep needle README.md` as its own command/, 'bash'],
    ['cat src/a.ts | head -n 1 src/a.ts | wc -l', 'bash', /run `head -n 1 src\/a.ts` as its own command/, 'bash'],
  ])('%j (%s tool) → a suggestion for the %s tool that it accepts', async (command, from, pattern, to) => {
    const answer = from === 'bash' ? await bash(command) : await git(command);
    expect(answer.content).toMatch(pattern);
    const suggestions = [...answer.content.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string).filter((s) => !s.includes(' | ') && !s.startsWith('|'));
    expect(suggestions.length).toBeGreaterThan(0);
    for (const suggestion of suggestions.slice(-1)) {
      const run = to === 'bash' ? await bash(suggestion) : await git(suggestion);
      expect(run.content, suggestion).not.toMatch(/^Command refused/);
      expect(run.isError, run.content).toBe(false);
    }
  });
});
