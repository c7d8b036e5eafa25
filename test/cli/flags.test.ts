import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/args.js';
import { resolveConfig } from '../../src/config.js';
import { UsageError } from '../../src/errors.js';
import { runCli } from '../support/cli.js';
import { runBinary } from '../support/binary.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

const repo = useRepo(APP_FILES);
const KEY = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' };

describe('flag mistakes: one line naming the flag, exit 2, nothing sent', () => {
  it.each<[string[], string]>([
    [['-m', 'a', '-m', 'b', 'q'], '-m/--model was given 2 times ("a", "b"); give it once'],
    [['--model', 'a', '-m', 'b', 'q'], '-m/--model was given 2 times'],
    [['-C', 'a', '-C', 'b', 'q'], '-C/--dir was given 2 times ("a", "b"); give it once'],
    [['--max-turns', '3', '--max-turns', '4', 'q'], '--max-turns was given 2 times (3, 4)'],
    [['--output-format', 'json', '--output-format', 'text', 'q'], '--output-format was given 2 times'],
    [['--resume', 'a', '--resume', 'b', 'q'], '--resume was given 2 times'],
    [['--max-turn', '5', 'q'], 'unknown flag --max-turn; did you mean --max-turns?'],
    [['--max-turn=5', 'q'], 'unknown flag --max-turn; did you mean --max-turns?'],
    [['--verbsoe', 'q'], 'unknown flag --verbsoe; did you mean --verbose?'],
    [['--no-colour', 'q'], 'unknown flag --no-colour; did you mean --no-color?'],
    [['-p', 'q'], '-p is not needed: spelunk prints the answer by default when given a question'],
    [['--print', 'q'], '--print is not needed: spelunk prints the answer by default when given a question'],
    [['-x', 'q'], 'unknown flag -x; see spelunk --help'],
    [['--frobnicate-everything', 'q'], 'unknown flag --frobnicate-everything; see spelunk --help'],
    [['-qx', 'q'], 'unknown flag -x'],
    [['-qm', 'opus', 'q'], '-m takes a value, so it cannot be grouped'],
    [['--no-model', 'q'], 'unknown flag --no-model'],
    [['--include-partial-messages', 'q'], '--include-partial-messages needs --output-format stream-json'],
    [['--include-partial-messages', '--output-format', 'json', 'q'], '--include-partial-messages needs --output-format stream-json'],
    [['--model.x', '1', 'q'], 'unknown flag --model.x; did you mean --model?'],
    [['-C'], '-C/--dir needs a value, e.g. --dir path/to/repo'],
    [['q', '-m'], '-m/--model needs a value, e.g. --model sonnet'],
    [['--max-turns'], '--max-turns needs a value'],
    [['-C', '', 'q'], '-C/--dir needs a value'],
    [['--dir=', 'q'], '--dir needs a value'],
    [['--model', ' ', 'q'], '--model needs a value'],
    [['--verify-citations', '', 'q'], '--verify-citations needs a value, e.g. --verify-citations fix'],
    [['--max-turns', '--depth', '2', 'q'], '--max-turns needs a value'],
    [['--sarif', 'x', 'q'], '--sarif only works with the audit subcommand'],
    [['--sarif', 'x', '--fail-on', 'low', 'q'], '--sarif and --fail-on only work with the audit subcommand'],
    [['--max-budget-usd-total', '3', 'q'], '--max-budget-usd-total only works with the mcp subcommand'],
    [['--resume', 'q'], 'no question'],
    [['"q"', '--resume'], '--resume needs a session id to continue with a question'],
  ])('%j', async (argv, fragment) => {
    const run = await runCli(argv, { env: KEY, cwd: repo.root });
    expect(run.stderr).toContain(fragment);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stdout).toBe('');
  });

  it.each([
    [['--', '-p', 'is', 'this', 'a', 'flag?']],
    [['-m', 'opus', 'where', 'is', 'the', 'router?']],
    [['--max-turns', '-1', 'q']],
    // A negative number written without its leading zero is a value too, not a flag (it once had no row).
    [['--max-budget-usd', '-.5', 'q']],
    [['--max-turns', '-.5', 'q']],
    [['-qi', 'q']],
  ])('%j passes the flag check (a question of many words, after --, a negative number, grouped booleans)', async (argv) => {
    const run = await runCli(argv, { env: {}, cwd: repo.root });
    // The parser took each as meant: what is said next is the key, or (a negative value the parser accepted as the
    // flag's value, since range errors now come before the key's) its range.
    expect(run.stderr).toMatch(/^spelunk: (ANTHROPIC_API_KEY is not set|--max-turns must be a whole number of at least 1 \(got -(1|0\.5)\)|--max-budget-usd must be a number greater than 0 \(got -0\.5\))/);
  });
});

/** Issue 33: with no key at all, a flag or setting mistake is what is said (the key error comes only for a sound run). */
describe('flag and configuration errors come before the missing-key error', () => {
  it.each<[string[], Record<string, string>, RegExp]>([
    [['--effort', 'extreme', 'q'], {}, /^spelunk: --effort must be /],
    [['--output-format', 'xml', 'q'], {}, /^spelunk: --output-format must be text, json or stream-json \(got "xml"\)/],
    [['--max-turns', '0', 'q'], {}, /^spelunk: --max-turns /],
    [['--verify-citations', 'maybe', 'q'], {}, /^spelunk: --verify-citations must be off, report or fix/],
    [['--sandbox', 'nope', 'q'], {}, /^spelunk: --sandbox \(or SPELUNK_SANDBOX\) must be auto, required or off/],
    [['q'], { SPELUNK_MODEL: ' ' }, /^spelunk: --model is empty/],
    [['q'], { ANTHROPIC_BASE_URL: 'ftp://x' }, /^spelunk: ANTHROPIC_BASE_URL is not an http\(s\) URL/],
  ])('%j %j: exit 2 with that line, not the key\'s', async (argv, env, line) => {
    const run = await runCli(argv, { env, cwd: repo.root });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(line);
    expect(run.stderr).not.toContain('ANTHROPIC_API_KEY');
  });
});

/**
 * Bad argv of every shape through main(): whatever it is, the answer is a usage line or a run, never "internal error"
 * (which is exit 1 and a request to rerun with --debug).
 */
describe('no argv produces an internal error', () => {
  const flags = ['-m', '-C', '--dir', '--model', '--max-turns', '--max-tokens', '--depth', '--timeout', '--output-format', '--effort', '--resume', '--sarif', '--diff', '--fail-on', '--verify-citations', '--max-budget-usd', '--tool-timeout', '--map-tokens', '--max-entries', '-c', '-i', '-q', '--no-render', '--color', '--no-color', '--thinking', '--allow-large-question'];
  const values = ['', ' ', 'x', '0', '-1', '1e400', 'NaN', '1,2', '.', '/', '--', '-', '__proto__', 'constructor', 'toString', '\u0000', '\u001b[2J', 'a b', '=', 'true'];
  const rows: string[][] = [];
  for (const flag of flags) {
    for (const value of values) rows.push([flag, value, 'q'], [`${flag}=${value}`, 'q'], [flag, value, flag, value, 'q']);
    rows.push([flag], [flag, flag], [`--no-${flag.replace(/^-+/, '')}`, 'q']);
  }
  rows.push(['--'], ['-'], ['---'], ['--=x'], ['-='], ['--__proto__', 'x'], ['--constructor'], ['--toString=1'], ['audit', '-m'], ['mcp', '-m', 'a', '-m', 'b'], ['help', '--bogus'], ['--help', '--bogus'], ['-h', '-m', 'a', '-m', 'b']);

  // Through main() without a key: every mistake the parser can see is said before the key is asked for.
  it(`${rows.length} rows through main(): each is exit 0 or 2, one line, no stack`, async () => {
    const bad: string[] = [];
    for (const argv of rows) {
      const run = await runCli(argv, { env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' }, cwd: repo.root });
      if (run.stderr.includes('internal error') || ![0, 2].includes(run.code) || /\n\s+at /.test(run.stderr)) bad.push(`${JSON.stringify(argv)} → ${run.code} ${run.stderr.trim()}`);
    }
    expect(bad).toEqual([]);
  }, 120_000);

  // With a key, up to the resolved config (the step after it sends a request): nothing throws but a UsageError.
  it(`${rows.length} rows through the parser and the config: only usage errors`, async () => {
    const bad: string[] = [];
    for (const argv of rows) {
      try {
        const parsed = await parseArgs(argv, 100);
        if (parsed.kind === 'run') await resolveConfig(parsed.flags, KEY, repo.root, parsed.audit, parsed.mcp);
      } catch (error) {
        if (!(error instanceof UsageError)) bad.push(`${JSON.stringify(argv)} → ${String(error)}`);
      }
    }
    expect(bad).toEqual([]);
  }, 120_000);
});

describe('environment mistakes: one line, exit 2, nothing sent, the credential never echoed', () => {
  it.each<[Record<string, string>, string]>([
    [{ ANTHROPIC_API_KEY: 'sk-ant\nsecret' }, 'ANTHROPIC_API_KEY contains a space, line break or other character an HTTP header cannot carry'],
    [{ ANTHROPIC_AUTH_TOKEN: 'tok en-secret' }, 'ANTHROPIC_AUTH_TOKEN contains a space'],
    [{ ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: '::::' }, 'ANTHROPIC_BASE_URL is not an http(s) URL (got "::::")'],
    [{ ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'ftp://x' }, 'ANTHROPIC_BASE_URL is not an http(s) URL'],
    [{ ANTHROPIC_API_KEY: 'k', SPELUNK_MODEL: ' ' }, '--model is empty'],
  ])('%j', async (env, fragment) => {
    const run = await runCli(['q'], { env, cwd: repo.root });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(fragment);
    expect(run.stderr).not.toContain('secret');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('the built binary: the issue\'s flag mistakes', () => {
  it.each<[string[], RegExp]>([
    [['-m', 'a', '-m', 'b', 'q'], /^spelunk: -m\/--model was given 2 times \("a", "b"\); give it once\n$/],
    [['-C', 'a', '-C', 'b', 'q'], /^spelunk: -C\/--dir was given 2 times \("a", "b"\); give it once\n$/],
    [['--max-turn', '5', 'q'], /^spelunk: unknown flag --max-turn; did you mean --max-turns\?\n$/],
    [['-p', 'q'], /^spelunk: -p is not needed: spelunk prints the answer by default when given a question \(spelunk "where is X\?"\)\n$/],
    [['--sarif', 'x', 'q'], /^spelunk: --sarif only works with the audit subcommand/],
  ])('%j → exit 2, one line', async (argv, pattern) => {
    const result = await runBinary(argv, { cwd: repo.root, env: { HOME: path.dirname(repo.root), ...KEY } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(pattern);
    expect(result.stdout).toBe('');
  });
});

describe('after --, every word is the question, even one that starts with -', () => {
  it.each([
    [['locate', '--', '--exact match flag'], '--exact match flag', true],
    [['--', '--exact match'], '--exact match', false],
    [['locate', 'where is', '--', '--after-context'], 'where is --after-context', true],
    [['audit', '--', '-x is unsafe?'], '-x is unsafe?', false],
    [['locate', 'plain words'], 'plain words', true],
  ])('%j → %j', async (argv, question, locate) => {
    const parsed = await parseArgs(argv, 100);
    expect(parsed.kind).toBe('run');
    if (parsed.kind !== 'run') return;
    expect(parsed.question).toBe(question);
    expect(parsed.locate === true).toBe(locate);
  });
});
