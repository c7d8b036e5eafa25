import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN } from '../support/pty.js';
import { httpError, reply, startMockApi, text, type MockApi } from '../support/mock-api.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';
import { runBinary } from '../support/binary.js';
import { LARGE_QUESTION_BYTES, PIPED_MAX_BYTES } from '../../src/run/question.js';

// The built binary, stdin on a real pipe: what `git log -3 --stat | spelunk "summarise these commits"` does.
let api: MockApi;
const repo = useRepo(APP_FILES, { git: true });

afterEach(async () => {
  await api?.close();
});

function run(args: string[], opts: { stdin?: string; env?: Record<string, string> } = {}) {
  const env = { HOME: path.dirname(repo.root), ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, ...opts.env };
  return runBinary(args, { cwd: repo.root, env, ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}) });
}

/** The text of the first user message of the first /v1/messages request. */
function firstMessage(): string {
  const request = api.requests.find((r) => r.path === '/v1/messages')!;
  const content = request.body.messages![0]!.content;
  return typeof content === 'string' ? content : content.map((b) => String(b.text ?? '')).join('');
}

describe('piped stdin with a question', () => {
  it('both go to the model: the question, then the piped text in a delimited block', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('Three commits.')));
    const log = 'commit 1a2b3c\nAuthor: A\n\n    fix the router\n\n src/router.js | 2 +-\n';
    const result = await run(['summarise these commits'], { stdin: log });
    expect(result.code).toBe(0);
    expect(firstMessage()).toBe(`summarise these commits\n\nText piped to spelunk on stdin:\n<stdin>\n${log.trimEnd()}\n</stdin>`);
    expect(result.stderr).not.toContain('stdin is');
  });

  it('an empty pipe adds nothing: the question alone', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('ok')));
    const result = await run(['where is the router?'], { stdin: '  \n' });
    expect(result.code).toBe(0);
    expect(firstMessage()).toBe('where is the router?');
  });

  it('a long pipe is cut at the cap, at a line break; the block and a warning say so with both sizes', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('ok')));
    const line = `${'x'.repeat(96)}\n`;
    const piped = line.repeat(3093);
    const result = await run(['what is this?'], { stdin: piped });
    expect(result.code).toBe(0);
    const sent = firstMessage();
    const kept = sent.slice(sent.indexOf('<stdin>\n') + 8, sent.indexOf('\n[stdin was cut'));
    expect(kept.length).toBeLessThanOrEqual(PIPED_MAX_BYTES);
    expect(kept.length).toBeGreaterThan(PIPED_MAX_BYTES - line.length);
    expect(kept.endsWith('x')).toBe(true);
    expect(sent).toMatch(/\n\[stdin was cut: the first 199,\d{3} of 300,021 bytes are above\]\n<\/stdin>$/);
    expect(result.stderr).toContain('warning: stdin is 300 KB; only its first 200 KB go to the model with the question\n');
  });

  it('a stdin nobody closes: after 3 s one line says spelunk is waiting for it; closing it goes on', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('ok')));
    const { child, stderr, exited } = withOpenStdin('what is this?');
    child.stdin.write('first part\n');
    const deadline = Date.now() + 10_000;
    while (!stderr().includes('waiting for stdin') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(stderr()).toContain('spelunk: waiting for stdin to end (piped text goes to the model with the question); run with </dev/null if there is none\n');
    expect(api.requests).toHaveLength(0);
    child.stdin.end('second part\n');
    expect(await exited).toBe(0);
    expect(firstMessage()).toContain('<stdin>\nfirst part\nsecond part\n</stdin>');
  });

  it('an empty stdin left open (a script that never closes it) is given up on after 3 s: the question alone, no hang', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('ok')));
    const { child, stderr, exited } = withOpenStdin('what is this?');
    expect(await exited).toBe(0);
    expect(stderr()).toContain('spelunk: no stdin data within 3 s; answering the question alone (redirect stdin from /dev/null to skip the wait)\n');
    expect(stderr()).not.toContain('waiting for stdin');
    expect(firstMessage()).toBe('what is this?');
    child.stdin.destroy();
  });

  it('without a question, stdin is the question, as before', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('ok')));
    const result = await run([], { stdin: 'How are\nmigrations run?\n' });
    expect(result.code).toBe(0);
    expect(firstMessage()).toBe('How are\nmigrations run?');
  });
});

describe('a large question', () => {
  it('is refused when not on a terminal: exit 2, its size and estimated cost, nothing sent', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    const big = `${'word '.repeat(Math.ceil((LARGE_QUESTION_BYTES + 1000) / 5))}?`;
    const result = await run([], { stdin: big });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^spelunk: the question is 251 KB \(~62,\d{3} tokens, ~\$0\.13 as input to claude-sonnet-5-5 for its first request\); over 250 KB a question is sent only with --allow-large-question \(or when confirmed on a terminal\)\n$/);
    expect(api.requests).toHaveLength(0);
  });

  it('the estimate follows the model (-m haiku costs less; an unknown model says so)', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    const big = 'y'.repeat(LARGE_QUESTION_BYTES + 4);
    expect((await run(['-m', 'haiku'], { stdin: big })).stderr).toContain('~$0.01 as input to claude-haiku-5-5');
    expect((await run(['-m', 'claude-x-1'], { stdin: big })).stderr).toContain('(~62,501 tokens, cost unknown for claude-x-1)');
  });

  it('--allow-large-question sends it; a prompt too long for the window then ends with exit 3 and one line', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(httpError(400, 'invalid_request_error', 'prompt is too long: 1204381 tokens > 1000000 maximum'));
    const result = await run(['--allow-large-question', '--output-format', 'json'], { stdin: 'z'.repeat(LARGE_QUESTION_BYTES + 10) });
    expect(result.code).toBe(3);
    const parsed = JSON.parse(result.stdout);
    expect(parsed).toMatchObject({ subtype: 'error_during_execution', stop_reason: 'context_exceeded', is_error: true });
    expect(parsed.error.message).toContain("the question does not fit claude-sonnet-5-5's context window (API 400: prompt is too long");
  });

  it('in the REPL from piped input: a large line is not sent (said why), the next question still is', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('Small answer.')));
    const big = 'q'.repeat(LARGE_QUESTION_BYTES + 1);
    const result = await run(['-i'], { stdin: `${big}\nwhere is the router?\n` });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/not sent: the question is 250 KB \(~62,501 tokens, ~\$0\.13 as input to claude-sonnet-5-5 for its first request\); --allow-large-question sends it\n/);
    expect(result.stdout).toContain('Small answer.');
    const sent = api.requests.filter((r) => r.path === '/v1/messages');
    expect(sent).toHaveLength(1);
    expect(JSON.stringify(sent[0]!.body.messages)).not.toContain('qqqq');
  });
});

/** The built binary asked `question` with a stdin pipe that stays open until the test writes to or ends it. */
function withOpenStdin(question: string) {
  const child = spawn(process.execPath, [BIN, question], {
    cwd: repo.root,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: path.dirname(repo.root), ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return { child, stderr: () => stderr, exited };
}
