import type { LoopConfig } from '../../src/agent/loop.js';
import type { ModelClient } from '../../src/agent/model.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { Tool } from '../../src/tools/tool.js';

/** A tool that echoes its input, or waits for the abort signal when asked to. */
export const echoTool: Tool<{ say: string; wait?: boolean }> = {
  name: 'echo',
  description: 'echo',
  inputSchema: { type: 'object', properties: { say: { type: 'string' } }, required: ['say'] },
  parse: (input) => {
    const say = (input as { say?: unknown } | null)?.say;
    return typeof say === 'string' ? { ok: true, value: input as { say: string } } : { ok: false, error: 'say must be a string' };
  },
  display: (input) => input.say,
  run: async (input, ctx) => {
    if (input.wait) {
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
      return { content: 'killed', summary: 'cancelled', isError: true };
    }
    return { content: `echo: ${input.say}`, summary: '1 line', isError: false };
  },
};

/** The agent loop's tests' config: `client`, the echo tool, five turns, a one-block system prompt; `extra` overrides. */
export function testLoopConfig(client: ModelClient, extra: Partial<LoopConfig> = {}): LoopConfig {
  return {
    client,
    model: 'claude-sonnet-5-5',
    maxTokens: 1000,
    maxTurns: 5,
    thinking: false,
    system: [{ type: 'text', text: 'system', cache_control: { type: 'ephemeral' } }],
    registry: new ToolRegistry([echoTool]),
    root: '/',
    toolTimeoutMs: 1000,
    ...extra,
  };
}
