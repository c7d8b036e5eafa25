import { promises as fs, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { PtySession, stripAnsi } from '../support/pty.js';
import { APP_FILES, makeRepo } from '../support/temp-repo.js';

let api: MockApi;
let repo: { root: string; cleanup(): Promise<void> };
let state: string;
let pty: PtySession | null = null;

beforeAll(async () => {
  repo = await makeRepo(APP_FILES);
  state = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-state-'));
});
afterAll(async () => {
  await repo.cleanup();
  await fs.rm(state, { recursive: true, force: true });
});
afterEach(async () => {
  pty?.kill();
  pty = null;
  await api?.close();
});

function open(args: string[] = [], env: Record<string, string> = {}): PtySession {
  pty = new PtySession(['-C', repo.root, ...args], { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, XDG_STATE_HOME: state, HOME: state, ...env });
  return pty;
}

describe('REPL in a pseudo-terminal (the real binary)', () => {
  it('answers, cancels a turn with Ctrl+C, keeps the conversation valid, and prints the table on Ctrl+D', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    // The cancelled request got as far as message_start (usage reported, so billed) and some text.
    api.enqueue(reply(text('The router is in src/router.js:3.')), { kind: 'stall', afterText: 'Something long ' }, reply(toolUse('read_file', { path: 'src/server.js' })), reply(text('createServer is at src/server.js:4.')));
    // Raw text: a rendered answer holds an unfinished paragraph back, and this test presses Ctrl+C mid-paragraph.
    const p = open(['--no-render']);
    await p.waitFor(/\/help for commands[\s\S]*› $/);
    p.type('where is the router?\r');
    let mark = await p.waitFor(/src\/router\.js:3\.[\s\S]*Σ 1 request[\s\S]*› $/);
    p.type('tell me something long\r');
    mark = await p.waitFor(/Something long/, { from: mark });
    p.type('\x03');
    mark = await p.waitFor(/↳ in [\d,]+ .* · interrupted[\s\S]*cancelled[\s\S]*› $/, { from: mark });
    p.type('and createServer?\r');
    mark = await p.waitFor(/● read_file src\/server\.js[\s\S]*⎿[\s\S]*src\/server\.js:4\.[\s\S]*› $/, { from: mark });
    p.type('/usage\r');
    mark = await p.waitFor(/TOTAL[\s\S]*› $/, { from: mark });
    // Four requests, four rows: the cancelled one is counted and marked.
    expect(p.screen().slice(-2000)).toMatch(/│ 2 │ claude-sonnet-5-5 \(interrupted\)[\s\S]*│ 4 │ claude-sonnet-5-5 /);
    p.type('/context\r');
    mark = await p.waitFor(/instructions\s+AGENTS\.md[\s\S]*listing\s+\d+ entries shown[\s\S]*map\s+~\d+ of 2,000 tokens · \d+ directories named[\s\S]*sandbox\s+(kernel \(bubblewrap|tables \(no kernel sandbox)[\s\S]*› $/, { from: mark });
    p.type('\x04');
    expect(await p.exited).toBe(0);
    expect(p.screen(mark)).toMatch(/│ 2 │ claude-sonnet-5-5 \(interrupted\)[\s\S]*│ 4 │[\s\S]*TOTAL[\s\S]*interrupted: cancelled mid-answer/);
    // Every request the API saw was valid (it answers 400 otherwise); the cancelled one never got an answer.
    const bodies = api.requests.filter((r) => r.path === '/v1/messages');
    expect(bodies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const thirdMessages = bodies[2]!.body.messages!;
    expect(JSON.stringify(thirdMessages[0])).toContain('where is the router?');
    // The cancelled question is marked, so the model does not answer it together with the next one.
    const texts = (thirdMessages.at(-1)!.content as Array<{ text?: string }>).map((b) => b.text);
    expect(texts).toEqual(['tell me something long', '[interrupted by the user before an answer]', 'and createServer?']);
    const history = await fs.readFile(path.join(state, 'spelunk', 'history'), 'utf8');
    expect(history).toContain('where is the router?\n');
  });

  it('/resume lists the saved sessions (time, cost, first question) and continues one; -c starts in the latest', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('Routes live in src/router.js:1.')), reply(text('It is a Map.')), reply(text('Still a Map.')));
    const first = open();
    await first.waitFor(/› $/);
    first.type('where are the routes kept?\r');
    await first.waitFor(/src\/router\.js:1\.[\s\S]*› $/);
    first.type('\x04');
    expect(await first.exited).toBe(0);

    const second = open();
    let mark = await second.waitFor(/› $/);
    second.type('/resume\r');
    mark = await second.waitFor(/([0-9a-f]{8})  \d{4}-\d\d-\d\d \d\d:\d\d\s+~\$[\d.]+\s+1 q  where are the routes kept\?[\s\S]*\/resume <id> continues one[\s\S]*› $/, { from: mark });
    const id = /([0-9a-f]{8})  \d{4}-/.exec(second.screen().slice(-1000))![1]!;
    second.type(`/resume ${id.slice(0, 5)}\r`);
    mark = await second.waitFor(new RegExp(`resumed session ${id} \\(2 messages\\)[\\s\\S]*› $`), { from: mark });
    second.type('what kind of object?\r');
    await second.waitFor(/It is a Map\.[\s\S]*› $/, { from: mark });
    second.type('\x04');
    expect(await second.exited).toBe(0);
    expect(JSON.stringify(api.requests.at(-1)!.body.messages)).toContain('where are the routes kept?');

    const third = open(['-c']);
    await third.waitFor(new RegExp(`resumed session ${id}[\\s\\S]*› $`));
    third.type('again?\r');
    await third.waitFor(/Still a Map\.[\s\S]*› $/);
    third.type('\x04');
    expect(await third.exited).toBe(0);
    const messages = JSON.stringify(api.requests.at(-1)!.body.messages);
    expect(messages).toContain('where are the routes kept?');
    expect(messages).toContain('what kind of object?');
  });

  it('a multi-line paste is one question; Ctrl+C twice on an empty prompt exits', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('one answer')));
    const p = open();
    await p.waitFor(/› $/);
    p.type('first line\rsecond line\r');
    await p.waitFor(/one answer[\s\S]*› $/);
    p.type('\x03');
    await p.waitFor(/press Ctrl\+C again/);
    p.type('\x03');
    expect(await p.exited).toBe(0);
    const sent = api.requests.filter((r) => r.path === '/v1/messages');
    expect(sent).toHaveLength(1);
    expect(JSON.stringify(sent[0]!.body.messages)).toContain('first line\\nsecond line');
  });

  it('/clear starts a new conversation; -i answers the argument first', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('first')), reply(text('second')));
    const p = open(['-i', 'initial question']);
    await p.waitFor(/first[\s\S]*› $/);
    p.type('/clear\r');
    await p.waitFor(/new conversation[\s\S]*› $/);
    p.type('fresh\r');
    await p.waitFor(/second[\s\S]*› $/);
    p.type('/exit\r');
    expect(await p.exited).toBe(0);
    const sent = api.requests.filter((r) => r.path === '/v1/messages');
    expect(sent[1]!.body.messages).toHaveLength(1);
  });

  it('SIGINTs spread over a session, each answered (a turn cancelled, the prompt back), never add up to an exit', async () => {
    // A signal (kill -INT), not the Ctrl+C key: in raw mode readline takes the key, and only a signal reaches bin.ts's
    // count, which exits on the third interrupt that the front end has not yet settled.
    api = await startMockApi({ minCacheTokens: 256 });
    const stall = { kind: 'stall', afterText: 'Something long ' } as const;
    api.enqueue(stall, stall, stall, reply(text('Still here.')));
    const p = open(['--no-render']);
    let mark = await p.waitFor(/\/help for commands[\s\S]*› $/);
    const pid = binaryPid(p.child.pid!);
    for (const n of [1, 2, 3]) {
      p.type(`long question ${n}\r`);
      mark = await p.waitFor(/Something long/, { from: mark });
      process.kill(pid, 'SIGINT');
      mark = await p.waitFor(/interrupted[\s\S]*cancelled[\s\S]*› $/, { from: mark });
    }
    p.type('are you there?\r');
    await p.waitFor(/Still here\.[\s\S]*› $/, { from: mark });
    p.type('\x04');
    expect(await p.exited).toBe(0);
  });
});

/** The spelunk process under `script` (util-linux) and its shell: the descendant that is node running the binary. */
function binaryPid(scriptPid: number): number {
  const queue = [scriptPid];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (argv[0] === process.execPath && argv[1]?.endsWith('spelunk.js')) return pid;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (children !== '') queue.push(...children.split(/\s+/).map(Number));
    }
  }
  throw new Error(`no spelunk process under ${scriptPid}`);
}

describe('rendered answers and citations in a pseudo-terminal (the real binary, issue 9)', () => {
  const ANSWER = '## Where\n\nThe router is `src/router.js:3`; nothing at src/router.js:99.\n';

  it('renders the answer, links the verified citation, shows Sources, and /sources shows them again', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text(ANSWER)));
    const q = open([], { FORCE_HYPERLINK: '1', SPELUNK_EDITOR_URL: 'vscode://file/{abs}:{line}' });
    await q.waitFor(/› $/);
    q.type('where is the router?\r');
    let mark = await q.waitFor(/Sources\s+✓ src\/router\.js:3\s+function handle[\s\S]*✗ src\/router\.js:99\s+line out of range[\s\S]*› $/);
    expect(q.screen()).not.toContain('## Where');
    expect(q.output).toContain(`\x1b]8;;vscode://file/${repo.root}/src/router.js:3\x1b\\`);
    q.type('/sources\r');
    mark = await q.waitFor(/\/sources\s+Sources\s+✓ src\/router\.js:3[\s\S]*✗ src\/router\.js:99[\s\S]*› $/, { from: mark });
    q.type('/exit\r');
    expect(await q.exited).toBe(0);
  });

  it('--no-render prints the raw markdown on the terminal', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text(ANSWER)));
    const p = open(['--no-render', 'where is the router?']);
    await p.waitFor(/Sources/);
    expect(await p.exited).toBe(0);
    expect(p.screen()).toMatch(/## Where\n\nThe router is `src\/router\.js:3`/);
  });
});
