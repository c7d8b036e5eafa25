import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

let api: MockApi;
const repo = useRepo(APP_FILES, { git: true });
const env = () => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url });
const messages = () => api.requests.filter((r) => r.path === '/v1/messages');

afterEach(async () => {
  await api?.close();
});

/** Every Node process warning emitted while `run` is under way. */
async function warningsDuring<T>(run: () => Promise<T>): Promise<{ result: T; warnings: string[] }> {
  const warnings: string[] = [];
  const onWarning = (warning: Error): void => {
    warnings.push(`${warning.name}: ${warning.message}`);
  };
  process.on('warning', onWarning);
  try {
    const result = await run();
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    return { result, warnings };
  } finally {
    process.off('warning', onWarning);
  }
}

/** What the bash tool returns for `rg -n -c require FILE`. */
function rgCount(content: string): string {
  const n = content.split('\n').filter((line) => line.includes('require')).length;
  return n === 0 ? '[no matches (exit 1)]' : `${n}\n[exit 0]`;
}

const FILES = ['src/server.js', 'src/router.js', 'src/auth.js', 'package.json', 'AGENTS.md'];

describe('many tool calls in one turn (one-shot, through the read-only gate)', () => {
  it.each([10, 20, 40])('%i calls: results in tool_use order in one message, no Node warning', async (count) => {
    api = await startMockApi();
    const calls = Array.from({ length: count }, (_, i) =>
      i % 2 === 0 ? toolUse('read_file', { path: FILES[i % FILES.length] }, `toolu_${i}`) : toolUse('bash', { command: `rg -n -c require ${FILES[i % FILES.length]}` }, `toolu_${i}`),
    );
    api.enqueue(reply(text('Looking at everything at once.'), ...calls), reply(text('Done.')));
    const { result, warnings } = await warningsDuring(() => runCli(['-C', repo.root, 'q'], { env: env() }));
    expect(warnings).toEqual([]);
    expect(result.code).toBe(0);
    const second = messages()[1]!.body.messages!.at(-1)!.content as Array<Record<string, any>>;
    expect(second.map((b) => b.tool_use_id)).toEqual(calls.map((c) => (c as { id: string }).id));
    for (const [i, block] of second.entries()) {
      expect(block.is_error, String(block.content)).toBeUndefined();
      const file = FILES[i % FILES.length]!;
      // read_file shows the file's first line; rg -c prints the count of matching lines of that very file.
      if (i % 2 === 0) expect(block.content).toContain(APP_FILES[file]!.split('\n')[0]!);
      else expect(block.content.trim()).toBe(rgCount(APP_FILES[file]!));
    }
  });
});
