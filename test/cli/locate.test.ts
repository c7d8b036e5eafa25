import { describe, expect, it } from 'vitest';
import { NO_CODE_WORD } from '../../src/locate/locate.js';
import { runCli } from '../support/cli.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

const repo = useRepo(APP_FILES);
// No ANTHROPIC_API_KEY anywhere: locate never talks to a model.
const env = { ANTHROPIC_API_KEY: undefined };

describe('spelunk locate (the CLI, in-process)', () => {
  it('prints the ranked files with path:line symbols and lines, without an API key', async () => {
    const run = await runCli(['locate', '-C', repo.root, 'where', 'is', 'the', 'login', 'exec?'], { env });
    expect(run.code).toBe(0);
    // Plain words only: the note says so (issue 37).
    expect(run.stderr).toBe(`spelunk locate: note: ${NO_CODE_WORD}\n`);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toMatch(/^1\. src\/auth\.js {2}\(score \d+\.\d{3}\)$/);
    expect(lines).toContain('   function login  src/auth.js:3');
    expect(lines).toContain("   src/auth.js:4  exec('grep ' + user + ' /etc/passwd');");
  });

  it('--output-format json prints one object: type, query, results best first with relative paths', async () => {
    const run = await runCli(['locate', '--output-format', 'json', '--k', '2', '-C', repo.root, 'how does createServer use router.handle?'], { env });
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(Object.keys(result)).toEqual(['type', 'query', 'results', 'notes']);
    expect(result).toMatchObject({ type: 'locate', query: 'how does createServer use router.handle?' });
    expect(result.results).toHaveLength(2);
    expect(result.results.map((r: { path: string }) => r.path).sort()).toEqual(['src/router.js', 'src/server.js']);
    expect(result.results[0].score).toBeGreaterThanOrEqual(result.results[1].score);
    for (const r of result.results) expect(Object.keys(r)).toEqual(['path', 'score', 'symbols', 'lines']);
  });

  it.each([
    ['where is the login exec?', true],
    ['how are requests handled?', true],
    ['where is createServer?', false],
    ['router.js routes', false],
    ['"passwd"', false],
    ['auth: check user', false],
  ])('%j: the note on no code-specific word is %s', async (question, noted) => {
    const run = await runCli(['locate', '--output-format', 'json', '-C', repo.root, question], { env });
    expect(JSON.parse(run.stdout).notes.includes(NO_CODE_WORD)).toBe(noted);
  });

  it('reads the question from stdin when none is given', async () => {
    const run = await runCli(['locate', '--output-format', 'json', '-C', repo.root], { env, stdin: 'createServer\n' });
    expect(JSON.parse(run.stdout).results[0].path).toBe('src/server.js');
  });

  it.each([1, 100])('--k %i is within the bounds', async (k) => {
    const run = await runCli(['locate', '--output-format', 'json', '--k', String(k), '-C', repo.root, 'router handle server'], { env });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).results.length).toBe(Math.min(k, 2));
  });

  it.each([
    [['locate', '--k', '0', 'q'], '--k must be a whole number from 1 to 100 (got 0)'],
    [['locate', '--k', 'many', 'q'], '--k must be a whole number from 1 to 100 (got a non-number)'],
    [['locate', '--k', '2.5', 'q'], '--k must be a whole number from 1 to 100 (got 2.5)'],
    [['locate', '--k', '101', 'q'], '--k must be a whole number from 1 to 100 (got 101)'],
    [['locate', '--output-format', 'stream-json', 'q'], 'locate --output-format must be text or json (got "stream-json")'],
    [['locate', '-C', '/nonexistent-spelunk-dir', 'q'], '--dir /nonexistent-spelunk-dir: no such directory; pass the repository root with -C <path>'],
    [['locate'], 'locate needs a question: spelunk locate "where are sessions expired?"'],
  ])('%j is a usage error: %s', async (argv, message) => {
    const run = await runCli(argv, { env, cwd: repo.root });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`spelunk: ${message}\n`);
    expect(run.stdout).toBe('');
  });

  // Issue 37: a json caller gets every usage error as an object on stdout (and the line on stderr), even one found
  // before the flags are parsed.
  it.each([
    [['locate', '--output-format', 'json', '--k', '0', 'q'], '--k must be a whole number from 1 to 100 (got 0)'],
    [['locate', '--output-format=json', '-C', '/nonexistent-spelunk-dir', 'q'], '--dir /nonexistent-spelunk-dir: no such directory; pass the repository root with -C <path>'],
    [['--output-format', 'json', 'locate'], 'locate needs a question: spelunk locate "where are sessions expired?"'],
    [['-C', '.', 'locate', '--output-format', 'json', '--no-such-flag', 'q'], null],
  ])('%j with json output answers a json error object', async (argv, message) => {
    const run = await runCli(argv, { env, cwd: repo.root, stdin: '' });
    expect(run.code).toBe(2);
    const object = JSON.parse(run.stdout);
    expect(Object.keys(object)).toEqual(['type', 'error', 'message']);
    expect(object).toMatchObject({ type: 'error', error: 'usage' });
    if (message !== null) expect(object.message).toBe(message);
    expect(run.stderr).toBe(`spelunk: ${object.message}\n`);
  });

  it('--explain shows what each score is made of: the terms (content, path, definition) times the factors', async () => {
    const json = await runCli(['locate', '--explain', '--output-format', 'json', '-C', repo.root, 'where is login in auth?'], { env });
    const top = JSON.parse(json.stdout).results[0];
    expect(top.path).toBe('src/auth.js');
    const login = top.explain.terms.find((t: { term: string }) => t.term === 'login');
    expect(login).toMatchObject({ kind: 'word' });
    expect(login.content).toBeGreaterThan(0);
    expect(top.explain.terms.find((t: { term: string }) => t.term === 'auth').path).toBeGreaterThan(0);
    const sum = top.explain.terms.reduce((s: number, t: { content: number; path: number; definition: number; references: number }) => s + t.content + t.path + t.definition + t.references, 0);
    const { place, scope, copy, generated } = top.explain.factors;
    expect(sum * place * scope * copy * generated).toBeCloseTo(top.score, 1);
    const text = await runCli(['locate', '--explain', '-C', repo.root, 'where is login in auth?'], { env });
    expect(text.stdout).toMatch(/^ {3}\+ \d+\.\d{3} {2}"login" \(word\): content \d+\.\d{3}, definition \d+\.\d{3}$/m);
    // Without --explain the object is as before (the MCP tool's schema).
    const plain = await runCli(['locate', '--output-format', 'json', '-C', repo.root, 'where is login in auth?'], { env });
    expect(Object.keys(JSON.parse(plain.stdout).results[0])).toEqual(['path', 'score', 'symbols', 'lines']);
  });

  it('a file outside the ordinary tree shows its place factor', async () => {
    const run = await runCli(['locate', '--explain', '--output-format', 'json', '-C', repo.root, 'package version'], { env });
    const pkg = JSON.parse(run.stdout).results.find((r: { path: string }) => r.path === 'package.json');
    expect(pkg.explain.factors.place).toBe(0.35);
  });

  it('a one-edit typo of locate is caught before any request', async () => {
    const run = await runCli(['locat'], { env: { ANTHROPIC_API_KEY: 'sk-test' }, cwd: repo.root });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/"locat" is not a command; did you mean/);
  });
});
