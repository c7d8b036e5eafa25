import { afterEach, describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/args.js';
import { resolveConfig } from '../../src/config.js';
import type { FrontEnd } from '../../src/exit-codes.js';
import { runQuestion } from '../../src/run/run-question.js';
import { openSession } from '../../src/run/session.js';
import { reply, startMockApi, text, toolUse, type MockApi, type RecordedRequest } from '../support/mock-api.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

let api: MockApi;
const repo = useRepo(APP_FILES, { git: true });
afterEach(async () => {
  await api?.close();
});

const NOTE = 'this is your last request';
const looping = (req: RecordedRequest) =>
  JSON.stringify(req.body.messages).includes(NOTE) ? reply(text('Done.')) : reply(toolUse('read_file', { path: 'src/server.js' }));

// The loop's last-request note names the limit in the words of the run's front end (RunRequest.front), whatever the
// resolved config says: the loop and its config never look at which CLI mode (the MCP server's config) they run in.
describe("the model's last-request note speaks the run's front end", () => {
  it.each<[FrontEnd, string, string]>([
    ['cli', '--max-turns 2 allows no request after this one', 'max_turns 2 allows'],
    ['mcp', 'max_turns 2 allows no request after this one', '--max-turns 2 allows'],
  ])('front %s (CLI config, mcp: null)', async (front, said, notSaid) => {
    api = await startMockApi();
    api.enqueue(looping, looping);
    const parsed = await parseArgs(['-C', repo.root, '--output-format', 'json', '--max-turns', '2', 'q'], undefined);
    if (parsed.kind !== 'run') throw new Error('not a run');
    const config = await resolveConfig(parsed.flags, { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, HOME: '/nonexistent-home' }, repo.root, parsed.audit);
    expect(config.mcp).toBeNull();
    const request = { question: 'where?', open: openSession, env: { HOME: '/nonexistent-home' }, front };
    const outcome = await runQuestion(request, config, {}, new AbortController().signal);
    expect(outcome.done.stop).toBe('max_turns');
    const last = JSON.stringify(api.requests.at(-1)!.body.messages);
    expect(last).toContain(said);
    expect(last).not.toContain(notSaid);
  });
});
