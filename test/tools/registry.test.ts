import { describe, expect, it } from 'vitest';
import { readFileTool } from '../../src/tools/read-file.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { Tool, ToolOutcome } from '../../src/tools/tool.js';
import { useRepo } from '../support/temp-repo.js';

const repo = useRepo({ 'README.md': 'first line\nsecond line\nthird line\n' });

/**
 * A tool whose run fails the way a programming error would: it throws, after aborting the call first when asked to
 * (Ctrl+C landing while the tool was still running).
 */
function crashTool(controller: AbortController): Tool<{ abortFirst: boolean }> {
  return {
    name: 'crash',
    description: 'throws',
    inputSchema: { type: 'object', properties: { abortFirst: { type: 'boolean' } } },
    parse: (input) => ({ ok: true, value: { abortFirst: (input as { abortFirst?: unknown } | null)?.abortFirst === true } }),
    display: () => 'crash',
    run: async (input) => {
      if (input.abortFirst) controller.abort();
      throw new Error('boom');
    },
  };
}

const registryOf = (controller: AbortController) => new ToolRegistry([readFileTool, crashTool(controller)]);

/** Dispatches one call the way the loop does, its signal aborted first when `abortBefore`; also what it read. */
async function dispatch(name: string, input: unknown, abortBefore = false): Promise<{ outcome: ToolOutcome; read: string[] }> {
  const controller = new AbortController();
  if (abortBefore) controller.abort();
  const read: string[] = [];
  const onRead = (abs: string) => read.push(abs);
  const outcome = await registryOf(controller).dispatch(name, input, { root: repo.root, signal: controller.signal, timeoutMs: 5000, onRead });
  return { outcome, read };
}

const CANCELLED = { content: 'Cancelled by the user before it finished.', summary: 'cancelled', isError: true };

describe('ToolRegistry.dispatch never throws: every failure is an error outcome written for the model', () => {
  it.each<[string, string, unknown, boolean, ToolOutcome]>([
    ['an unknown tool, naming the tools there are', 'grep', { pattern: 'x' }, false,
      { content: 'Unknown tool "grep". Available tools: read_file, crash.', summary: 'unknown tool grep', isError: true }],
    ['input the tool does not accept, with its parse error', 'read_file', { path: '' }, false,
      { content: expect.stringMatching(/^Invalid input for read_file: path must be a non-empty string\. read_file expects /),
        summary: expect.stringMatching(/^invalid input: path must be a non-empty string\. read_file expects /), isError: true }],
    ['a call cancelled before it starts', 'read_file', { path: 'README.md' }, true, CANCELLED],
    ['a crash while the call was being cancelled', 'crash', { abortFirst: true }, false, CANCELLED],
    ['a crash: spelunk failed, not the request', 'crash', {}, false, { content: 'crash failed: boom', summary: 'failed: boom', isError: true, infrastructure: true }],
  ])('%s', async (_what, name, input, abortBefore, expected) => {
    const { outcome, read } = await dispatch(name, input, abortBefore);
    expect(outcome).toEqual(expected);
    // None of these reaches a file: the tool never ran, or failed before reading.
    expect(read).toEqual([]);
  });

  it('runs a valid call and hands back the tool outcome as it is', async () => {
    const { outcome, read } = await dispatch('read_file', { path: 'README.md', start_line: 2, end_line: 2 });
    expect(outcome.isError).toBe(false);
    expect(outcome.content).toContain('2\tsecond line');
    expect(outcome.content).not.toContain('first line');
    expect(read).toEqual([`${repo.root}/README.md`]);
  });
});

describe('ToolRegistry.display shows a call before it runs', () => {
  it.each<[string, unknown, string]>([
    ['read_file', { path: 'README.md', start_line: 2, end_line: 9 }, 'README.md:2-9'],
    ['read_file', { path: 'README.md' }, 'README.md'],
    ['read_file', { path: 7 }, '(invalid input)'],
    ['grep', { pattern: 'x' }, '(unknown tool)'],
  ])('%s %j → %s', (name, input, shown) => {
    expect(registryOf(new AbortController()).display(name, input)).toBe(shown);
  });
});

describe('ToolRegistry.names and definitions', () => {
  it('lists the tools in the order they were given', () => {
    const registry = registryOf(new AbortController());
    expect(registry.names()).toEqual(['read_file', 'crash']);
    expect(registry.definitions().map((d) => d.name)).toEqual(['read_file', 'crash']);
  });
});
