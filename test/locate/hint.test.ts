import { afterEach, describe, expect, it } from 'vitest';
import { firstTurnHint } from '../../src/locate/hint.js';
import { runCli } from '../support/cli.js';
import { reply, startMockApi, text, type MockApi, type RecordedRequest } from '../support/mock-api.js';
import { APP_FILES, makeRepo, useRepo } from '../support/temp-repo.js';

let api: MockApi | null = null;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await api?.close();
  api = null;
  for (const c of cleanups.splice(0)) await c();
});

const QUESTION = 'Where are the routes of the router registered?';
const firstUserText = (req: RecordedRequest): string => {
  const content = req.body.messages![0]!.content;
  return typeof content === 'string' ? content : content.map((b) => String(b.text ?? '')).join('\n');
};

describe('the first-turn hint (--hint)', () => {
  it('adds locate\'s files to the first question, and the cached prefix (system prompt, tools) keeps its bytes', async () => {
    const repo = await makeRepo(APP_FILES, { git: true });
    cleanups.push(repo.cleanup);
    api = await startMockApi({ minCacheTokens: 256 });
    const env = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url };
    api.enqueue(reply(text('Routes are in src/router.js:1.')), reply(text('Routes are in src/router.js:1.')));
    const plain = await runCli(['-C', repo.root, '--no-session-persistence', QUESTION], { env });
    const hinted = await runCli(['-C', repo.root, '--no-session-persistence', '--hint', QUESTION], { env });
    expect(plain.code).toBe(0);
    expect(hinted.code).toBe(0);
    const [without, withIt] = api.requests.filter((r) => r.path.startsWith('/v1/messages'));
    expect(JSON.stringify(withIt!.body.system)).toBe(JSON.stringify(without!.body.system));
    expect(JSON.stringify(withIt!.body.tools)).toBe(JSON.stringify(without!.body.tools));
    expect(firstUserText(without!)).toBe(QUESTION);
    expect(firstUserText(withIt!)).toMatch(/^Where are the routes of the router registered\?\n\n\(spelunk, no model: files likely relevant .*src\/router\.js/s);
  });
});

const repo = useRepo({ 'src/http/server.ts': 'export function startServer() {}\n', 'README.md': 'hello\n' });

describe('firstTurnHint', () => {
  it.each([
    ['a question naming the code', 'where is startServer?', /src\/http\/server\.ts/],
    ['a question with no searchable words', 'how does it work?', null],
    ['a question nothing matches', 'where is zzqxv handled?', null],
  ])('%s', async (_label, question, expected) => {
    const hint = await firstTurnHint(repo.root, question);
    if (expected === null) expect(hint).toBeNull();
    else expect(hint).toMatch(expected);
  });
});
