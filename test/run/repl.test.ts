import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { PtySession } from '../support/pty.js';
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

function open(args: string[] = []): PtySession {
  pty = new PtySession(['-C', repo.root, ...args], { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, XDG_STATE_HOME: state, HOME: state });
  return pty;
}

describe('REPL in a pseudo-terminal (the real binary)', () => {
  it('answers, cancels a turn with Ctrl+C, keeps the conversation valid, and prints the table on Ctrl+D', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    // The cancelled request got as far as message_start (usage reported, so billed) and some text.
    api.enqueue(reply(text('The router is in src/router.js:3.')), { kind: 'stall', afterText: 'Something long ' }, reply(toolUse('read_file', { path: 'src/server.js' })), reply(text('createServer is at src/server.js:4.')));
    const p = open();
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
    mark = await p.waitFor(/instructions\s+AGENTS\.md[\s\S]*listing\s+\d+ entries shown[\s\S]*map\s+~\d+ of 2,000 tokens · \d+ directories named[\s\S]*› $/, { from: mark });
    p.type('\x04');
    expect(await p.exited).toBe(0);
    expect(p.screen().slice(mark)).toMatch(/│ 2 │ claude-sonnet-5-5 \(interrupted\)[\s\S]*│ 4 │[\s\S]*TOTAL[\s\S]*interrupted: cancelled mid-answer/);
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
});
