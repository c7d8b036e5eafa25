import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sessionsDir } from '../../src/run/saved.js';
import { checkRecord, isBad } from '../../src/run/session-records.js';
import { runCli, TEST_STATE_HOME } from '../support/cli.js';
import { reply, startMockApi, text, type MockApi } from '../support/mock-api.js';
import { APP_FILES, makeRepo } from '../support/temp-repo.js';

/**
 * Saved sessions are untrusted input. The second red team's finding: `"head": "--output=/home/me/notes.txt"` in a
 * session file made the resume notice's `git diff` open that file for writing (0 bytes left), and the field reached
 * stderr unescaped (a terminal title / OSC injection).
 */

let api: MockApi | null = null;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await api?.close();
  api = null;
  for (const c of cleanups.splice(0)) await c();
});

const HEAD = 'a'.repeat(40);
const TURN = {
  type: 'turn', at: '2026-01-02T03:04:05.678Z', question: 'q', base: 0, model: 'claude-sonnet-4-5', head: HEAD,
  preamble_hash: '0123456789abcdef', cost_usd: 0.01,
  messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }, { role: 'assistant', content: [{ type: 'text', text: 'See src/router.js:3.' }] }],
};

/** A repository with one saved session whose last turn is `edit`ed; the session's file. */
async function tampered(edit: (turn: Record<string, unknown>) => void): Promise<{ root: string; id: string; file: string }> {
  const repo = await makeRepo(APP_FILES, { git: true });
  cleanups.push(repo.cleanup);
  api = await startMockApi();
  api.enqueue(reply(text('See src/router.js:3.')), reply(text('ok')));
  const first = await runCli(['-C', repo.root, '--output-format', 'json', 'q1'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } });
  expect(first.code, first.stderr).toBe(0);
  const id = (JSON.parse(first.stdout) as { session_id: string }).session_id;
  const file = path.join(sessionsDir({ XDG_STATE_HOME: TEST_STATE_HOME }, repo.root)!, `${id}.jsonl`);
  const lines = (await fs.readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  edit(lines.at(-1)!);
  await fs.writeFile(file, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  return { root: repo.root, id, file };
}

async function resume(root: string): Promise<{ code: number; stderr: string; stdout: string }> {
  return runCli(['-C', root, '-c', 'q2'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api!.url } });
}

describe('a tampered saved session', () => {
  it('"head": "--output=FILE" leaves FILE untouched, is said in one line, and the run goes on as a new session', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-notes-'));
    cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));
    const notes = path.join(dir, 'notes.txt');
    await fs.writeFile(notes, 'my notes, not to be lost\n');
    const { root, id } = await tampered((turn) => (turn.head = `--output=${notes}`));
    const run = await resume(root);
    expect(run.code, run.stderr).toBe(0);
    expect(await fs.readFile(notes, 'utf8')).toBe('my notes, not to be lost\n');
    const said = run.stderr.split('\n').filter((l) => l.includes(id.slice(0, 8)));
    expect(said).toEqual([`warning: the saved session ${id.slice(0, 8)} is damaged or was edited (a head is not a commit id); it is not used`]);
    expect(run.stderr).not.toContain('--output');
    // Not continued: the request carries only the new question.
    expect(JSON.stringify(api!.requests.at(-1)!.body.messages)).not.toContain('q1');
  });

  it.each<[string, (turn: Record<string, unknown>) => void]>([
    ['a head with an OSC sequence (terminal title)', (turn) => (turn.head = '\u001b]0;pwned\u0007' + 'a'.repeat(33))],
    ['a model name with an escape sequence', (turn) => (turn.model = 'claude\u001b[2J')],
    ['a model name with a bidi override', (turn) => (turn.model = 'claude\u202e')],
  ])('%s: rejected, and no raw escape reaches stderr', async (_name, edit) => {
    const { root } = await tampered(edit);
    const run = await resume(root);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/warning: the saved session [0-9a-f]{8} is damaged or was edited/);
    expect(run.stderr).not.toMatch(/[\u001b\u0007\u202e]/);
    expect(run.stderr).not.toContain('pwned');
  });
});

describe('session records are rebuilt field by field', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['a head that is an option', { ...TURN, head: '--output=/tmp/x' }, 'a head is not a commit id'],
    ['a short head', { ...TURN, head: 'abc1234' }, 'a head is not a commit id'],
    ['an upper-case head', { ...TURN, head: 'A'.repeat(40) }, 'a head is not a commit id'],
    ['a head with a newline', { ...TURN, head: `${HEAD}\n` }, 'a head is not a commit id'],
    ['a numeric head', { ...TURN, head: 1 }, 'a head is not a commit id'],
    ['a model with a space', { ...TURN, model: 'a b' }, 'a model name is not one'],
    ['a negative base', { ...TURN, base: -1 }, 'a turn is damaged'],
    ['a fractional base', { ...TURN, base: 0.5 }, 'a turn is damaged'],
    ['a preamble hash that is not hex', { ...TURN, preamble_hash: 'zzzzzzzzzzzzzzzz' }, 'a turn is damaged'],
    ['a cost of Infinity (as a string)', { ...TURN, cost_usd: 'Infinity' }, 'a turn is damaged'],
    ['a negative cost', { ...TURN, cost_usd: -1 }, 'a turn is damaged'],
    ['a time that is not ISO', { ...TURN, at: 'yesterday' }, 'a turn is damaged'],
    ['a partial flag that is a string', { ...TURN, partial: 'yes' }, 'a turn is damaged'],
    ['a message of role system', { ...TURN, messages: [{ role: 'system', content: [] }] }, 'a message is damaged'],
    ['a block of unknown type', { ...TURN, messages: [{ role: 'user', content: [{ type: 'image', source: {} }] }] }, 'a message block is damaged'],
    ['a tool_use id with a slash', { ...TURN, messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: '../x', name: 'bash', input: {} }] }] }, 'a message block is damaged'],
    ['a tool_result whose content is not text', { ...TURN, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: {} }] }] }, 'a message block is damaged'],
    ['a tool_use caller that is not an object', { ...TURN, messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: {}, caller: 'direct' }] }] }, 'a message block is damaged'],
    ['a tool_use caller without a type', { ...TURN, messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: {}, caller: { tool_id: 'x' } }] }] }, 'a message block is damaged'],
    ['a tool_use caller with a long value', { ...TURN, messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: {}, caller: { type: 'x'.repeat(5000) } }] }] }, 'a message block is damaged'],
    ['text citations that are not a list', { ...TURN, messages: [{ role: 'assistant', content: [{ type: 'text', text: 'a', citations: 'x' }] }] }, 'a message block is damaged'],
    ['a cache state with a negative count', { ...TURN, cache: { model: 'm', segments: [], cachedTokens: -5 } }, 'the cache state is damaged'],
    ['a header with another version', { type: 'session', version: 2, session_id: '00000000-0000-0000-0000-000000000000', root: '/r', created_at: TURN.at }, 'unknown version'],
    ['a header whose id is a path', { type: 'session', version: 1, session_id: '../../x', root: '/r', created_at: TURN.at }, 'the session id is not a session id'],
    ['a record of another type', { type: 'exec', command: 'rm -rf /' }, 'a record of unknown type'],
    ['an array', [1, 2] as unknown as Record<string, unknown>, 'a line is not a record'],
  ])('refuses %s', (_name, value, reason) => {
    const checked = checkRecord(value);
    expect(isBad(checked) ? checked.bad : 'accepted').toContain(reason);
  });

  it('keeps the fields the API put on the wire (caller, citations) in their stored order, so a resume re-sends the same bytes', () => {
    const toolUse = { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' }, caller: { type: 'direct' }, cache_control: { type: 'ephemeral' } };
    const reordered = { caller: { type: 'direct' }, input: {}, name: 'bash', id: 'toolu_2', type: 'tool_use' };
    const textBlock = { type: 'text', text: 'a', citations: null };
    const checked = checkRecord({ ...TURN, messages: [{ role: 'assistant', content: [toolUse, reordered, textBlock] }] });
    const content = isBad(checked) || checked.type !== 'turn' ? [] : checked.messages[0]!.content;
    expect(JSON.stringify(content)).toBe(
      '[{"type":"tool_use","id":"toolu_1","name":"bash","input":{"command":"ls"},"caller":{"type":"direct"}},' +
        '{"caller":{"type":"direct"},"input":{},"name":"bash","id":"toolu_2","type":"tool_use"},{"type":"text","text":"a","citations":null}]',
    );
  });

  it('keeps a sound record, drops fields spelunk does not write (cache_control, extra keys)', () => {
    const extra = {
      ...TURN, head: 'b'.repeat(64), extra: 'x',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'q', cache_control: { type: 'ephemeral' }, evil: 1 }] }],
    };
    expect(checkRecord(extra)).toEqual({ ...TURN, head: 'b'.repeat(64), messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }] });
    expect(checkRecord({ ...TURN, head: null, partial: true, cache: null })).toMatchObject({ head: null, partial: true, cache: null });
  });
});
