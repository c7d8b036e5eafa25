import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { BIN, PtySession, stripAnsi } from '../support/pty.js';
import { APP_FILES, makeRepo } from '../support/temp-repo.js';
import { LARGE_QUESTION_BYTES } from '../../src/run/question.js';

// Issue 24 on a real terminal: the built binary in a pseudo-terminal (util-linux `script`), against the local API.
let api: MockApi | undefined;
let repo: { root: string; cleanup(): Promise<void> };
let root: string;
let state: string;
let pty: PtySession | null = null;

beforeAll(async () => {
  repo = await makeRepo(APP_FILES, { git: true });
  root = await fs.realpath(repo.root);
  state = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-term-state-'));
});
afterAll(async () => {
  await repo.cleanup();
  await fs.rm(state, { recursive: true, force: true });
});
afterEach(async () => {
  pty?.kill();
  pty = null;
  await api?.close();
  api = undefined;
});

function env(): Record<string, string> {
  return { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api!.url, XDG_STATE_HOME: state, HOME: state };
}

function open(args: string[]): PtySession {
  pty = new PtySession(['-C', root, ...args], env());
  return pty;
}

describe('the answer on a terminal', () => {
  const hostile = 'The file sets the title: \x1b]0;pwned\x07 and clears: \x1b[2J\x1b[H done.';

  it('--no-render: escape sequences quoted from the repository are shown escaped, never sent to the terminal', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text(hostile)));
    const p = open(['--no-render', 'what does banner.sh print?']);
    expect(await p.exited).toBe(0);
    expect(p.output).not.toContain('\x1b]0;');
    expect(p.output).not.toContain('\x1b[2J');
    expect(p.output).not.toContain('\x07');
    expect(p.screen()).toContain('The file sets the title: \\x1b]0;pwned\\x07 and clears: \\x1b[2J\\x1b[H done.');
  });

  it('rendered: list items with inline code and wrapping, ● git log once, and the usage lines after the last paragraph', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    const answer = [
      'The server starts in two steps:',
      '',
      '- `createServer()` in **src/server.js** builds it',
      `- ${'a long item that keeps going '.repeat(5)}until it has to wrap`,
      '',
      'That is the whole start-up.',
    ].join('\n');
    api.enqueue(reply(toolUse('git', { command: 'log --oneline -3' })), reply(text(answer)));
    const p = open(['how does the server start?']);
    expect(await p.exited).toBe(0);
    const screen = p.screen().replace(/\r/g, '');
    expect(screen).toContain('● git log --oneline -3');
    expect(screen).not.toContain('git git');
    expect(screen).toContain('* createServer() in src/server.js builds it');
    expect(screen).not.toContain('`');
    expect(screen).not.toContain('**');
    const lines = screen.split('\n');
    // The answer's lines (the spinner's frames, drawn with \r, run together on the stripped screen before it).
    const answerLines = lines.slice(lines.findIndex((l) => l.includes('createServer()')), lines.findIndex((l) => l.includes('whole start-up')) + 1);
    expect(answerLines.length).toBeGreaterThan(3);
    for (const line of answerLines) expect(line.length).toBeLessThanOrEqual(80);
    expect(lines.filter((l) => l.includes('a long item that keeps going')).length).toBeGreaterThan(1);
    // The last paragraph, then the last request's usage line and the question's total: nothing of the answer after them.
    const last = lines.findIndex((l) => l.includes('That is the whole start-up.'));
    const usage = lines.findLastIndex((l) => l.startsWith('  ↳ in '));
    const total = lines.findIndex((l) => l.startsWith('  Σ 2 requests'));
    expect(last).toBeGreaterThan(-1);
    expect(usage).toBeGreaterThan(last);
    expect(total).toBeGreaterThan(usage);
  });
});

describe('a large question on a terminal asks first', () => {
  /**
   * The question as several arguments (one argument is capped at 128 KiB by the kernel), passed through environment
   * variables because `script` hands its command to a shell as one string.
   */
  function openLarge(): PtySession {
    const part = 'word '.repeat(Math.ceil(LARGE_QUESTION_BYTES / 3 / 5));
    const command = `exec '${process.execPath}' '${BIN}' -C '${root}' "$Q1" "$Q2" "$Q3" "$Q4"`;
    const session = Object.create(PtySession.prototype) as PtySession & { output: string };
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: { PATH: '/usr/bin:/bin', TERM: 'xterm', ...env(), Q1: part, Q2: part, Q3: part, Q4: 'what is this?' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    Object.assign(session, { child, output: '', exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) });
    child.stdout!.on('data', (d: Buffer) => (session.output += d.toString('utf8')));
    pty = session;
    return session;
  }

  it('with its size and estimated cost; y sends it', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('It is a list of words.')));
    const p = openLarge();
    await p.waitFor(/the question is 25\d KB \(~6\d,\d{3} tokens, ~\$0\.1\d as input to claude-sonnet-5-5 for its first request\)\. Send it\? \[y\/N\] $/);
    expect(api.requests).toHaveLength(0);
    p.type('y\r');
    expect(await p.exited).toBe(0);
    expect(stripAnsi(p.output)).toContain('It is a list of words.');
    expect(api.requests.filter((r) => r.path === '/v1/messages')).toHaveLength(1);
  });

  it('Ctrl+C at the prompt: interrupted (exit 130), nothing sent', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    const p = openLarge();
    await p.waitFor(/Send it\? \[y\/N\] $/);
    p.type('\x03');
    expect(await p.exited).toBe(130);
    expect(p.screen()).toContain('spelunk: interrupted; not sent');
    expect(api.requests).toHaveLength(0);
  });

  it('anything but y: not sent, exit 2', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    const p = openLarge();
    await p.waitFor(/Send it\? \[y\/N\] $/);
    p.type('\r');
    expect(await p.exited).toBe(2);
    expect(p.screen()).toContain('spelunk: not sent');
    expect(api.requests).toHaveLength(0);
  });
});

describe('a large paste in the REPL', () => {
  // One paste (each is ~250 KB typed into the pseudo-terminal); `n` and piped input are rows of test/run/question.test.ts.
  it('is held until y sends it', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('Pasted answer.')));
    const p = open([]);
    let mark = await p.waitFor(/› $/);
    p.type(`${'pasted words '.repeat(Math.ceil(LARGE_QUESTION_BYTES / 13) + 10)}\r`);
    mark = await p.waitFor(/the question is 25\d KB \(~6\d,\d{3} tokens, ~\$0\.1\d as input to claude-sonnet-5-5 for its first request\)\. Send it\? Type y to send it, anything else to drop it[\s\S]*› $/, { from: mark, ms: 60_000 });
    expect(api.requests).toHaveLength(0);
    p.type('y\r');
    await p.waitFor(/Pasted answer\.[\s\S]*› $/, { from: mark });
    p.type('\x04');
    expect(await p.exited).toBe(0);
    expect(api.requests.filter((r) => r.path === '/v1/messages')).toHaveLength(1);
  }, 90_000);
});

describe('the REPL on exit', () => {
  it('says how to continue the saved session', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('Routes live in src/router.js:1.')));
    const p = open([]);
    await p.waitFor(/› $/);
    p.type('where are the routes?\r');
    await p.waitFor(/src\/router\.js:1\.[\s\S]*› $/);
    p.type('\x04');
    expect(await p.exited).toBe(0);
    expect(p.screen()).toMatch(/TOTAL[\s\S]*\ncontinue: spelunk -C \S+ -c "…" \(or spelunk -C \S+ --resume [0-9a-f]{8} "…"\)\r?\n/);
  });
});
