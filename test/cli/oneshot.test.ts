import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { httpError, reply, startMockApi, text, thinking, toolUse, type MockApi } from '../support/mock-api.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

let api: MockApi;
const repo = useRepo(APP_FILES);
const env = () => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url });
const messages = () => api.requests.filter((r) => r.path === '/v1/messages');

afterEach(async () => {
  await api?.close();
});

async function start(): Promise<MockApi> {
  api = await startMockApi({ minCacheTokens: 256 });
  return api;
}

describe('command line contract', () => {
  it.each([
    [['--help'], 0, /--max-turns/],
    [['--version'], 0, /^\d+\.\d+\.\d+\n$/],
    [['-v'], 0, /^\d+\.\d+\.\d+\n$/],
    [['help'], 0, /--max-turns[\s\S]*Exit codes/],
  ])('%j works without an API key', async (argv, code, pattern) => {
    const run = await runCli(argv, { env: {} });
    expect(run.code).toBe(code);
    expect(run.stdout).toMatch(pattern);
    expect(run.stderr).toBe('');
  });

  it.each([
    [['q'], {}, 'ANTHROPIC_API_KEY is not set'],
    [['-C', '/definitely/not/here', 'q'], { ANTHROPIC_API_KEY: 'k' }, 'no such directory'],
    [['-C', '/etc/hostname', 'q'], { ANTHROPIC_API_KEY: 'k' }, 'not a directory'],
    [['--bogus', 'q'], { ANTHROPIC_API_KEY: 'k' }, 'unknown flag --bogus; see spelunk --help'],
    [['--max-turns', '0', 'q'], { ANTHROPIC_API_KEY: 'k' }, '--max-turns must be a whole number'],
    [['--max-turns', 'lots', 'q'], { ANTHROPIC_API_KEY: 'k' }, '--max-turns needs a number, e.g. --max-turns 10 (got "lots")'],
    [['--map-tokens', '0', 'q'], { ANTHROPIC_API_KEY: 'k' }, '--map-tokens must be a whole number of at least 1 (got 0)'],
    [['--map-tokens', 'many', 'q'], { ANTHROPIC_API_KEY: 'k' }, '--map-tokens needs a number, e.g. --map-tokens 10 (got "many")'],
    [['--max-entries', '2.5', 'q'], { ANTHROPIC_API_KEY: 'k' }, '--max-entries must be a whole number of at least 1 (got 2.5)'],
    [['--timeout=soon', 'q'], { ANTHROPIC_API_KEY: 'k' }, '--timeout needs a number, e.g. --timeout 10 (got "soon")'],
    [['--output-format', 'xml', 'q'], { ANTHROPIC_API_KEY: 'k' }, '--output-format must be'],
    [['--tool-timeout', '-1', 'q'], { ANTHROPIC_API_KEY: 'k' }, '--tool-timeout must be'],
    [[], { ANTHROPIC_API_KEY: 'k' }, 'no question'],
    [['audit'], { ANTHROPIC_API_KEY: 'k' }, 'audit needs a question: spelunk audit "'],
    [['adit'], { ANTHROPIC_API_KEY: 'k' }, '"adit" is not a command; did you mean spelunk audit "'],
    [['hlep'], { ANTHROPIC_API_KEY: 'k' }, 'did you mean spelunk help?'],
    [['--max-budget-usd', '1', '-m', 'claude-unknown-9', 'q'], { ANTHROPIC_API_KEY: 'k' }, 'needs a known price'],
  ])('%j → exit 2 with one line', async (argv, envVars, fragment) => {
    const run = await runCli(argv as string[], { env: envVars, cwd: repo.root });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(fragment);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(run.stdout).toBe('');
  });
});

describe('one-shot text mode against the local Messages API', () => {
  it('answers: stdout holds exactly the answer, activity and usage go to stderr', async () => {
    await start();
    api.enqueue(reply(text('The router is built in src/router.js:1-9.')));
    const run = await runCli(['-C', repo.root, 'Where is the router built?'], { env: env() });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('The router is built in src/router.js:1-9.\n');
    expect(run.stderr).toMatch(/↳ in [\d,]+ · cache write [\d,]+ · cache read [\d,]+ .*· out [\d,]+ · ~\$\d/);
    expect(run.stderr).toMatch(/Σ 1 request/);
    const [request] = messages();
    expect(request!.headers.authorization).toBe('Bearer test-key');
    expect(request!.body).not.toHaveProperty('temperature');
    expect(request!.body.model).toBe('claude-sonnet-5-5');
    const system = request!.body.system as Array<{ text: string; cache_control?: unknown }>;
    expect(system.at(-1)!.cache_control).toEqual({ type: 'ephemeral' });
    expect(system.map((b) => b.text).join('')).toContain('Run tests with `npm test`.');
    expect(system.map((b) => b.text).join('')).toContain('server.js');
  });

  it('--map-tokens bounds the map the model receives, --depth limits it', async () => {
    await start();
    api.enqueue(reply(text('a')), reply(text('b')));
    const mapOf = async (args: string[]) => {
      const run = await runCli(['-C', repo.root, ...args, 'q'], { env: env() });
      expect(run.code).toBe(0);
      const system = messages().at(-1)!.body.system as Array<{ text: string }>;
      return system.at(-1)!.text.replace(/^# Repository listing\n\n/, '');
    };
    const small = await mapOf(['--map-tokens', '90']);
    expect(small.length).toBeLessThanOrEqual(90 * 4);
    expect(small).toMatch(/^Map of the repository to depth 3[:;] /);
    expect(await mapOf(['--depth', '1'])).toMatch(/^Map of the repository to depth 1[:;] /);
  });

  it('a single word that is not near a subcommand is still a question (spelunk auth)', async () => {
    await start();
    api.enqueue(reply(text('Auth is in src/auth.js.')));
    const run = await runCli(['-C', repo.root, 'auth'], { env: env() });
    expect(run.code).toBe(0);
    expect(JSON.stringify(messages()[0]!.body.messages)).toContain('auth');
  });

  it('reads the question from stdin when there is no argument', async () => {
    await start();
    api.enqueue(reply(text('Migrations are not present.')));
    const run = await runCli(['-C', repo.root], { env: env(), stdin: 'How are\nmigrations run?\n' });
    expect(run.code).toBe(0);
    const body = messages()[0]!.body;
    expect(JSON.stringify(body.messages)).toContain('How are\\nmigrations run?');
  });

  it('runs real tools: read_file and bash results go back to the model, each call is shown live', async () => {
    await start();
    api.enqueue(
      reply(text('Let me look.'), toolUse('read_file', { path: 'src/server.js', start_line: 1, end_line: 5 }), toolUse('bash', { command: 'rg -n createServer src' })),
      reply(toolUse('bash', { command: 'cat src/server.js > copy.js' })),
      reply(text('createServer is at src/server.js:4.')),
    );
    const run = await runCli(['-C', repo.root, 'where is createServer?'], { env: env() });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('createServer is at src/server.js:4.\n');
    expect(run.stderr).toMatch(/^Let me look\.\n● read_file/m);
    expect(run.stderr).toContain('● read_file src/server.js:1-5');
    expect(run.stderr).toContain('● bash rg -n createServer src');
    expect(run.stderr).toMatch(/⎿ .*denied/);
    const second = messages()[1]!.body.messages!.at(-1)!.content as Array<Record<string, any>>;
    expect(second.map((b) => b.type)).toEqual(['tool_result', 'tool_result']);
    expect(second[0]!.content).toContain("1\tconst http = require('http');");
    expect(second[1]!.content).toContain('src/server.js:4:function createServer()');
    const third = messages()[2]!.body.messages!.at(-1)!.content as Array<Record<string, any>>;
    expect(third[0]).toMatchObject({ type: 'tool_result', is_error: true });
    expect(third[0]!.content).toMatch(/redirection/i);
  });

  it('stops at --max-turns with exit 3 and never sends more requests', async () => {
    await start();
    for (let i = 0; i < 5; i++) api.enqueue(reply(toolUse('bash', { command: 'ls' })));
    const run = await runCli(['-C', repo.root, '--max-turns', '2', 'loop forever'], { env: env() });
    expect(run.code).toBe(3);
    expect(messages()).toHaveLength(2);
    expect(run.stderr).toContain('--max-turns 2');
  });

  it.each([
    ['a 429 with retry-after, then success', [], [httpError(429, 'rate_limit_error', 'slow down', { 'retry-after-ms': '100' }), reply(text('ok'))], 0, /retry 1\/4 in 0\.1 s \(429 rate limited\)/],
    ['a 529 every time', [], Array.from({ length: 5 }, () => httpError(529, 'overloaded_error', 'Overloaded', { 'retry-after-ms': '100' })), 1, /retry 1\/4 in 0\.1 s \(529 overloaded\)\n[\s\S]*retry 4\/4 in 0\.1 s \(529 overloaded\)\n[\s\S]*API 529 overloaded_error: Overloaded \(request req_mock_5\)/],
    ['a 500 without retry-after (the SDK backoff)', [], [httpError(500, 'api_error', 'boom'), reply(text('ok'))], 0, /retry 1\/4 in ~0\.5 s \(500 server error\)/],
    ['a 401', [], [httpError(401, 'authentication_error', 'invalid x-api-key')], 1, /export ANTHROPIC_API_KEY=sk-ant-… \(request req_mock_1\)/],
    ['a 400', [], [httpError(400, 'invalid_request_error', 'bad thing')], 1, /API 400 invalid_request_error: bad thing/],
    ['a 403', [], [httpError(403, 'permission_error', 'not allowed')], 1, /API 403 permission_error: not allowed; this API key is not allowed to use claude-sonnet-5-5 .*console\.anthropic\.com \(request req_mock_1\)/],
    ['a 404 for an unknown model', ['-m', 'claude-sonet-5-5'], [httpError(404, 'not_found_error', 'model: claude-sonet-5-5')], 1, /unknown model "claude-sonet-5-5" \(API 404 not_found_error\); pick another with -m or SPELUNK_MODEL, e\.g\. claude-sonnet-5-5, .* \(request req_mock_1\)/],
    ['a 404 for another path', [], [httpError(404, 'not_found_error', 'Not found: POST /v1/v1/messages')], 1, /check that ANTHROPIC_BASE_URL points at the Messages API \(request req_mock_1\)/],
    ['a stream cut before any text (retried once)', [], [{ kind: 'stream_cut' as const, content: [text('never shown')], afterBlocks: 0 }, reply(text('ok'))], 0, /stream interrupted before any text/],
    ['a stream cut before any text, twice', [], [{ kind: 'stream_cut' as const }, { kind: 'stream_cut' as const }], 1, /the API stream was cut before any text, twice \(.+\); retryable: ask again \(request req_mock_2\)/],
    ['a stream cut mid-answer', [], [{ kind: 'stream_cut' as const, afterText: 'partial ' }], 1, /the API stream was cut mid-answer \(the text above is incomplete\) \(.+\); retryable: ask again \(request req_mock_1\)/],
    ['a malformed server event', [], [{ kind: 'stream_malformed' as const, afterText: 'partial ' }], 1, /the API sent an event spelunk could not read \(.+\); ask again, and report it if it repeats \(request req_mock_1\)/],
    ['an in-stream error after text', [], [{ kind: 'stream_error' as const, afterText: 'partial ' }], 1, /API stream failed mid-answer \(the text above is incomplete\): overloaded_error: Overloaded; retryable: ask again \(request req_mock_1\)/],
  ])('%s', async (_name, args, replies, code, pattern) => {
    await start();
    api.enqueue(...replies);
    const run = await runCli(['-C', repo.root, ...args, 'q'], { env: env() });
    expect(run.code).toBe(code);
    expect(run.stderr).toMatch(pattern);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('--max-budget-usd that cannot pay for the first request says what it costs and what budget would', async () => {
    await start();
    const run = await runCli(['-C', repo.root, '--max-budget-usd', '0.01', 'q'], { env: env() });
    expect(run.code).toBe(3);
    expect(messages()).toHaveLength(0);
    expect(run.stderr).toMatch(/--max-budget-usd 0\.01 cannot pay for a first request at this context size \([\d,]+ prompt tokens ~\$0\.\d+ \+ 1,024 output tokens ~\$0\.\d+\); raise it to at least 0\.0[2-9]\n/);
  });

  it('Ctrl+C while waiting for the model exits 130', async () => {
    await start();
    api.enqueue({ kind: 'hang' });
    const run = await runCli(['-C', repo.root, 'q'], {
      env: env(),
      onStart: ({ signals }) => {
        void api.waitForRequests(1).then(() => signals.emit('SIGINT'));
      },
    });
    expect(run.code).toBe(130);
  });

  it('--timeout stops the whole run with exit 3', async () => {
    await start();
    api.enqueue({ kind: 'hang' });
    const run = await runCli(['-C', repo.root, '--timeout', '0.3', 'q'], { env: env() });
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/stopped: the run reached --timeout 0\.3 \(seconds for the whole run\) before an answer; raise it, e\.g\. --timeout 0\.6\n/);
  });

  it('keeps the prompt prefix byte-stable and cached across runs', async () => {
    await start();
    api.enqueue(reply(text('one')), reply(text('two')));
    await runCli(['-C', repo.root, 'q1'], { env: env() });
    await runCli(['-C', repo.root, 'q2'], { env: env() });
    const [first, second] = messages();
    expect(JSON.stringify(second!.body.system)).toBe(JSON.stringify(first!.body.system));
    expect(JSON.stringify(second!.body.tools)).toBe(JSON.stringify(first!.body.tools));
    expect(first!.usage!.cache_creation_input_tokens).toBeGreaterThan(0);
    const prefix = first!.usage!.cache_creation_input_tokens;
    expect(second!.usage!.cache_read_input_tokens).toBeGreaterThanOrEqual(Math.floor(prefix * 0.95));
  });
});

describe('REPL on piped input (-i with a non-terminal stdin)', () => {
  it('answers the argument, then every piped line, and exits 0 at the end of input', async () => {
    await start();
    api.enqueue(reply(text('first')), reply(text('second')), reply(text('third')));
    const run = await runCli(['-C', repo.root, '-i', 'first question'], { env: env(), stdin: 'second question\nthird question\n' });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('first\nsecond\nthird\n');
    expect(messages()).toHaveLength(3);
    expect(run.stderr).toContain('TOTAL');
  });
});

describe('--thinking', () => {
  it.each([
    [['--thinking'], false],
    [['--thinking', '--show-thinking'], true],
  ])('%j: thinking is requested, signed blocks go back with the tool results, text shown only with --show-thinking', async (flags, shown) => {
    await start();
    api.enqueue(reply(thinking('private chain of thought', 'sig_1'), toolUse('bash', { command: 'ls' })), reply(text('done')));
    const run = await runCli(['-C', repo.root, ...flags, 'q'], { env: env() });
    expect(run.code).toBe(0);
    expect(messages()[0]!.body.thinking).toEqual({ type: 'adaptive' });
    const assistant = messages()[1]!.body.messages!.at(-2)!.content as Array<Record<string, unknown>>;
    expect(assistant[0]).toMatchObject({ type: 'thinking', signature: 'sig_1' });
    expect(run.stdout).toBe('done\n');
    expect(run.stderr.includes('private chain of thought')).toBe(shown);
  });
});
