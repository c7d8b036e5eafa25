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
Environment: ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), ANTHROPIC_BASE_URL, CLAUDE_CODE_USE_BEDROCK/_VERTEX/_FOUNDRY, SPELUNK_MODEL, SPELUNK_EDITOR_URL, NO_COLOR, FORCE_COLOR`;

/** Every flag: yargs' option table (a string table, kept whole; the flag check reads it back from yargs). */
const OPTIONS = {
  dir: { alias: 'C', type: 'string', describe: 'repository root', default: undefined, defaultDescription: 'current directory' },
  model: { alias: 'm', type: 'string', describe: 'model id, or an alias: opus, sonnet, haiku (the newest of each family)', defaultDescription: '$SPELUNK_MODEL or claude-sonnet-5-5' },
  provider: { type: 'string', describe: 'who serves Claude: anthropic | bedrock | vertex | foundry', defaultDescription: 'from CLAUDE_CODE_USE_BEDROCK/_VERTEX/_FOUNDRY, else anthropic' },
  interactive: { alias: 'i', type: 'boolean', describe: 'answer the question, then stay in the REPL' },
  'max-turns': { type: 'number', describe: 'model requests per question', defaultDescription: '25' },
  'max-tokens': { type: 'number', describe: 'output tokens per request', defaultDescription: '16000' },
  depth: { type: 'number', describe: 'listing depth in the preamble', defaultDescription: '3' },
  'max-entries': { type: 'number', describe: 'cap on the lines of the repository map', defaultDescription: 'none' },
  'map-tokens': { type: 'number', describe: 'token budget of the repository map in the preamble', defaultDescription: '2000' },
  'tool-timeout': { type: 'number', describe: 'seconds per tool call', defaultDescription: '30' },
  'output-format': { type: 'string', describe: 'one-shot output: text | json | stream-json', defaultDescription: 'text' },
  k: { type: 'number', describe: 'locate: files to print', defaultDescription: '10' },
  explain: { type: 'boolean', describe: 'locate: show what each result\'s score is made of' },
  'max-budget-usd': { type: 'number', describe: 'stop before the estimated cost could exceed this' },
  'max-budget-usd-per-call': { type: 'number', describe: 'mcp: the --max-budget-usd of each tool call' },
  'max-budget-usd-total': { type: 'number', describe: 'mcp: stop accepting calls once this much is spent' },
  'max-concurrent-calls': { type: 'number', describe: 'mcp: tool calls answered at once (more wait in a queue of 16)', defaultDescription: '4' },
  'max-memory-gib': { type: 'number', describe: 'mcp: address-space allowance of all programs at once (1 GiB each)', defaultDescription: '4' },
  timeout: { type: 'number', describe: 'seconds for the whole run (exit 3 when reached)' },
  'fail-on': { type: 'string', describe: 'audit: lowest severity that fails (low|medium|high|critical)', defaultDescription: 'high' },
  sarif: { type: 'string', describe: 'audit: write SARIF 2.1.0 findings to this file (only when the audit reaches a verdict)' },
  'sarif-category': { type: 'string', describe: 'audit: SARIF run.automationDetails.id (GitHub code-scanning category)', defaultDescription: 'spelunk/<slug of the question>/' },
  'sarif-on-error': { type: 'string', describe: 'audit: without a verdict, write no SARIF (none) or one reporting the failure (notification)', defaultDescription: 'none' },
  diff: { type: 'string', describe: 'audit: judge the change BASE[...HEAD] (git diff BASE...HEAD; HEAD by default)' },
  'diff-file': { type: 'string', describe: 'audit: judge the change in this unified diff file (no git needed)' },
  scope: { type: 'string', describe: 'audit with a diff: findings that count for --fail-on (line|file|repo)', defaultDescription: 'line' },
  baseline: { type: 'string', describe: 'audit: accepted findings (fingerprints file outside the repository)' },
  'update-baseline': { type: 'boolean', describe: 'audit: write this run\'s findings to --baseline' },
  'review-output': { type: 'string', describe: 'audit with a diff: write a GitHub pull-request review (comments on changed lines) to this file' },
  'previous-review': { type: 'string', describe: 'audit: the PR\'s existing review comments (GitHub API JSON); findings already posted are left out' },
  quiet: { alias: 'q', type: 'boolean', describe: 'nothing on stderr but errors' },
  continue: { alias: 'c', type: 'boolean', describe: 'continue the latest saved session of this repository' },
  resume: { type: 'string', describe: 'continue the saved session with this id (or a unique prefix of it); alone: list this repository\'s sessions' },
  'allow-large-question': { type: 'boolean', describe: `send a question over ${LARGE_QUESTION_LABEL} without asking (refused without it when not on a terminal)` },
  'allow-home': { type: 'boolean', describe: 'search a root that is or holds your home directory (dotfiles such as .ssh/) without asking; refused without it when not on a terminal; env SPELUNK_ALLOW_HOME=1' },
  'allow-secrets': { type: 'boolean', describe: 'send secrets found in the repository unredacted, for this run only (also SPELUNK_ALLOW_SECRETS=1; audit: the flag only)' },
  'session-persistence': { type: 'boolean', describe: 'save the conversation to resume later (--no-session-persistence: do not)', defaultDescription: 'on' },
  'verify-citations': { type: 'string', describe: 'check the answer\'s path:line citations: off | report | fix', defaultDescription: 'report' },
  hint: { type: 'boolean', describe: 'add the files locate ranks highest to the first question, after the cached preamble (--no-hint: do not)', defaultDescription: 'off' },
  render: { type: 'boolean', describe: 'render the answer\'s markdown on a terminal (--no-render for raw)', defaultDescription: 'true' },
  verbose: { type: 'boolean', describe: 'show full tool output' },
  'include-partial-messages': { type: 'boolean', describe: 'stream-json: also the API\'s streaming events, as stream_event lines (as Claude Code writes them)' },
  thinking: { type: 'boolean', describe: 'enable extended thinking (hidden unless --show-thinking)' },
  effort: { type: 'string', describe: 'effort per request: low | medium | high | max', defaultDescription: 'medium; high for json, stream-json, audit' },
  'show-thinking': { type: 'boolean', describe: 'print thinking text (dimmed, on stderr)' },
  color: { type: 'boolean', describe: 'colour on a terminal (--no-color to disable)' },
  debug: { type: 'boolean', describe: 'show stack traces for internal errors' },
  sandbox: { type: 'string', describe: 'kernel sandbox (bubblewrap) for every program spelunk starts: auto | required | off', defaultDescription: 'auto; env SPELUNK_SANDBOX' },
} satisfies Record<string, Options>;

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
  const words = (args.question as string[] | undefined) ?? [];
  const question = words.join(' ').trim();
  const { audit, mcp, locate } = command;
  if (!audit && !mcp && !locate) rejectNearCommand(question);
  const flags = args as RawFlags & { k?: number; explain?: boolean };
  return { kind: 'run', audit, mcp, ...(locate ? { locate } : {}), question: question === '' ? null : question, flags };
}

/**
 * yargs renders the whole help text and caches it each time a subcommand's handler runs, for a showHelp() from inside
 * the handler, which spelunk never calls: ~100-200 ms of string-width on every `spelunk locate`, `audit` and `mcp`
 * (measured with --cpu-prof). `--help` renders its text afresh and is unaffected. Internal to yargs 17, as is
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
  return yargs([...argv])
    .scriptName('spelunk')
    .usage('$0 [question]  ask about a repository (REPL when no question and stdin is a terminal)')
    .command('$0 [question..]', false as unknown as string, (y) => y.positional('question', { type: 'string', array: true }))
    .command('audit [question..]', 'run a code audit: a verdict, findings, SARIF, exit code by severity', (y) =>
      y.positional('question', { type: 'string', array: true }),
      () => {
        command.audit = true;
      },
    )
    .command('locate [question..]', 'rank the files most likely to answer the question, without a model (no API key)', (y) =>
      y.positional('question', { type: 'string', array: true }),
      () => {
        command.locate = true;
      },
    )
    .command('mcp', 'serve ask, ask_followup, audit and locate to an agent over MCP (stdio); the root is fixed by -C', (y) => y, () => {
      command.mcp = true;
    })
    .options(OPTIONS)
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
