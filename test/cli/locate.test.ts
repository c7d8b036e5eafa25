import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

const repo = useRepo(APP_FILES);
// No ANTHROPIC_API_KEY anywhere: locate never talks to a model.
const env = { ANTHROPIC_API_KEY: undefined };

describe('spelunk locate (the CLI, in-process)', () => {
  it('prints the ranked files with path:line symbols and lines, without an API key', async () => {
    const run = await runCli(['locate', '-C', repo.root, 'where', 'is', 'the', 'login', 'exec?'], { env });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
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

  it('reads the question from stdin when none is given', async () => {
    const run = await runCli(['locate', '--output-format', 'json', '-C', repo.root], { env, stdin: 'createServer\n' });
    expect(JSON.parse(run.stdout).results[0].path).toBe('src/server.js');
  });

  it.each([
    [['locate', '--k', '0', 'q'], '--k must be a whole number from 1 to 100 (got 0)'],
    [['locate', '--k', 'many', 'q'], '--k must be a whole number from 1 to 100 (got a non-number)'],
    [['locate', '--k', '2.5', 'q'], '--k must be a whole number from 1 to 100 (got 2.5)'],
    [['locate', '--output-format', 'stream-json', 'q'], 'locate --output-format must be text or json (got "stream-json")'],
    [['locate', '-C', '/nonexistent-spelunk-dir', 'q'], '--dir /nonexistent-spelunk-dir: no such directory; pass the repository root with -C <path>'],
    [['locate'], 'locate needs a question: spelunk locate "where are sessions expired?"'],
  ])('%j is a usage error: %s', async (argv, message) => {
    const run = await runCli(argv, { env, cwd: repo.root });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`spelunk: ${message}\n`);
    expect(run.stdout).toBe('');
  });

  it('a one-edit typo of locate is caught before any request', async () => {
    const run = await runCli(['locat'], { env: { ANTHROPIC_API_KEY: 'sk-test' }, cwd: repo.root });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/"locat" is not a command; did you mean/);
  });
});
