import { describe, expect, it } from 'vitest';
import { APPLIES, flagsOf, OPTIONS, parseArgs, type Command } from '../../src/args.js';

const COMMANDS: [Command, string[]][] = [
  ['ask', []],
  ['audit', ['audit']],
  ['locate', ['locate']],
  ['mcp', ['mcp']],
];

async function help(argv: string[], width = 100): Promise<string> {
  const parsed = await parseArgs([...argv, '--help'], width);
  if (parsed.kind !== 'output') throw new Error(`${argv.join(' ')} --help did not print help`);
  return parsed.text;
}

/** The long names (or the letter, for -k) a help's Options section lists. */
function listed(text: string): string[] {
  const options = text.split('\nOptions:\n')[1]!.split('\n\n')[0]!;
  return options
    .split('\n')
    .map((line) => /^ {2}(?:-\w, |    )?--?([\w-]+)\s/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
}

describe('each help lists exactly the flags that apply to its command (from the flag table)', () => {
  it.each(COMMANDS)('%s', async (command, argv) => {
    const expected = [...flagsOf(command), 'help', 'version'].sort();
    expect(listed(await help(argv)).sort()).toEqual(expected);
  });

  it('spelunk --help fits one screen: at most 60 lines at 100 columns', async () => {
    expect((await help([])).trimEnd().split('\n').length).toBeLessThanOrEqual(60);
  });

  it('spelunk help prints the same text as spelunk --help', async () => {
    const parsed = await parseArgs(['help'], 100);
    expect(parsed.kind === 'output' ? parsed.text : '').toBe(await help([]));
  });

  it('locate names only the formats it writes', async () => {
    expect(await help(['locate'])).toMatch(/--output-format +text \| json +\[/);
  });

  it('no command lists a flag that applies nowhere, and every flag applies somewhere', () => {
    for (const [name, commands] of Object.entries(APPLIES)) expect([name, commands.length > 0]).toEqual([name, true]);
  });
});

/** Hiding a flag from a help must not change what parses: a script that passes it keeps working (config.ts refuses the ones that would be silently wrong). */
describe('a flag hidden from a command still parses there', () => {
  const rows = COMMANDS.flatMap(([command, argv]) =>
    Object.keys(APPLIES)
      .filter((name) => !flagsOf(command).includes(name))
      .map((name) => [command, name, argv] as const),
  );
  it.each(rows)('%s --%s', async (command, name, argv) => {
    const flag = name.length === 1 ? `-${name}` : `--${name}`;
    // mcp takes no question.
    const parsed = await parseArgs([...argv, flag, ...(isBoolean(name) ? [] : ['1']), ...(command === 'mcp' ? [] : ['q'])], 100);
    expect(parsed.kind).toBe('run');
  });
});

function isBoolean(name: string): boolean {
  return OPTIONS[name as keyof typeof OPTIONS].type === 'boolean';
}
