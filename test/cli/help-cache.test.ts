import yargs from 'yargs/yargs';
import { describe, expect, it } from 'vitest';
import { parseArgs, skipHelpCache } from '../../src/args.js';

/**
 * yargs renders and caches the whole help text whenever a subcommand's handler runs; spelunk never shows that cached
 * text, and rendering it cost ~100-200 ms per `spelunk locate`. These rows hold the yargs internal the skip relies on,
 * so an upgrade that renames it fails here instead of silently bringing the cost back.
 */
type Usage = { hasCachedHelpMessage(): boolean };
function usageOf(parser: ReturnType<typeof yargs>): Usage {
  return (parser as unknown as { getInternalMethods(): { getUsageInstance(): Usage } }).getInternalMethods().getUsageInstance();
}

function withCommand(): ReturnType<typeof yargs> {
  return yargs(['locate', 'q'])
    .command('locate [question..]', 'rank files', (y) => y.positional('question', { type: 'string', array: true }), () => {})
    .exitProcess(false);
}

describe('the help text is not rendered for a subcommand run', () => {
  it('yargs caches it without the skip (the internal still exists)', () => {
    const parser = withCommand();
    parser.parseSync();
    expect(usageOf(parser).hasCachedHelpMessage()).toBe(true);
  });

  it('with the skip, nothing is cached', () => {
    const parser = withCommand();
    skipHelpCache(parser);
    parser.parseSync();
    expect(usageOf(parser).hasCachedHelpMessage()).toBe(false);
  });

  it.each([
    [['locate', 'where', 'is', 'it'], { locate: true, question: 'where is it' }],
    [['audit', 'q'], { audit: true, question: 'q' }],
    [['mcp'], { mcp: true, question: null }],
  ])('spelunk %j still picks its subcommand', async (argv, expected) => {
    expect(await parseArgs(argv, 100)).toMatchObject({ kind: 'run', ...expected });
  });

  it('spelunk locate --help still prints the command help', async () => {
    const parsed = await parseArgs(['locate', '--help'], 100);
    expect(parsed.kind).toBe('output');
    expect(parsed.kind === 'output' ? parsed.text : '').toMatch(/spelunk locate \[question\.\.\]/);
  });
});
