import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import { checkFlags, rejectRepeats, type FlagTable } from '../src/flags.js';

// The flag check on a table of its own (not the CLI's, which changes with the flags): every row is one argv and the
// one line it gets, or null for none. The CLI-level rows of test/cli/flags.test.ts run main() for each (~1 s a row
// here), too slow for the mutation area of src/flags.ts (scripts/mutation-areas.json, area "flags"); these take ms.
const TABLE: FlagTable = {
  names: new Set(['model', 'm', 'dir', 'C', 'max-turns', 'output-format', 'effort', 'verify-citations', 'resume', 'quiet', 'q', 'interactive', 'i', 'color', 'verbose']),
  booleans: new Set(['quiet', 'q', 'interactive', 'i', 'color', 'verbose']),
  optionalValue: new Set(['resume']),
  long: new Map([['m', 'model'], ['C', 'dir'], ['q', 'quiet'], ['i', 'interactive']]),
};

function said(run: () => void): string | null {
  try {
    run();
    return null;
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
}

describe('checkFlags: one line naming the flag', () => {
  it.each<[string[], string | null]>([
    [['where', 'is', 'it?'], null],
    [['--', '--bogus', '-m'], null],
    [['-'], null],
    [['-5'], null],
    [['-.5'], null],
    [['--max-turns', '-1', 'q'], null],
    [['--max-turns', '-.5', 'q'], null],
    [['-qi', 'q'], null],
    [['--no-color', 'q'], null],
    [['--verbose', 'q'], null],
    [['--resume'], null],
    [['--resume', '--verbose'], null],
    [['-m=opus', 'q'], null],
    [['--model', 'opus', 'q'], null],
    [['--model=opus', '--bogus'], 'unknown flag --bogus; see spelunk --help'],
    [['--model', 'opus', '--bogus'], 'unknown flag --bogus; see spelunk --help'],
    [['--verbose', '--bogus'], 'unknown flag --bogus; see spelunk --help'],
    [['--max-turn', '5'], 'unknown flag --max-turn; did you mean --max-turns?'],
    [['--max-turn=5'], 'unknown flag --max-turn; did you mean --max-turns?'],
    [['--dri', 'x'], 'unknown flag --dri; did you mean --dir?'],
    [['--mx'], 'unknown flag --mx; see spelunk --help'],
    [['--no-colour'], 'unknown flag --no-colour; did you mean --no-color?'],
    [['--no-model', 'q'], 'unknown flag --no-model; see spelunk --help'],
    [['-x'], 'unknown flag -x; see spelunk --help'],
    [['-qx'], 'unknown flag -x; see spelunk --help'],
    [['-qm', 'opus'], '-m takes a value, so it cannot be grouped with other flags in -qm; write it on its own: -m <value>'],
    [['-p', 'q'], '-p is not needed: spelunk prints the answer by default when given a question (spelunk "where is X?")'],
    [['--print', 'q'], '--print is not needed: spelunk prints the answer by default when given a question (spelunk "where is X?")'],
    [['-C'], '-C/--dir needs a value, e.g. --dir path/to/repo'],
    [['-C='], '-C/--dir needs a value, e.g. --dir path/to/repo'],
    [['q', '-m'], '-m/--model needs a value, e.g. --model sonnet'],
    [['-m', '', 'q'], '-m/--model needs a value, e.g. --model sonnet'],
    [['--model', ' ', 'q'], '--model needs a value, e.g. --model sonnet'],
    [['--dir=', 'q'], '--dir needs a value, e.g. --dir path/to/repo'],
    [['--max-turns'], '--max-turns needs a value, e.g. --max-turns <value>'],
    [['--max-turns', '--verbose'], '--max-turns needs a value, e.g. --max-turns <value>'],
    [['--max-turns', '--'], '--max-turns needs a value, e.g. --max-turns <value>'],
    [['--output-format'], '--output-format needs a value, e.g. --output-format json'],
    [['--effort'], '--effort needs a value, e.g. --effort high'],
    [['--verify-citations', ''], '--verify-citations needs a value, e.g. --verify-citations fix'],
    // An inline value may look like a flag; a grouped one may not carry a value.
    [['--model=-x', 'q'], null],
    [['-qm=x'], 'unknown flag -qm; see spelunk --help'],
    // Only `--no-` makes a negation; a flag that merely ends like a boolean is unknown.
    [['--xyzcolor'], 'unknown flag --xyzcolor; did you mean --color?'],
    // Three letters or more get suggestions up to three edits away.
    [['--mdl'], 'unknown flag --mdl; did you mean --model?'],
    // A number inside a flag's name does not make it a value.
    [['--max-turns-2', 'q'], 'unknown flag --max-turns-2; did you mean --max-turns?'],
    [['--scale-.5', 'q'], 'unknown flag --scale-.5; see spelunk --help'],
  ])('%j', (argv, line) => {
    expect(said(() => checkFlags(argv, TABLE))).toBe(line);
  });
});

describe('rejectRepeats: a value flag given twice', () => {
  it.each<[Record<string, unknown>, string | null]>([
    [{ model: 'a', maxTurns: 3 }, null],
    [{ model: ['a', 'b'] }, '-m/--model was given 2 times ("a", "b"); give it once'],
    [{ maxTurns: [3, 4, 5] }, '--max-turns was given 3 times (3, 4, 5); give it once'],
    [{ verbose: [true, false] }, null],
  ])('%j', (args, line) => {
    expect(said(() => rejectRepeats(args, ['model', 'max-turns', 'dir'], TABLE))).toBe(line);
  });
});
