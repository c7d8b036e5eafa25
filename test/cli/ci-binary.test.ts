import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { httpError, reply, startMockApi, text, toolUse, type MockApi, type Reply } from '../support/mock-api.js';
import { runBinary, type BinaryRun } from '../support/binary.js';
import { sarifValidator } from '../support/sarif-schema.js';
import { APP_FILES, appFinding, useRepo } from '../support/temp-repo.js';

// Issue 14's "Done when", seen the way a pipeline sees it: the built binary in its own process, real pipes and exit
// codes, against the local Messages API server.
let api: MockApi;
let scratch: string;
const repo = useRepo(APP_FILES, { git: true });
const validateSarif = sarifValidator();
const QUESTION = 'is user input passed to a shell?';
/** A SARIF file an earlier run left behind: valid, and with no results it would read as a clean scan. */
const STALE = '{"version":"2.1.0","runs":[{"results":[]}]}';
/** 529 on every request: the first try and the SDK's four retries (one spare). */
const outage = (): Reply[] => Array.from({ length: 6 }, () => httpError(529, 'overloaded_error', 'Overloaded', { 'retry-after-ms': '1' }));

beforeAll(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-ci-binary-'));
});
afterAll(async () => {
  await fs.rm(scratch, { recursive: true, force: true });
});
afterEach(async () => {
  await api?.close();
});

/** The built binary in the test repository, pointed at the local server; `onSpawn` gets the child's pid. */
function run(args: string[], opts: { onSpawn?: (pid: number) => void } = {}): Promise<BinaryRun> {
  return runBinary(args, { cwd: repo.root, env: { HOME: scratch, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url }, ...opts });
}

async function serve(...replies: Reply[]): Promise<void> {
  api = await startMockApi({ minCacheTokens: 256 });
  api.enqueue(...replies);
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const messages = () => api.requests.filter((r) => r.path === '/v1/messages');
const exists = (file: string) => fs.access(file).then(() => true, () => false);
/** A fresh path in the scratch directory, with a stale SARIF there when asked. */
async function sarifPath(name: string, stale: boolean): Promise<string> {
  const file = path.join(scratch, name);
  if (stale) await fs.writeFile(file, STALE);
  return file;
}


describe('spelunk audit --sarif fails closed (the built binary)', () => {
  it('an outage (529 every time) leaves no SARIF, exits 1 and says so on stderr', async () => {
    await serve(...outage());
    const out = await sarifPath('outage.sarif', false);
    const result = await run(['audit', QUESTION, '--sarif', out]);
    expect(result.code).toBe(1);
    expect(messages()).toHaveLength(5);
    expect(await exists(out)).toBe(false);
    expect(result.stderr).toContain(`spelunk: no SARIF written to ${out}: the audit reached no verdict (error_during_execution)\n`);
    // Nothing was there, so nothing is said to have been removed.
    expect(result.stderr).not.toContain('stale');
    expect(result.stderr).toMatch(/API 529 overloaded_error: Overloaded \(request req_mock_5\)/);
  });

  it('a stale SARIF is gone after a failed run, and stderr says it was removed', async () => {
    await serve(...outage());
    const out = await sarifPath('stale-failed.sarif', true);
    const result = await run(['audit', QUESTION, '--sarif', out]);
    expect(result.code).toBe(1);
    expect(await exists(out)).toBe(false);
    expect(result.stderr).toContain(`spelunk: no SARIF written to ${out}: the audit reached no verdict (error_during_execution); a stale file there was removed\n`);
  });

  it('a stale SARIF is gone before the first request arrives: SIGKILL then leaves none', async () => {
    await serve({ kind: 'hang' });
    const out = await sarifPath('stale-killed.sarif', true);
    let goneAtFirstRequest: boolean | null = null;
    const result = await run(['audit', QUESTION, '--sarif', out], {
      onSpawn: (pid) =>
        void api.waitForRequests(1).then(async () => {
          goneAtFirstRequest = !(await exists(out));
          process.kill(pid, 'SIGKILL');
        }),
    });
    expect(result.signal).toBe('SIGKILL');
    expect(goneAtFirstRequest).toBe(true);
    expect(await exists(out)).toBe(false);
  });

  it('a path that cannot be removed (a directory) is refused before any request: exit 2, one line', async () => {
    await serve();
    const out = path.join(scratch, 'a-directory.sarif');
    await fs.mkdir(out);
    const result = await run(['audit', QUESTION, '--sarif', out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^spelunk: --sarif ${escape(out)}: cannot remove what is there before the audit \\(E[A-Z]+\\); remove it or pick another path\\n$`));
    expect(messages()).toHaveLength(0);
    expect((await fs.stat(out)).isDirectory()).toBe(true);
  });

  it.each<[string, string[], Reply[]]>([
    ['the budget limit (--max-budget-usd below the first request)', ['--max-budget-usd', '0.01'], []],
    ['--max-turns', ['--max-turns', '1'], [reply(toolUse('bash', { command: 'ls' }))]],
  ])('fails closed on %s: exit 3, no SARIF, the stale one removed', async (_name, extra, replies) => {
    await serve(...replies);
    const out = await sarifPath(`limit-${extra[0]!.slice(2)}.sarif`, true);
    const result = await run(['audit', QUESTION, '--sarif', out, ...extra]);
    expect(result.code).toBe(3);
    expect(await exists(out)).toBe(false);
    expect(result.stderr).toMatch(new RegExp(`no SARIF written to ${escape(out)}: the audit reached no verdict \\(error_max_(budget_usd|turns)\\); a stale file there was removed\\n`));
  });

  it('--sarif-on-error=notification: the file validates against the SARIF 2.1.0 schema and reports the failure', async () => {
    await serve(...outage());
    const out = await sarifPath('notify.sarif', true);
    const result = await run(['audit', QUESTION, '--sarif', out, '--sarif-on-error=notification']);
    expect(result.code).toBe(1);
    const log = JSON.parse(await fs.readFile(out, 'utf8'));
    validateSarif(log);
    const [invocation] = log.runs[0].invocations;
    expect(invocation.executionSuccessful).toBe(false);
    expect(invocation.toolExecutionNotifications).toEqual([
      expect.objectContaining({ level: 'error', descriptor: { id: 'error_during_execution' }, message: { text: expect.stringContaining('Overloaded') } }),
    ]);
    expect(log.runs[0].results).toEqual([]);
    expect(result.stderr).toContain(`${out} reports the failure (executionSuccessful: false)`);
  });

  it('a verdict replaces the stale file with this run\'s SARIF, and says nothing about it', async () => {
    await serve(reply(toolUse('report_findings', { verdict: 'fail', summary: 'yes', findings: [appFinding()] })), reply(text('Reported.')));
    const out = await sarifPath('verdict.sarif', true);
    const result = await run(['audit', QUESTION, '--sarif', out]);
    expect(result.code).toBe(4);
    const log = JSON.parse(await fs.readFile(out, 'utf8'));
    validateSarif(log);
    expect(log.runs[0].results).toEqual([expect.objectContaining({ ruleId: 'shell-injection' })]);
    expect(result.stderr).not.toContain('stale');
    expect((await fs.readdir(scratch)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a stale SARIF inside the repository is removed before the read-only snapshot: the check still passes', async () => {
    await serve(reply(toolUse('report_findings', { verdict: 'pass', summary: 'no', findings: [] })), reply(text('Reported.')));
    const out = path.join(repo.root, 'spelunk.sarif');
    await fs.writeFile(out, STALE);
    try {
      const result = await run(['audit', QUESTION, '--sarif', out, '--output-format', 'json']);
      expect(JSON.parse(result.stdout)).toMatchObject({ readonly_verified: true, subtype: 'success' });
      expect(result.code).toBe(0);
      validateSarif(JSON.parse(await fs.readFile(out, 'utf8')));
    } finally {
      await fs.rm(out, { force: true });
    }
  });
});

describe('spelunk audit: the rest of issue 14 (the built binary)', () => {
  it('a finding with an out-of-range line, corrected by the model, stays in warnings (rule id, path, lines, reason)', async () => {
    await serve(
      reply(toolUse('report_findings', { verdict: 'fail', summary: 'yes', findings: [appFinding({ start_line: 400, end_line: 402 })] })),
      reply(toolUse('report_findings', { verdict: 'fail', summary: 'yes', findings: [appFinding()] })),
      reply(text('Reported.')),
    );
    const result = await run(['audit', QUESTION, '--output-format', 'json']);
    expect(result.code).toBe(4);
    const parsed = JSON.parse(result.stdout);
    expect(parsed.audit.findings).toEqual([expect.objectContaining({ rule_id: 'shell-injection', start_line: 4 })]);
    expect(parsed.warnings).toEqual([
      expect.stringMatching(/^report_findings call 1 dropped findings\[0\] \(shell-injection at src\/auth\.js:400-402\): start_line 400 is past the end of the file/),
    ]);
  });

  it.each([
    [['--sarif', 'x', 'q'], '--sarif only works with the audit subcommand'],
    [['--fail-on', 'high', 'q'], '--fail-on only works with the audit subcommand'],
    [['--sarif-category', 'c', 'q'], '--sarif-category only works with the audit subcommand'],
  ])('%j without audit → exit 2, one line on stderr, no file written, nothing sent', async (args, fragment) => {
    await serve();
    const before = await fs.readdir(repo.root);
    const result = await run(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(fragment);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stdout).toBe('');
    expect(await fs.readdir(repo.root)).toEqual(before);
    expect(messages()).toHaveLength(0);
  });
});

describe('issue 13: an in-stream error (the built binary)', () => {
  it('event: error (overloaded_error) after some answer text: one line with the request id, exit 1, no partial answer on stdout', async () => {
    await serve({ kind: 'stream_error', afterText: 'The partial answer ' });
    const result = await run(['q']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    // The partial text stays on stderr (where the view streamed it), marked as cut; the error is the last line, once.
    expect(result.stderr).toContain('The partial answer \n(the answer above was cut (api_error), so it was not written to stdout)\n');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(/^API stream failed mid-answer \(the text above is incomplete\): overloaded_error: Overloaded; retryable: ask again \(request req_mock_1\)$/);
    expect(lines.filter((l) => l.includes('overloaded_error'))).toHaveLength(1);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
