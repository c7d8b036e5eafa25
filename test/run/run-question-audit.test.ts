import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/args.js';
import { resolveConfig, type Config } from '../../src/config.js';
import { EXIT } from '../../src/exit-codes.js';
import { runQuestion, type RunRequest } from '../../src/run/run-question.js';
import { openSession } from '../../src/run/session.js';
import { makeAuditBranch, NEW, OLD } from '../support/audit-branch.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';

/**
 * The audit half of the run service, in process (the real SDK over HTTP against the local server, a real git
 * repository): the reminder turn for a report never filed, the scope against a change, and the baseline read and
 * written. A branch `feature` adds src/search.js (an SQL injection at line 3) over main's old shell injection in
 * src/auth.js:4.
 */
let ws: string;
let root: string;
let api: MockApi | undefined;

const REMINDER = 'You have not called report_findings.';

beforeAll(async () => {
  ({ ws, root } = await makeAuditBranch('spelunk-rq-audit-'));
});
afterAll(async () => fs.rm(ws, { recursive: true, force: true }));
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const env = { HOME: '/nonexistent-home' };
const never = new AbortController().signal;
const request = (question: string): RunRequest => ({ question, open: openSession, env, front: 'cli' });

async function configFor(argv: string[]): Promise<Config> {
  const parsed = await parseArgs(['audit', '-C', root, '--output-format', 'json', '--no-session-persistence', ...argv, 'is input safe?'], undefined);
  if (parsed.kind !== 'run') throw new Error('not a run');
  return resolveConfig(parsed.flags, { ...env, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api!.url }, ws, parsed.audit);
}

/** The text of every user message the model was sent, request by request. */
const sentTexts = (): string[] =>
  api!.requests.filter((r) => r.path === '/v1/messages').map((r) => JSON.stringify(r.body.messages?.at(-1)?.content ?? ''));

const report = (findings: object[]) => toolUse('report_findings', { verdict: findings.length > 0 ? 'fail' : 'pass', summary: 's', findings });

describe('runQuestion: an audit that never filed its report is reminded once, while turns remain', () => {
  it('an answer without report_findings gets one more turn with the reminder, and the report filed then is the outcome', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('Looks risky.')), reply(report([OLD])), reply(text('Reported.')));
    const answered: unknown[] = [];
    const outcome = await runQuestion(request('is input safe?'), await configFor([]), { phase: async (p) => void (p.type === 'answered' && answered.push(p.citations)) }, never);
    const sent = sentTexts();
    expect(sent).toHaveLength(3);
    expect(sent[0]).not.toContain(REMINDER);
    expect(sent[1]).toContain(REMINDER);
    expect(outcome.audit).toMatchObject({ verdict: 'fail', findings: [expect.objectContaining({ path: 'src/auth.js', start_line: 4 })] });
    expect(outcome.done).toMatchObject({ stop: 'end_turn', text: 'Reported.' });
    expect(outcome.requests).toBe(3);
    // The answer hook saw the first answer's citations, before the reminder.
    expect(answered).toEqual([[]]);
    expect(outcome.exitCode).toBe(4);
  });

  it.each<[string, string[], object[], number]>([
    ['the report was filed: no reminder', [], [reply(report([])), reply(text('Done.'))], 2],
    ['no turn left (--max-turns 1): no reminder', ['--max-turns', '1'], [reply(text('Looks risky.'))], 1],
  ])('%s', async (_name, argv, replies, requests) => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(...(replies as Parameters<MockApi['enqueue']>));
    const outcome = await runQuestion(request('is input safe?'), await configFor(argv), {}, never);
    expect(sentTexts().filter((t) => t.includes(REMINDER))).toEqual([]);
    expect(outcome.requests).toBe(requests);
  });

  it('a question that is not an audit is never reminded', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('The server is in src/auth.js:1.')));
    const parsed = await parseArgs(['-C', root, '--output-format', 'json', '--no-session-persistence', 'q'], undefined);
    if (parsed.kind !== 'run') throw new Error('not a run');
    const config = await resolveConfig(parsed.flags, { ...env, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url }, ws, parsed.audit);
    const outcome = await runQuestion(request('q'), config, {}, never);
    expect(outcome.requests).toBe(1);
    expect(outcome.audit).toBeNull();
    expect(outcome.result.audit).toBeUndefined();
  });
});

describe('runQuestion: an audit scoped to a change and to a baseline', () => {
  it('without a diff or a baseline the report is kept as filed: no class, no scope, no suppressed count', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(report([OLD, NEW])), reply(text('Done.')));
    const outcome = await runQuestion(request('is input safe?'), await configFor([]), {}, never);
    expect(outcome.change).toBeNull();
    expect(outcome.audit?.findings.map((f) => [f.diff_class, f.suppressed])).toEqual([[undefined, undefined], [undefined, undefined]]);
    expect(outcome.audit).not.toHaveProperty('scope');
    expect(outcome.audit).not.toHaveProperty('suppressed');
  });

  it.each<[string, string[], string, number]>([
    ['--diff main (scope line)', ['--diff', 'main'], 'line', 4],
    ['--diff main --scope file', ['--diff', 'main', '--scope', 'file'], 'file', 4],
  ])('%s: the change is in the first message, each finding is classed, the scope is said', async (_name, argv, scope, code) => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(report([OLD, NEW])), reply(text('Done.')));
    const outcome = await runQuestion(request('is input safe?'), await configFor(argv), {}, never);
    expect(outcome.change?.files.map((f) => f.path)).toEqual(['src/search.js']);
    const first = sentTexts()[0]!;
    expect(first).toContain('This audit is scoped to a change (main...HEAD): 1 file(s)');
    expect(first).toMatch(/Audit question:\\n\\nis input safe\?/);
    expect(outcome.audit?.findings.map((f) => f.diff_class)).toEqual(['outside-diff', 'changed-line']);
    expect(outcome.audit?.scope).toBe(scope);
    expect(outcome.result.audit).toEqual(outcome.audit);
    expect(outcome.exitCode).toBe(code);
  });

  it('--update-baseline writes this run\'s findings and counts them as accepted; the next run with --baseline suppresses them', async () => {
    const baseline = path.join(ws, 'baseline-update.json');
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(report([OLD, NEW])), reply(text('Done.')));
    const first = await runQuestion(request('is input safe?'), await configFor(['--baseline', baseline, '--update-baseline']), {}, never);
    expect(first.audit?.findings.map((f) => f.suppressed)).toEqual([true, true]);
    expect(first.audit?.suppressed).toBe(2);
    expect(first.result.error).toBeUndefined();
    expect(first.exitCode).toBe(0);
    const written = JSON.parse(await fs.readFile(baseline, 'utf8')) as { spelunk_baseline: number; fingerprints: string[] };
    expect(written.spelunk_baseline).toBe(1);
    expect(written.fingerprints).toHaveLength(2);

    await api.close();
    api = await startMockApi({ minCacheTokens: 256 });
    const ANOTHER = { ...NEW, rule_id: 'sql-injection-2', title: 'Another query', start_line: 2 };
    api.enqueue(reply(report([OLD, ANOTHER])), reply(text('Done.')));
    const second = await runQuestion(request('is input safe?'), await configFor(['--baseline', baseline]), {}, never);
    expect(second.audit?.findings.map((f) => f.suppressed === true)).toEqual([true, false]);
    expect(second.audit?.suppressed).toBe(1);
    expect(second.exitCode).toBe(4);
    // Read, not rewritten, without --update-baseline.
    expect(JSON.parse(await fs.readFile(baseline, 'utf8'))).toEqual(written);
  });

  it('a run that did not end its turn writes no baseline', async () => {
    const baseline = path.join(ws, 'baseline-unfinished.json');
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(report([OLD])));
    const outcome = await runQuestion(request('is input safe?'), await configFor(['--max-turns', '1', '--baseline', baseline, '--update-baseline']), {}, never);
    expect(outcome.done.stop).toBe('max_turns');
    expect(outcome.audit?.findings.map((f) => f.suppressed)).toEqual([true]);
    await expect(fs.stat(baseline)).rejects.toThrow(/ENOENT/);
  });

  it('a baseline that cannot be written is the run\'s error, named with its path, and the scoped report is kept', async () => {
    const baseline = path.join(ws, 'no-such-dir', 'baseline.json');
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(report([OLD])), reply(text('Done.')));
    const outcome = await runQuestion(request('is input safe?'), await configFor(['--baseline', baseline, '--update-baseline']), {}, never);
    expect(outcome.result.error?.message).toMatch(new RegExp(`^could not write --baseline ${baseline.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: `));
    expect(outcome.audit?.suppressed).toBe(1);
    expect(outcome.exitCode).toBe(1);
  });
});

describe('runQuestion: the audit\'s files and the exit code are part of the final outcome', () => {
  const fail = () => [reply(report([OLD, NEW])), reply(text('Done.'))];
  const noReport = () => [reply(text('Looks risky.'))];
  it.each<[string, (out: string) => string[], () => object[], number, 'written' | 'absent', RegExp | null, boolean]>([
    ['--sarif, a fail verdict: the log is written by the run service, exit 4', (o) => ['--sarif', o], fail, EXIT.auditFailed, 'written', null, false],
    ['--sarif --fail-on critical: the same high finding is written, exit 0', (o) => ['--sarif', o, '--fail-on', 'critical'], fail, EXIT.ok, 'written', null, false],
    ['--sarif, no verdict (no report, no turn left): no file, a note that says why, exit 3', (o) => ['--sarif', o, '--max-turns', '1'], noReport, EXIT.limit, 'absent', /^no SARIF written to .*: the audit reached no verdict \(error_max_turns\)$/, false],
    ['--sarif, no verdict, a file an earlier run left: removed before the run, the note says so', (o) => ['--sarif', o, '--max-turns', '1'], noReport, EXIT.limit, 'absent', /\(error_max_turns\); a stale file there was removed$/, true],
    ['--sarif-on-error notification, no verdict: a failure log is written, a note, exit 3', (o) => ['--sarif', o, '--sarif-on-error', 'notification', '--max-turns', '1'], noReport, EXIT.limit, 'written', /reports the failure \(executionSuccessful: false\)$/, false],
    ['--review-output --diff main, a fail verdict in the change: the review is written, exit 4', (o) => ['--diff', 'main', '--review-output', o], fail, EXIT.auditFailed, 'written', null, false],
    ['--review-output, no verdict: no review, a note, exit 3', (o) => ['--diff', 'main', '--review-output', o, '--max-turns', '1'], noReport, EXIT.limit, 'absent', /^no review written to .*\(error_max_turns\)$/, false],
  ])('%s', async (name, argv, replies, code, file, note, stale) => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(...(replies() as Parameters<MockApi['enqueue']>));
    const out = path.join(ws, `out-${name.replace(/\W+/g, '-').slice(0, 40)}.json`);
    if (stale) await fs.writeFile(out, '{"stale": true}');
    const outcome = await runQuestion(request('is input safe?'), await configFor(argv(out)), {}, never);
    expect(outcome.exitCode).toBe(code);
    const exists = await fs.stat(out).then(() => true, () => false);
    expect(exists).toBe(file === 'written');
    if (file === 'written' && note === null) expect(await fs.readFile(out, 'utf8')).toContain('src/search.js');
    expect(outcome.fileNotes).toEqual(note === null ? [] : [expect.stringMatching(note)]);
    await fs.rm(out, { force: true });
  });
});
