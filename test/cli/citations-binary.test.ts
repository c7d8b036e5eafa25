import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { runBinary } from '../support/binary.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

// Issue 9 through the built binary, a separate process writing to real pipes (test/cli/citations.test.ts covers the
// same rules in-process).
let api: MockApi;
let home: string;
const repo = useRepo(APP_FILES);
const messages = () => api.requests.filter((r) => r.path === '/v1/messages');

beforeAll(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-citations-home-'));
});
afterAll(async () => {
  await fs.rm(home, { recursive: true, force: true });
});
afterEach(async () => {
  await api?.close();
});

/** src/router.js has 9 lines; line 3 is `function handle(req, res) {`. */
const GOOD = 'The handler is `src/router.js:3`.';
const BAD = 'The handler is at src/router.js:99.';

/** Runs dist/spelunk.js in the test repository with stdout and stderr on pipes; `stdin` is piped in and closed. */
function run(args: string[], opts: { stdin?: string; env?: Record<string, string> } = {}) {
  const env = { HOME: home, XDG_STATE_HOME: home, XDG_CACHE_HOME: home, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, ...opts.env };
  return runBinary(['-C', repo.root, ...args], { cwd: repo.root, env, stdin: opts.stdin ?? '' });
}

describe('--verify-citations fix (the built binary)', () => {
  it('gives the model one more turn listing the bad citation; stdout holds only the corrected answer', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text(BAD)), reply(text(GOOD)));
    const result = await run(['--verify-citations', 'fix', '--max-turns', '3', 'where is the handler?']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${GOOD}\n`);
    expect(messages()).toHaveLength(2);
    const fix = JSON.stringify(messages()[1]!.body.messages!.at(-1));
    expect(fix).toContain('- src/router.js:99: line_out_of_range (the file has 9 lines)');
    expect(result.stderr).toContain('1 citation(s) did not check out; asking the model for a corrected answer');
    expect(result.stderr).toContain('Sources\n  ✓ src/router.js:3  function handle(req, res) {\n');
  });

  it('a correct citation with an identifier before it costs no fix turn; a wrong quote is named in the fix turn (issue 24)', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    const right = 'Requests go through `handle()` (src/router.js:3).';
    api.enqueue(reply(text(right)));
    const clean = await run(['--verify-citations', 'fix', 'where is the handler?']);
    expect([clean.code, clean.stdout, messages().length]).toEqual([0, `${right}\n`, 1]);
    await api.close();
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('Requests go through `function route(req)` (src/router.js:3).')), reply(text(GOOD)));
    const fixed = await run(['--verify-citations', 'fix', 'where is the handler?']);
    expect(fixed.stdout).toBe(`${GOOD}\n`);
    const fix = (messages()[1]!.body.messages!.at(-1) as { content: Array<{ text?: string }> }).content.map((b) => b.text ?? '').join('');
    expect(fix).toContain('- src/router.js:3: quote_mismatch (the quoted code `function route(req)` is not within 3 lines of the cited range); line 3 reads `function handle(req, res) {`');
  });

  it('the fix turn counts within --max-turns: after a tool turn and the answer, none is left', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('Looking.'), toolUse('read_file', { path: 'src/router.js' })), reply(text(BAD)), reply(text(GOOD)));
    const result = await run(['--verify-citations', 'fix', '--max-turns', '2', 'where is the handler?']);
    expect(result.code).toBe(3);
    expect(messages()).toHaveLength(2);
    expect(result.stdout).toBe(`${BAD}\n`);
    expect(result.stderr).toContain('no turn left for --verify-citations fix (--max-turns 2)');
    expect(result.stderr).toContain('  ✗ src/router.js:99  line out of range (the file has 9 lines)');
  });
});

describe('--verify-citations off (the built binary)', () => {
  it('a fix turn that is the last one --max-turns allows: the corrected answer, and the limit named as the user set it', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text(BAD)), reply(text(GOOD)));
    const result = await run(['--verify-citations', 'fix', '--max-turns', '2', 'where is the handler?']);
    expect(messages()).toHaveLength(2);
    expect(result.stdout).toBe(`${GOOD}\n`);
    // The model was told this request was its last, so the answer is marked as possibly incomplete (exit 3).
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('the last request --max-turns 2 allowed');
    expect(result.stderr).not.toContain('--max-turns 1');
  });

  it('prints no Sources block and checks nothing, in text and in stream-json', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text(BAD)), reply(text(BAD)));
    const plain = await run(['--verify-citations', 'off', 'q']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toBe(`${BAD}\n`);
    expect(plain.stderr).not.toContain('Sources');
    expect(plain.stderr).not.toMatch(/[✓✗]/);
    const stream = await run(['--verify-citations', 'off', '--output-format', 'stream-json', 'q']);
    const lines = stream.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.subtype === 'warning')).toEqual([]);
    expect(lines.at(-1)).toMatchObject({ type: 'result', subtype: 'success' });
    expect(lines.at(-1)).not.toHaveProperty('citations');
  });
});

describe('--output-format stream-json (the built binary)', () => {
  it('the result line carries citations with their statuses, after a warning line per bad one', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('The handler is src/router.js:3; routes live at src/router.js:99 and in src/routes.js:1.')));
    const result = await run(['--output-format', 'stream-json', 'q']);
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const warnings = lines.filter((l) => l.subtype === 'warning').map((l) => l.message);
    expect(warnings).toEqual([
      'citation src/router.js:99: line_out_of_range (the file has 9 lines)',
      'citation src/routes.js:1: missing_file (no such file in the repository)',
    ]);
    const result_ = lines.at(-1);
    expect(result_.type).toBe('result');
    expect(result_.citations).toEqual([
      { path: 'src/router.js', start_line: 3, end_line: 3, status: 'ok', excerpt: 'function handle(req, res) {' },
      { path: 'src/router.js', start_line: 99, end_line: 99, status: 'line_out_of_range', excerpt: null },
      { path: 'src/routes.js', start_line: 1, end_line: 1, status: 'missing_file', excerpt: null },
    ]);
    expect(lines.findIndex((l) => l.subtype === 'warning')).toBeLessThan(lines.length - 1);
  });
});

describe('pipes: the answer alone on stdout, never an escape sequence (the built binary)', () => {
  it('no escape sequence at all on piped stdout and stderr, even with hyperlinks forced', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text(`## Handler\n\n${GOOD}\n`)));
    const result = await run(['q'], { env: { FORCE_HYPERLINK: '1' } });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`## Handler\n\n${GOOD}\n`);
    expect(result.stderr).toContain('✓ src/router.js:3');
    expect(result.stdout + result.stderr).not.toContain('\x1b');
  });

  it('-i with two more questions piped in: stdout holds exactly the answers, commentary on stderr', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(
      reply(text('Looking.'), toolUse('read_file', { path: 'src/router.js' })),
      reply(text('First: src/router.js:3.')),
      reply(text("I'll check the server."), toolUse('read_file', { path: 'src/server.js' })),
      reply(text('Second: src/server.js:4.')),
      reply(text('Third: src/router.js:9.')),
    );
    const result = await run(['-i', 'where is the handler?'], { stdin: 'where is the server made?\nwhat does the router export?\n' });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('First: src/router.js:3.\nSecond: src/server.js:4.\nThird: src/router.js:9.\n');
    expect(result.stderr).toMatch(/^Looking\.\n● read_file src\/router\.js[\s\S]*^I'll check the server\.\n● read_file src\/server\.js/m);
    expect(messages().map((m) => JSON.stringify(m.body.messages!.at(-1)))).toEqual([
      expect.stringContaining('where is the handler?'),
      expect.stringContaining('tool_result'),
      expect.stringContaining('where is the server made?'),
      expect.stringContaining('tool_result'),
      expect.stringContaining('what does the router export?'),
    ]);
  });

  it('-i with every question piped in and none on the command line: one answer per line, not one question', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('First: src/router.js:3.')), reply(text('Second: src/server.js:4.')));
    const result = await run(['-i'], { stdin: 'where is the handler?\nwhere is the server made?\n' });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('First: src/router.js:3.\nSecond: src/server.js:4.\n');
    expect(messages()).toHaveLength(2);
    expect(JSON.stringify(messages()[1]!.body.messages!.at(-1))).toContain('where is the server made?');
  });

  it('a stream cut mid-answer: stdout is empty and stderr says what was cut', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue({ kind: 'stream_cut', afterText: 'The handler is at src/rou' });
    const result = await run(['q']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('The handler is at src/rou\n(the answer above was cut (api_error), so it was not written to stdout)');
    expect(result.stderr).not.toContain('Sources');
  });

  it.each([
    ['OSC 52 (clipboard write)', '\x1b]52;c;ZXZpbA==\x07'],
    ['clear screen', '\x1b[2J'],
    ['a C1 CSI', '\x9b2J'],
  ])('%s from the model, in commentary and in the answer, never reaches either stream raw', async (_name, seq) => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text(`Looking${seq}.`), toolUse('read_file', { path: 'src/router.js' })), reply(text(`The handler${seq} is src/router.js:3.`)));
    const result = await run(['q']);
    expect(result.code).toBe(0);
    const both = result.stdout + result.stderr;
    expect(both).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    expect(result.stdout).toMatch(/^The handler\S+ is src\/router\.js:3\.\n$/);
    expect(result.stdout).toContain('\\x');
    expect(result.stderr).toMatch(/^Looking\S+\.\n● read_file/m);
  });
});
