import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

let api: MockApi;
const repo = useRepo(APP_FILES);
const env = () => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url });
const messages = () => api.requests.filter((r) => r.path === '/v1/messages');
const schema = (name: string) => JSON.parse(readFileSync(new URL(`../../schema/${name}`, import.meta.url), 'utf8'));
const ajv = new Ajv({ strict: false });
ajv.addSchema(schema('result.schema.json'), 'result.schema.json');
const validateResult = ajv.getSchema('result.schema.json')!;
const validateEvent = ajv.compile(schema('stream-event.schema.json'));

afterEach(async () => {
  await api?.close();
});

/** src/router.js has 9 lines; line 3 is `function handle(req, res) {`. */
const GOOD = 'The handler is `src/router.js:3`.';
const MIXED = 'The handler is src/router.js:3; routes live at src/router.js:99 and in src/routes.js:1.';

async function ask(answer: string, args: string[] = []) {
  api = await startMockApi({ minCacheTokens: 256 });
  api.enqueue(reply(text('Looking.'), toolUse('read_file', { path: 'src/router.js' })), reply(text(answer)));
  return runCli(['-C', repo.root, ...args, 'where is the handler?'], { env: env() });
}

describe('text mode: the answer alone on stdout, the Sources block on stderr (issue 9)', () => {
  it('lists each distinct citation with ✓ and the cited line, or ✗ and what is wrong', async () => {
    const run = await ask(MIXED);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${MIXED}\n`);
    const block = run.stderr.slice(run.stderr.indexOf('Sources\n'));
    expect(block).toBe(
      [
        'Sources',
        '  ✓ src/router.js:3  function handle(req, res) {',
        '  ✗ src/router.js:99  line out of range (the file has 9 lines)',
        '  ✗ src/routes.js:1  missing file (no such file in the repository)',
        '',
      ].join('\n'),
    );
    expect(run.stderr).toMatch(/^Looking\.\n● read_file/m);
  });

  it('prints no Sources block for an answer without citations, nor with --verify-citations off', async () => {
    const none = await ask('It is a small HTTP app.');
    expect(none.stderr).not.toContain('Sources');
    await api.close();
    const off = await ask(MIXED, ['--verify-citations', 'off']);
    expect(off.stdout).toBe(`${MIXED}\n`);
    expect(off.stderr).not.toContain('Sources');
  });

  it('a run cut mid-answer leaves stdout empty and says on stderr what was cut', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue({ kind: 'stream_cut', afterText: 'The handler is at src/rou' });
    const run = await runCli(['-C', repo.root, 'q'], { env: env() });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('The handler is at src/rou\n(the answer above was cut (api_error), so it was not written to stdout)');
    expect(run.stderr).not.toContain('Sources');
  });

  it.each([['maybe']])('--verify-citations %j is a usage error with the choices', async (mode) => {
    const run = await runCli(['--verify-citations', mode, 'q'], { env: { ANTHROPIC_API_KEY: 'k' }, cwd: repo.root });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`spelunk: --verify-citations must be off, report or fix (got "${mode}")\n`);
  });
});

describe('json and stream-json: citations in the result, a warning per bad one', () => {
  const expected = [
    { path: 'src/router.js', start_line: 3, end_line: 3, status: 'ok', excerpt: 'function handle(req, res) {' },
    { path: 'src/router.js', start_line: 99, end_line: 99, status: 'line_out_of_range', excerpt: null },
    { path: 'src/routes.js', start_line: 1, end_line: 1, status: 'missing_file', excerpt: null },
  ];

  it('json: citations[] and warnings, valid against the schema', async () => {
    const run = await ask(MIXED, ['--output-format', 'json']);
    const result = JSON.parse(run.stdout);
    expect(validateResult(result)).toBe(true);
    expect(result.citations).toEqual(expected);
    expect(result.warnings).toEqual([
      'citation src/router.js:99: line_out_of_range (the file has 9 lines)',
      'citation src/routes.js:1: missing_file (no such file in the repository)',
    ]);
    expect(result.subtype).toBe('success');
    // The Sources block is for a person reading text mode; json carries the same facts in citations[].
    expect(run.stderr).not.toContain('Sources');
    expect(run.stderr).not.toMatch(/[✓✗] src\//);
  });

  it('json: no citations field with --verify-citations off', async () => {
    const run = await ask(MIXED, ['--output-format', 'json', '--verify-citations=off']);
    expect(JSON.parse(run.stdout)).not.toHaveProperty('citations');
  });

  it('stream-json: a warning line per bad citation before the result, every line valid', async () => {
    const run = await ask(MIXED, ['--output-format', 'stream-json']);
    const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
    for (const line of lines) expect(validateEvent(line), JSON.stringify(validateEvent.errors)).toBe(true);
    const warnings = lines.filter((l) => l.subtype === 'warning').map((l) => l.message);
    expect(warnings).toEqual(['citation src/router.js:99: line_out_of_range (the file has 9 lines)', 'citation src/routes.js:1: missing_file (no such file in the repository)']);
    expect(lines.at(-1)).toMatchObject({ type: 'result', citations: expected });
  });
});

describe('--verify-citations fix', () => {
  it('asks once more, listing the bad citations; the corrected answer replaces the first everywhere', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('It is at src/router.js:99.')), reply(toolUse('read_file', { path: 'src/router.js' })), reply(text(GOOD)));
    const run = await runCli(['-C', repo.root, '--verify-citations', 'fix', '--output-format', 'json', 'q'], { env: env() });
    const result = JSON.parse(run.stdout);
    expect(result.result).toBe(GOOD);
    expect(result.citations).toEqual([{ path: 'src/router.js', start_line: 3, end_line: 3, status: 'ok', excerpt: 'function handle(req, res) {' }]);
    expect(result.warnings).toEqual([]);
    expect(result.num_turns).toBe(3);
    const fix = messages()[1]!.body.messages!.at(-1)!;
    expect(fix.role).toBe('user');
    expect(JSON.stringify(fix.content)).toContain('- src/router.js:99: line_out_of_range (the file has 9 lines)');
  });

  it('text mode: stdout holds only the corrected answer; stderr says a correction was asked for', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('It is at src/router.js:99.')), reply(text(GOOD)));
    const run = await runCli(['-C', repo.root, '--verify-citations=fix', 'q'], { env: env() });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${GOOD}\n`);
    expect(run.stderr).toContain('1 citation(s) did not check out; asking the model for a corrected answer');
    expect(run.stderr).toContain('  ✓ src/router.js:3');
  });

  it('stays inside --max-turns: with no turn left the bad citations are reported, not fixed', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('It is at src/router.js:99.')));
    const run = await runCli(['-C', repo.root, '--verify-citations', 'fix', '--max-turns', '1', 'q'], { env: env() });
    // The answer was given in the last request --max-turns allowed: it stands on stdout, and the run exits 3.
    expect(run.code).toBe(3);
    expect(messages()).toHaveLength(1);
    expect(run.stdout).toBe('It is at src/router.js:99.\n');
    expect(run.stderr).toContain('no turn left for --verify-citations fix (--max-turns 1)');
    expect(run.stderr).toContain('  ✗ src/router.js:99  line out of range');
  });

  it('report (the default) never asks again', async () => {
    const run = await ask(MIXED);
    expect(messages()).toHaveLength(2);
    expect(run.stdout).toBe(`${MIXED}\n`);
  });
});

describe('on a terminal: rendered answer, hyperlinks for verified citations only', () => {
  const ANSWER = '## Handler\n\nThe handler is `src/router.js:3`, not src/router.js:99.\n';
  const link = (url: string, label: string) => `\x1b]8;;${url}\x1b\\${label}\x1b]8;;\x1b\\`;

  async function askOnTty(extraEnv: Record<string, string>, args: string[] = [], tty = true) {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text(ANSWER)));
    return runCli(['-C', repo.root, ...args, 'q'], { env: { ...env(), ...extraEnv }, ...(tty ? { tty: { columns: 80 } } : {}) });
  }

  it('links each verified path:line with SPELUNK_EDITOR_URL, in the answer and in Sources; a bad one stays plain', async () => {
    const run = await askOnTty({ FORCE_HYPERLINK: '1', SPELUNK_EDITOR_URL: 'vscode://file/{abs}:{line}' });
    const url = `vscode://file/${repo.root}/src/router.js:3`;
    expect(run.stdout).toContain(link(url, 'src/router.js:3'));
    expect(run.stdout).not.toContain('## ');
    expect(run.stdout).not.toMatch(/\x1b\]8;;[^\x1b]*\x1b\\src\/router\.js:99/);
    const stderr = run.stderr.replace(/\x1b\[[0-9;]*m/g, '');
    expect(stderr).toContain(`✓ ${link(url, 'src/router.js:3')}  function handle(req, res) {`);
    expect(stderr).toContain('✗ src/router.js:99  line out of range');
  });

  it('uses file:// URLs by default', async () => {
    const run = await askOnTty({ FORCE_HYPERLINK: '1' });
    expect(run.stdout).toContain(link(`file://${repo.root}/src/router.js`, 'src/router.js:3'));
  });

  it.each([
    ['a terminal without hyperlink support', { FORCE_HYPERLINK: '0' }, [], true],
    ['--no-render', { FORCE_HYPERLINK: '1' }, ['--no-render'], true],
    ['stdout not a terminal', { FORCE_HYPERLINK: '1', FORCE_COLOR: '1' }, [], false],
  ] as const)('%s: no hyperlink in the answer', async (_name, extraEnv, args, tty) => {
    const run = await askOnTty({ ...extraEnv }, [...args], tty);
    expect(run.stdout).not.toContain('\x1b]8;;');
    if (args.length > 0 || !tty) expect(run.stdout).toBe(ANSWER);
  });

  it('an editor template with a control character gives plain text, never a forged sequence', async () => {
    const run = await askOnTty({ FORCE_HYPERLINK: '1', SPELUNK_EDITOR_URL: 'x://{abs}\x07\x1b]8;;evil' });
    expect(run.stdout).not.toContain('\x1b]8;;');
    expect(run.stdout).not.toContain('\x07');
  });
});

describe('the REPL on piped input (-i): the same rules', () => {
  it('stdout holds only the answers; commentary and each answer\'s Sources block go to stderr; fix works there too', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(
      reply(text('Looking.'), toolUse('read_file', { path: 'src/router.js' })),
      reply(text('First: src/router.js:3.')),
      reply(text('Second: src/router.js:99.')),
      reply(text('Second, corrected: src/router.js:9.')),
    );
    const run = await runCli(['-C', repo.root, '-i', '--verify-citations', 'fix', 'first?'], { env: env(), stdin: 'second?\n' });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('First: src/router.js:3.\nSecond, corrected: src/router.js:9.\n');
    expect(run.stderr).toMatch(/^Looking\.\n● read_file/m);
    expect(run.stderr).toMatch(/Sources\n {2}✓ src\/router\.js:3 [\s\S]*asking the model for a corrected answer[\s\S]*Sources\n {2}✓ src\/router\.js:9 /);
    expect(run.stderr).not.toContain('Second: src/router.js:99.');
  });
});
