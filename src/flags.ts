import { UsageError } from './errors.js';
import { closest } from './suggest.js';

/** What the flag check needs to know about the parser's options (read from yargs' own option table). */
export interface FlagTable {
  /** Long names, kebab-case (`max-turns`), and one-letter aliases (`m`). */
  names: ReadonlySet<string>;
  /** Names that take no value (`--quiet`, `--no-color`). */
  booleans: ReadonlySet<string>;
  /** Value flags that may also stand alone (`spelunk --resume` lists the sessions). */
  optionalValue: ReadonlySet<string>;
  /** One-letter alias → long name, for messages. */
  long: ReadonlyMap<string, string>;
}

/** Flags of other agent CLIs that people type out of habit, answered with what spelunk does instead. */
const FOREIGN: ReadonlyMap<string, string> = new Map([
  ['p', '-p is not needed: spelunk prints the answer by default when given a question (spelunk "where is X?")'],
  ['print', '--print is not needed: spelunk prints the answer by default when given a question (spelunk "where is X?")'],
]);

/** A mistyped long flag gets a suggestion when it is at most this many edits from a real one. */
const MAX_SUGGESTION_EDITS = 3;

/**
 * Checks every flag in argv before yargs reads it, so that each mistake is one line naming the flag: an unknown flag
 * gets the nearest real one (`--max-turn` → `--max-turns`), `-p` gets what spelunk does instead, and a flag that needs
 * a value and has none (`spelunk -C`, `--max-turns` at the end) says so instead of being dropped or taking '' silently.
 * Everything after `--` is the question.
 */
export function checkFlags(argv: readonly string[], table: FlagTable): void {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return;
    if (!isFlag(arg)) continue;
    const long = arg.startsWith('--');
    const body = long ? arg.slice(2) : arg.slice(1);
    const [name, inline] = splitInline(body);
    if (!long && inline === null && name.length > 1) {
      checkCluster(name, table);
      continue;
    }
    const real = long && name.startsWith('no-') && table.booleans.has(name.slice(3)) ? name.slice(3) : name;
    if (!table.names.has(real)) throw unknownFlag(long ? `--${name}` : `-${name}`, name, table);
    if (table.booleans.has(real) || table.optionalValue.has(real)) continue;
    const next = inline ?? argv[i + 1];
    // An empty value (`-C ''`, `--dir=`) would quietly mean the default: it is a missing value too.
    if (next === undefined || next.trim() === '' || (inline === null && (isFlag(next) || next === '--'))) {
      throw new UsageError(`${display(arg.split('=')[0]!, real, table)} needs a value, e.g. ${example(real, table)}`);
    }
    if (inline === null) i++;
  }
}

/** `-qi` is `-q -i`: only value-free one-letter flags may be grouped. */
function checkCluster(letters: string, table: FlagTable): void {
  for (const letter of letters) {
    if (!table.names.has(letter)) throw unknownFlag(`-${letter}`, letter, table);
    if (!table.booleans.has(letter)) throw new UsageError(`-${letter} takes a value, so it cannot be grouped with other flags in -${letters}; write it on its own: -${letter} <value>`);
  }
}

function unknownFlag(typed: string, name: string, table: FlagTable): UsageError {
  const foreign = FOREIGN.get(name);
  if (foreign) return new UsageError(foreign);
  // `--no-colour` is compared with the negatable flags, so the hint keeps its `no-`.
  const negated = name.startsWith('no-');
  const candidates = [...(negated ? table.booleans : table.names)].filter((n) => n.length > 1);
  const word = negated ? name.slice(3) : name;
  const [near] = closest(word, candidates, 1, word.length <= 2 ? 1 : MAX_SUGGESTION_EDITS);
  const hint = near === undefined ? 'see spelunk --help' : `did you mean --${negated ? 'no-' : ''}${near}?`;
  return new UsageError(`unknown flag ${typed}; ${hint}`);
}

/** True for `-x`, `--x`, `-xyz`; not for `-` (stdin), negative numbers or plain words. */
function isFlag(arg: string): boolean {
  return arg.length > 1 && arg.startsWith('-') && arg !== '--' && !/^-\d/.test(arg) && !/^-\.\d/.test(arg);
}

function splitInline(body: string): [string, string | null] {
  const eq = body.indexOf('=');
  return eq < 0 ? [body, null] : [body.slice(0, eq), body.slice(eq + 1)];
}

function display(arg: string, real: string, table: FlagTable): string {
  const long = table.long.get(real);
  return long ? `${arg}/--${long}` : arg;
}

function example(real: string, table: FlagTable): string {
  const name = table.long.get(real) ?? real;
  const samples: Record<string, string> = {
    dir: 'path/to/repo',
    model: 'sonnet',
    'output-format': 'json',
    effort: 'high',
    'verify-citations': 'fix',
  };
  return `--${name} ${samples[name] ?? '<value>'}`;
}

/**
 * A value-taking flag given more than once (`-m a -m b`) is refused rather than resolved by position: a wrapper or an
 * alias that adds one and a command line that adds another would otherwise run with a model, root or budget nobody
 * chose on purpose, and the cost of asking is one line. Booleans may repeat (`--color --no-color`: the last wins).
 */
export function rejectRepeats(args: Readonly<Record<string, unknown>>, valueFlags: readonly string[], table: FlagTable): void {
  for (const name of valueFlags) {
    // yargs keys options camel-cased (strip-dashed): `max-turns` is `maxTurns`.
    const value = args[name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())];
    if (!Array.isArray(value)) continue;
    const short = [...table.long].find(([, long]) => long === name)?.[0];
    const label = short ? `-${short}/--${name}` : `--${name}`;
    throw new UsageError(`${label} was given ${value.length} times (${value.map((v) => JSON.stringify(v)).join(', ')}); give it once`);
  }
}
