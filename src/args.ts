import yargs, { type Argv, type Options } from 'yargs';
import type { RawFlags } from './config.js';
import { UsageError } from './errors.js';
import { EXIT_SUMMARY } from './exit-codes.js';
import { closest } from './suggest.js';
import { checkFlags, rejectRepeats, type FlagTable } from './flags.js';
import { MODEL_ALIASES } from './agent/model.js';
import { LARGE_QUESTION_LABEL } from './run/question.js';
import { VERSION } from './version.js';

/** The part of yargs' option table the flag check reads. */
interface YargsOptions {
  key: Record<string, unknown>;
  boolean: string[];
  alias: Record<string, string[]>;
}

/** Subcommands a single mistyped word is compared with (one edit away gets a hint instead of a model request). */
const COMMANDS = ['audit', 'help', 'locate', 'mcp'] as const;

export type Parsed =
  | { kind: 'output'; text: string } // --help / -v / help
  | { kind: 'run'; audit: boolean; mcp: boolean; locate?: boolean; question: string | null; flags: RawFlags & { k?: number; explain?: boolean } };

const EPILOG = `Exit codes: ${EXIT_SUMMARY}
Models: ${[...MODEL_ALIASES].map(([alias, id]) => `${alias} = ${id}`).join(' · ')}
Environment: ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), ANTHROPIC_BASE_URL, CLAUDE_CODE_USE_BEDROCK/_VERTEX/_FOUNDRY, SPELUNK_MODEL, SPELUNK_SANDBOX, SPELUNK_ALLOW_HOME=1, SPELUNK_ALLOW_SECRETS=1 (not for audit), SPELUNK_EDITOR_URL, NO_COLOR, FORCE_COLOR`;

/** Every flag: yargs' option table (a string table, kept whole; the flag check reads it back from yargs). */
export const OPTIONS = {
  dir: { alias: 'C', type: 'string', describe: 'repository root', default: undefined, defaultDescription: 'current directory' },
  model: { alias: 'm', type: 'string', describe: 'model id or alias (see Models below)', defaultDescription: 'sonnet' },
  provider: { type: 'string', describe: 'who serves Claude: anthropic | bedrock | vertex | foundry', defaultDescription: 'from CLAUDE_CODE_USE_BEDROCK/_VERTEX/_FOUNDRY, else anthropic' },
  interactive: { alias: 'i', type: 'boolean', describe: 'answer the question, then stay in the REPL' },
  'max-turns': { type: 'number', describe: 'model requests per question', defaultDescription: '25' },
  'max-tokens': { type: 'number', describe: 'output tokens per request', defaultDescription: '16000' },
  depth: { type: 'number', describe: 'listing depth in the preamble', defaultDescription: '3' },
  'max-entries': { type: 'number', describe: 'cap on the lines of the repository map', defaultDescription: 'none' },
  'map-tokens': { type: 'number', describe: 'token budget of the repository map', defaultDescription: '2000' },
  'tool-timeout': { type: 'number', describe: 'seconds per tool call', defaultDescription: '30' },
  'output-format': { type: 'string', describe: 'text | json | stream-json', defaultDescription: 'text' },
  k: { type: 'number', describe: 'files to print', defaultDescription: '10' },
  explain: { type: 'boolean', describe: 'show what each result\'s score is made of' },
  'max-budget-usd': { type: 'number', describe: 'stop before the estimated cost could exceed this' },
  'max-budget-usd-per-call': { type: 'number', describe: 'the --max-budget-usd of each tool call' },
  'max-budget-usd-total': { type: 'number', describe: 'stop accepting calls once this much is spent' },
  'max-concurrent-calls': { type: 'number', describe: 'tool calls answered at once (16 more wait)', defaultDescription: '4' },
  'max-memory-gib': { type: 'number', describe: 'memory of all programs at once (1 GiB each)', defaultDescription: '4' },
  timeout: { type: 'number', describe: 'seconds for the whole run (exit 3 when reached)' },
  'fail-on': { type: 'string', describe: 'lowest severity that fails (low|medium|high|critical)', defaultDescription: 'high' },
  sarif: { type: 'string', describe: 'write SARIF 2.1.0 findings to this file (only when the audit reaches a verdict)' },
  'sarif-category': { type: 'string', describe: 'SARIF run.automationDetails.id (GitHub code-scanning category)', defaultDescription: 'spelunk/<slug of the question>/' },
  'sarif-on-error': { type: 'string', describe: 'without a verdict, write no SARIF (none) or one reporting the failure (notification)', defaultDescription: 'none' },
  diff: { type: 'string', describe: 'judge the change BASE[...HEAD] (git diff BASE...HEAD; HEAD by default)' },
  'diff-file': { type: 'string', describe: 'judge the change in this unified diff file (no git needed)' },
  scope: { type: 'string', describe: 'with a diff: findings that count for --fail-on (line|file|repo)', defaultDescription: 'line' },
  baseline: { type: 'string', describe: 'accepted findings (fingerprints file outside the repository)' },
  'update-baseline': { type: 'boolean', describe: 'write this run\'s findings to --baseline' },
  'review-output': { type: 'string', describe: 'with a diff: write a GitHub pull-request review (comments on changed lines) to this file' },
  'previous-review': { type: 'string', describe: 'the PR\'s existing review comments (GitHub API JSON); findings already posted are left out' },
  quiet: { alias: 'q', type: 'boolean', describe: 'nothing on stderr but errors' },
  continue: { alias: 'c', type: 'boolean', describe: 'continue the latest saved session of this repository' },
  resume: { type: 'string', describe: 'continue session ID (or a prefix); alone: list sessions' },
  'allow-large-question': { type: 'boolean', describe: `send a question over ${LARGE_QUESTION_LABEL} without asking` },
  'allow-home': { type: 'boolean', describe: 'search a root that holds your home directory' },
  'allow-secrets': { type: 'boolean', describe: 'do not redact the secrets found, for this run' },
  'session-persistence': { type: 'boolean', describe: 'save the conversation to resume later', defaultDescription: 'on' },
  'verify-citations': { type: 'string', describe: 'check path:line citations: off | report | fix', defaultDescription: 'report' },
  hint: { type: 'boolean', describe: 'add locate\'s top files to the first question' },
  render: { type: 'boolean', describe: 'render the answer\'s markdown on a terminal', defaultDescription: 'on' },
  verbose: { type: 'boolean', describe: 'show full tool output' },
  'include-partial-messages': { type: 'boolean', describe: 'stream-json: also the API\'s stream_event lines' },
  thinking: { type: 'boolean', describe: 'enable extended thinking (hidden unless --show-thinking)' },
  effort: { type: 'string', describe: 'low | medium | high | max', defaultDescription: 'medium; json, audit: high' },
  'show-thinking': { type: 'boolean', describe: 'print thinking text (dimmed, on stderr)' },
  color: { type: 'boolean', describe: 'colour on a terminal (--no-color to disable)' },
  debug: { type: 'boolean', describe: 'show stack traces for internal errors' },
  sandbox: { type: 'string', describe: 'bubblewrap: auto | required | off', defaultDescription: 'auto' },
} satisfies Record<string, Options>;

/** `$0` is the question (one-shot or REPL); the others are the subcommands. */
export type Command = 'ask' | 'audit' | 'locate' | 'mcp';
const EVERY: readonly Command[] = ['ask', 'audit', 'locate', 'mcp'];
/** The commands that send the question to a model. */
const MODEL: readonly Command[] = ['ask', 'audit', 'mcp'];
/** The commands that print a model's answer themselves (the MCP server hands it to its client). */
const PRINTS: readonly Command[] = ['ask', 'audit'];

/**
 * Where each flag does something, and so which help lists it. Every command still accepts every flag (a script that
 * passes `--model` to locate keeps working); the ones that would be silently wrong there (audit flags without audit,
 * mcp limits outside mcp, -c with audit) are refused by config.ts with a line naming the subcommand.
 */
export const APPLIES: Readonly<Record<keyof typeof OPTIONS, readonly Command[]>> = {
  dir: EVERY,
  model: MODEL,
  provider: MODEL,
  interactive: ['ask'],
  'max-turns': MODEL,
  'max-tokens': MODEL,
  depth: MODEL,
  'max-entries': MODEL,
  'map-tokens': MODEL,
  'tool-timeout': MODEL,
  'output-format': ['ask', 'audit', 'locate'],
  k: ['locate'],
  explain: ['locate'],
  'max-budget-usd': MODEL,
  'max-budget-usd-per-call': ['mcp'],
  'max-budget-usd-total': ['mcp'],
  'max-concurrent-calls': ['mcp'],
  'max-memory-gib': ['mcp'],
  timeout: MODEL,
  'fail-on': ['audit'],
  sarif: ['audit'],
  'sarif-category': ['audit'],
  'sarif-on-error': ['audit'],
  diff: ['audit'],
  'diff-file': ['audit'],
  scope: ['audit'],
  baseline: ['audit'],
  'update-baseline': ['audit'],
  'review-output': ['audit'],
  'previous-review': ['audit'],
  quiet: EVERY,
  continue: ['ask'],
  resume: ['ask'],
  'allow-large-question': PRINTS,
  'allow-home': EVERY,
  'allow-secrets': EVERY,
  'session-persistence': ['ask'],
  'verify-citations': MODEL,
  hint: MODEL,
  render: PRINTS,
  verbose: PRINTS,
  'include-partial-messages': PRINTS,
  thinking: MODEL,
  effort: MODEL,
  'show-thinking': PRINTS,
  color: PRINTS,
  debug: EVERY,
  sandbox: EVERY,
};

/**
 * The flags that apply to the question itself are global: every command parses them, and each subcommand hides the
 * ones that do not apply to it. The others are local to each command (hidden where they do not apply), so a
 * subcommand's own flags show in its help alone; the top level knows them too (hidden), so that `spelunk -q locate …`
 * reads -q as a flag and locate as the command.
 */
function register(y: Argv, command: Command | 'top'): Argv {
  const visible = (name: string): boolean => command !== 'top' && APPLIES[name as keyof typeof OPTIONS].includes(command);
  for (const [name, option] of Object.entries(OPTIONS) as [keyof typeof OPTIONS, Options][]) {
    const global = APPLIES[name].includes('ask');
    if (command === 'top' && global) y.option(name, option);
    else if (!global) y.option(name, { ...option, global: false, ...(visible(name) ? {} : { hidden: true }) });
    else if (command !== 'ask' && !visible(name)) y.hide(name);
  }
  return y;
}

/** The long names `command`'s help lists (for the help tests). */
export function flagsOf(command: Command): string[] {
  return Object.keys(APPLIES).filter((name) => APPLIES[name as keyof typeof OPTIONS].includes(command));
}

/** Parses argv with yargs; never prints or exits (help and version come back as text). */
export async function parseArgs(argv: readonly string[], width: number | undefined): Promise<Parsed> {
  const command = { audit: false, mcp: false, locate: false };
  let captured = '';
  const parser = buildParser(argv, width, command);
  skipHelpCache(parser);
  // getOptions is yargs' own option table (not in @types/yargs 17): the flag check cannot drift from the options.
  const table = flagTable((parser as unknown as { getOptions(): YargsOptions }).getOptions());
  checkFlags(argv, table);
  const args = await parser.parseAsync([...argv], {}, (_err, _argv, output) => {
    captured = output;
  });
  // `spelunk help` is yargs' help command too: it fills `captured` without setting args.help.
  if (args.help || args.version || captured !== '') {
    return { kind: 'output', text: captured.endsWith('\n') ? captured : `${captured}\n` };
  }
  rejectNaN(argv, args as Record<string, unknown>);
  rejectRepeats(args as Record<string, unknown>, valueFlags(table), table);
  // After `--` every word is the question's, even one that starts with `-` (`spelunk locate -- "--exact flag"`):
  // yargs puts those words in `_`, not in the positional, so they are taken from argv itself.
  const dash = argv.indexOf('--');
  const words = [...((args.question as string[] | undefined) ?? []), ...(dash < 0 ? [] : argv.slice(dash + 1))];
  const question = words.join(' ').trim();
  const { audit, mcp, locate } = command;
  if (!audit && !mcp && !locate) rejectNearCommand(question);
  const flags = args as RawFlags & { k?: number; explain?: boolean };
  return { kind: 'run', audit, mcp, ...(locate ? { locate } : {}), question: question === '' ? null : question, flags };
}

/**
 * yargs renders the whole help text and caches it each time a subcommand's handler runs, for a showHelp() from inside
 * the handler, which spelunk never calls: a measurable share of every `spelunk locate`, `audit` and `mcp` start (see
 * docs/bench-log.md). `--help` renders its text afresh and is unaffected. Internal to yargs 17, as is
 * getOptions above: if it is ever missing, nothing changes but the time.
 */
export function skipHelpCache(parser: Argv): void {
  type Internal = { getInternalMethods?(): { getUsageInstance?(): { cacheHelpMessage?: () => void } } };
  const usage = (parser as unknown as Internal).getInternalMethods?.().getUsageInstance?.();
  if (usage && typeof usage.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => {};
}

/** The yargs parser: subcommands (each sets its flag in `command`), options, help and version as text. */
function buildParser(
  argv: readonly string[],
  width: number | undefined,
  command: { audit: boolean; mcp: boolean; locate: boolean },
): Argv {
  return register(yargs([...argv]), 'top')
    .scriptName('spelunk')
    .usage('$0 [question]  ask about a repository (REPL when no question and stdin is a terminal)')
    .command('$0 [question..]', false as unknown as string, (y) => register(question(y), 'ask'))
    .command('audit [question..]', 'run a code audit: a verdict, findings, SARIF, exit code by severity', (y) => register(question(y), 'audit'), () => {
      command.audit = true;
    })
    .command('locate [question..]', 'rank the files likely to answer, without a model (no API key)', (y) => register(question(y), 'locate').option('output-format', { ...OPTIONS['output-format'], describe: 'text | json' }), () => {
      command.locate = true;
    })
    .command('mcp', 'serve ask, ask_followup, audit, locate over MCP (stdio), rooted at -C', (y) => register(y, 'mcp'), () => {
      command.mcp = true;
    })
    .strict()
    // No dot-notation: `--model.x 1` would hand config an object where it expects a string.
    .parserConfiguration({ 'camel-case-expansion': true, 'strip-dashed': true, 'dot-notation': false })
    .help()
    .alias('h', 'help')
    .version(VERSION)
    .alias('v', 'version')
    .epilog(EPILOG)
    .wrap(width ? Math.min(width, 120) : 100)
    .exitProcess(false)
    .fail((message, error) => {
      throw new UsageError(`${message ?? error?.message ?? 'invalid arguments'}; see spelunk --help`);
    });
}

function question(y: Argv): Argv {
  return y.positional('question', { type: 'string', array: true });
}

/**
 * A lone lowercase word one edit away from a subcommand (`spelunk adit`, `spelunk hlep`) is a typo, not a question:
 * sending it would cost a request. Any other single word (`spelunk auth`) is still asked, as is anything with a `?`.
 */
function rejectNearCommand(question: string): void {
  if (!/^[a-z]+$/i.test(question)) return;
  const [near] = closest(question, COMMANDS, 1, 1);
  if (near === undefined || near === question) return;
  const usage = near === 'audit' ? 'spelunk audit "does every handler check auth?"' : 'spelunk help';
  throw new UsageError(`"${question}" is not a command; did you mean ${usage}? To ask it as a question, add a "?": spelunk "${question}?"`);
}

/** yargs turns `--max-turns abc` into NaN; say what was typed instead. */
function rejectNaN(argv: readonly string[], args: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(args)) {
    if (typeof value !== 'number' || !Number.isNaN(value) || key.length < 2) continue;
    const flag = `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    const at = argv.findIndex((a) => a === flag || a.startsWith(`${flag}=`));
    const typed = at < 0 ? undefined : argv[at]!.startsWith(`${flag}=`) ? argv[at]!.slice(flag.length + 1) : argv[at + 1];
    throw new UsageError(`${flag} needs a number, e.g. ${flag} 10 (got ${typed === undefined ? 'nothing' : `"${typed}"`})`);
  }
}

/** The flag check's view of yargs' option table: every name and alias, which take no value, and the long names. */
function flagTable(options: YargsOptions): FlagTable {
  const long = new Map<string, string>();
  const booleans = new Set(options.boolean);
  const names = new Set(Object.keys(options.key));
  // yargs keys its alias table either way round (`model: ['m']`, `h: ['help']`): each entry is one group of names.
  for (const [key, aliases] of Object.entries(options.alias)) {
    const group = [key, ...aliases];
    const name = group.reduce((a, b) => (b.length > a.length ? b : a));
    for (const alias of group) {
      names.add(alias);
      if (alias.length === 1) long.set(alias, name);
      if (group.some((g) => booleans.has(g))) booleans.add(alias);
    }
  }
  return { names, booleans, optionalValue: new Set(['resume']), long };
}

/** The long names that take a value, as yargs keys them after camel-case expansion. */
function valueFlags(table: FlagTable): string[] {
  return [...table.names].filter((n) => n.length > 1 && !table.booleans.has(n));
}
