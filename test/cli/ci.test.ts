import { promises as fs, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Ajv } from 'ajv';
import { afterEach, describe, expect, it } from 'vitest';
import resultSchema from '../../schema/result.schema.json' with { type: 'json' };
import streamSchema from '../../schema/stream-event.schema.json' with { type: 'json' };
import { runCli, type CliOptions } from '../support/cli.js';
import { httpError, reply, startMockApi, text, toolUse, type MockApi, type Reply, type Scripted } from '../support/mock-api.js';
import { APP_FILES, appFinding, useRepo } from '../support/temp-repo.js';
import { sarifValidator } from '../support/sarif-schema.js';

let api: MockApi;
const repo = useRepo(APP_FILES, { git: true });
const env = () => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url });
const messages = () => api.requests.filter((r) => r.path === '/v1/messages');

function validator() {
  const draft = String((resultSchema as { $schema?: string }).$schema ?? '');
  const ajv = draft.includes('2020') ? new Ajv2020({ strict: false }) : new Ajv({ strict: false });
  ajv.addSchema(resultSchema, 'result.schema.json');
  ajv.addSchema(streamSchema, 'stream-event.schema.json');
  return {
    result: (v: unknown) => {
      const ok = ajv.validate('result.schema.json', v);
      if (!ok) throw new Error(ajv.errorsText());
    },
    event: (v: unknown) => {
      const ok = ajv.validate('stream-event.schema.json', v);
      if (!ok) throw new Error(`${ajv.errorsText()} in ${JSON.stringify(v).slice(0, 200)}`);
    },
  };
}
const validate = validator();
const validateSarif = sarifValidator();
/** Every SARIF file a test sees is read through here: parsed and checked against the official 2.1.0 schema. */
async function readSarif(file: string) {
  const log = JSON.parse(await fs.readFile(file, 'utf8'));
  validateSarif(log);
  return log;
}

afterEach(async () => {
  await api?.close();
});

async function json(argv: string[], replies: Scripted[], opts: Pick<CliOptions, 'onStart'> = {}) {
  api = await startMockApi({ minCacheTokens: 256 });
  api.enqueue(...replies);
  const run = await runCli(['-C', repo.root, '--output-format', 'json', ...argv], { env: env(), ...opts });
  const lines = run.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  const result = JSON.parse(lines[0]!);
  validate.result(result);
  return { run, result };
}

describe('--output-format json: one object, an honest subtype, the exit-code contract', () => {
  it('success → 0', async () => {
    const { run, result } = await json(['q'], [reply(toolUse('read_file', { path: 'src/auth.js' })), reply(text('answer'))]);
    expect(run.code).toBe(0);
    expect(result).toMatchObject({ type: 'result', subtype: 'success', is_error: false, result: 'answer', num_turns: 2, schema_version: 3, readonly_verified: true, model: 'claude-sonnet-5-5' });
    expect(result.tool_calls).toEqual([expect.objectContaining({ name: 'read_file', is_error: false, input: { path: 'src/auth.js' } })]);
    expect(result.repo.git_commit).toMatch(/^[0-9a-f]{40}$/);
    expect(result.total_cost_usd).toBeGreaterThan(0);
    expect(result.usage.output_tokens).toBeGreaterThan(0);
  });

  it('max turns → error_max_turns, exit 3', async () => {
    const { run, result } = await json(['--max-turns', '1', 'q'], [reply(toolUse('bash', { command: 'ls' }))]);
    expect(run.code).toBe(3);
    expect(result).toMatchObject({ subtype: 'error_max_turns', is_error: true, num_turns: 1 });
    expect(messages()).toHaveLength(1);
  });

  it('API failure → error_during_execution, exit 1 (never 0)', async () => {
    const { run, result } = await json(['q'], [httpError(400, 'invalid_request_error', 'nope')]);
    expect(run.code).toBe(1);
    expect(result).toMatchObject({ subtype: 'error_during_execution', is_error: true });
    expect(result.error.message).toContain('nope');
  });

  it('a 429 followed by success → 0 with the retry in warnings', async () => {
    const { run, result } = await json(['q'], [httpError(429, 'rate_limit_error', 'slow', { 'retry-after-ms': '5' }), reply(text('fine'))]);
    expect(run.code).toBe(0);
    expect(result.subtype).toBe('success');
    expect(result.warnings.join(' ')).toContain('429');
  });

  it('budget: never crossed; stops before the request that could cross it → error_max_budget_usd, exit 3', async () => {
    const stoppedAfter: number[] = [];
    for (const budget of [0.0005, 0.004, 0.006, 0.008, 0.01, 0.012]) {
      const replies = [reply(toolUse('bash', { command: 'ls' })), reply(toolUse('bash', { command: 'ls src' })), reply(text('done'))];
      const { run, result } = await json(['--max-budget-usd', String(budget), '--max-tokens', '100', 'q'], replies);
      expect(result.total_cost_usd).toBeLessThanOrEqual(budget);
      const sent = messages().length;
      await api.close();
      if (run.code === 0) continue;
      expect(run.code).toBe(3);
      expect(result.subtype).toBe('error_max_budget_usd');
      stoppedAfter.push(sent);
    }
    // The smallest budget stops before any request; some larger one lets a request through and stops before the next.
    expect(stoppedAfter[0]).toBe(0);
    expect(stoppedAfter.some((n) => n > 0)).toBe(true);
  });

  it('SIGINT mid-run writes a valid partial result and exits 130', async () => {
    const { run, result } = await json(['q'], [reply(toolUse('bash', { command: 'ls' })), { kind: 'hang' }], {
      onStart: ({ signals }) => {
        void api.waitForRequests(2).then(() => signals.emit('SIGINT'));
      },
    });
    expect(run.code).toBe(130);
    expect(result).toMatchObject({ subtype: 'interrupted', is_error: true });
    expect(result.tool_calls).toHaveLength(1);
  });

  it('a repository another program changes during the run: the answer stands (exit 0), the change in concurrent_changes', async () => {
    const planted = path.join(repo.root, 'src', 'planted.js');
    // Held 400 ms while an editor writes 150 ms into it: between tool calls, so under either layer not spelunk's.
    const changeRepo = (): Reply => {
      setTimeout(() => writeFileSync(planted, 'changed while spelunk ran\n'), 150);
      return { kind: 'slow', delayMs: 400, then: reply(text('answer')) };
    };
    try {
      const { run, result } = await json(['q'], [reply(toolUse('read_file', { path: 'src/router.js' })), changeRepo]);
      expect(run.code).toBe(0);
      expect(result).toMatchObject({ readonly_verified: true, subtype: 'success', is_error: false, concurrent_changes: { paths: expect.arrayContaining(['src/planted.js']) } });
      expect(result.readonly_proof).toEqual(expect.any(String));
    } finally {
      await fs.rm(planted, { force: true });
      // The removal changes src/'s ctime, and the read-only proof counts ctimes up to CLOCK_MARGIN_MS (25 ms) before a
      // run's start as the run's own (coarse kernel clock): let that window pass so the next test's run is not blamed.
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
  });


  it('--timeout → exit 3', async () => {
    const { run, result } = await json(['--timeout', '0.3', 'q'], [{ kind: 'hang' }]);
    expect(run.code, JSON.stringify(result)).toBe(3);
    expect(result.stop_reason).toBe('timeout');
  });
});

describe('--output-format stream-json', () => {
  it('one valid JSON event per line, init first, result last', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text('Looking.'), toolUse('bash', { command: 'rg -n login src' })), reply(text('Found it.')));
    const run = await runCli(['-C', repo.root, '--output-format', 'stream-json', 'q'], { env: env() });
    expect(run.code).toBe(0);
    for (const write of run.stdoutWrites) expect(write.endsWith('\n') && write.indexOf('\n') === write.length - 1).toBe(true);
    const events = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
    for (const e of events) validate.event(e);
    expect(events[0]).toMatchObject({ type: 'system', subtype: 'init', schema_version: 3, tools: ['read_file', 'bash', 'git'], instruction_files: ['AGENTS.md'] }); // a git repository at the root: the history tool is offered
    expect(events.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Found it.' });
    const types = events.map((e) => e.type);
    expect(types.indexOf('tool_use')).toBeLessThan(types.indexOf('tool_result'));
    expect(types.filter((t) => t === 'usage')).toHaveLength(2);
    expect(types.filter((t) => t === 'assistant')).toHaveLength(2);
    expect(types.filter((t) => t === 'user')).toHaveLength(1);
    const sessions = new Set(events.filter((e) => e.session_id !== undefined).map((e) => e.session_id));
    expect(sessions.size).toBe(1);
  });
});

describe('audit mode', () => {
  const audit = async (extra: string[], report: Record<string, unknown> | null, more: Reply[] = []) => {
    api = await startMockApi({ minCacheTokens: 256 });
    const replies: Reply[] = report ? [reply(toolUse('report_findings', report)), reply(text('Reported.'))] : [reply(text('I looked around.')), reply(text('Still nothing.'))];
    api.enqueue(...replies, ...more);
    return runCli(['audit', 'is user input passed to a shell?', '-C', repo.root, ...extra], { env: env() });
  };

  it.each([
    ['pass', 0, { verdict: 'pass', summary: 'no', findings: [] }, []],
    ['fail at high', 4, { verdict: 'fail', summary: 'yes', findings: [appFinding()] }, []],
    ['fail below --fail-on', 0, { verdict: 'fail', summary: 'yes', findings: [appFinding({ severity: 'medium' })] }, ['--fail-on', 'high']],
    ['fail at --fail-on low', 4, { verdict: 'fail', summary: 'yes', findings: [appFinding({ severity: 'low' })] }, ['--fail-on', 'low']],
    ['inconclusive', 5, { verdict: 'inconclusive', summary: 'unsure', findings: [] }, []],
    ['never reported (nudged once)', 5, null, []],
  ] as const)('%s → exit %i', async (_name, code, report, extra) => {
    const run = await audit([...extra, '--output-format', 'json'], report as Record<string, unknown> | null);
    expect(run.code).toBe(code);
    const result = JSON.parse(run.stdout);
    validate.result(result);
    expect(result.audit.verdict).toBe(report ? (report as { verdict: string }).verdict : 'inconclusive');
    if (!report) {
      expect(messages()).toHaveLength(2);
      expect(JSON.stringify(messages()[1]!.body.messages)).toContain('report_findings');
    }
  });

  it('invalid locations become warnings and the model is told', async () => {
    const run = await audit(['--output-format', 'json'], {
      verdict: 'fail',
      summary: 'yes',
      findings: [appFinding(), appFinding({ path: '../outside.js' }), appFinding({ start_line: 999 })],
    });
    const result = JSON.parse(run.stdout);
    expect(result.audit.findings).toHaveLength(1);
    expect(result.warnings.join('\n')).toMatch(/outside/);
    expect(result.warnings.join('\n')).toMatch(/999/);
    const toolResult = JSON.stringify(messages()[1]!.body.messages!.at(-1));
    expect(toolResult).toMatch(/999/);
    expect(run.code).toBe(4);
  });

  it('text output prints the verdict and a findings table on stdout', async () => {
    const run = await audit([], { verdict: 'fail', summary: 'User input reaches a shell.', findings: [appFinding()] });
    expect(run.code).toBe(4);
    expect(run.stdout).toContain('verdict: FAIL');
    expect(run.stdout).toContain('src/auth.js:4');
    expect(run.stdout).toContain('shell-injection');
  });

  it('SARIF fingerprints are identical across two runs', async () => {
    const out = path.join(repo.root, '..', 'out.sarif');
    const report = { verdict: 'fail', summary: 'yes', findings: [appFinding()] };
    await audit(['--sarif', out], report);
    const first = await readSarif(out);
    await api.close();
    await audit(['--sarif', out], report);
    const second = await readSarif(out);
    expect(first.version).toBe('2.1.0');
    const r1 = first.runs[0].results[0];
    expect(r1).toMatchObject({ ruleId: 'shell-injection', level: 'error' });
    expect(r1.locations[0].physicalLocation).toMatchObject({ artifactLocation: { uri: 'src/auth.js' }, region: { startLine: 4, endLine: 4 } });
    expect(second.runs[0].results[0].partialFingerprints).toEqual(r1.partialFingerprints);
  });

  it('SARIF for GitHub: tags per rule, security-severity on security rules only, a category per question, ids normalised', async () => {
    const out = path.join(repo.root, '..', 'gh.sarif');
    const findings = [appFinding({ rule_id: 'Shell_Injection', category: 'security', severity: 'critical' }), appFinding({ rule_id: 'slow-io', severity: 'low', category: 'performance', start_line: 2 })];
    const run = await audit(['--sarif', out], { verdict: 'fail', summary: 'yes', findings });
    expect(run.code).toBe(4);
    const log = await readSarif(out);
    const sarifRun = log.runs[0];
    expect(sarifRun.automationDetails).toEqual({ id: 'spelunk/is-user-input-passed-to-a-shell/' });
    expect(sarifRun.invocations).toEqual([{ executionSuccessful: true }]);
    expect(sarifRun.tool.driver.rules).toEqual([
      expect.objectContaining({ id: 'shell-injection', properties: { 'security-severity': '9.5', tags: ['security'] } }),
      expect.objectContaining({ id: 'slow-io', properties: { tags: ['performance'] } }),
    ]);
    expect(sarifRun.results.map((r: { ruleId: string }) => r.ruleId)).toEqual(['shell-injection', 'slow-io']);

    await api.close();
    await audit(['--sarif', out, '--sarif-category', 'ci/auth'], { verdict: 'pass', summary: 'no', findings: [] });
    expect((await readSarif(out)).runs[0].automationDetails).toEqual({ id: 'ci/auth/' });
  });

  it('warnings carry every invalid finding, with rule id, path, lines and reason, even after the model corrected it', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(
      reply(toolUse('report_findings', { verdict: 'fail', summary: 'yes', findings: [appFinding({ start_line: 400, end_line: 402 })] })),
      reply(toolUse('report_findings', { verdict: 'fail', summary: 'yes', findings: [appFinding()] })),
      reply(text('Reported.')),
    );
    const run = await runCli(['audit', 'is user input passed to a shell?', '-C', repo.root, '--output-format', 'json'], { env: env() });
    expect(run.code).toBe(4);
    const result = JSON.parse(run.stdout);
    validate.result(result);
    expect(result.audit.findings).toEqual([expect.objectContaining({ start_line: 4 })]);
    expect(result.warnings).toEqual([expect.stringMatching(/^report_findings call 1 dropped findings\[0\] \(shell-injection at src\/auth\.js:400-402\): start_line 400 is past the end of the file/)]);
  });

  const outage = Array.from({ length: 6 }, () => httpError(529, 'overloaded_error', 'Overloaded', { 'retry-after-ms': '1' }));
  it.each<[string, Reply[], string[], number]>([
    ['an API outage', outage, [], 1],
    ['an inconclusive audit', [reply(toolUse('report_findings', { verdict: 'inconclusive', summary: 'unsure', findings: [] })), reply(text('Done.'))], [], 5],
    ['the turn limit', [reply(toolUse('bash', { command: 'ls' }))], ['--max-turns', '1'], 3],
  ])('fails closed on %s: no SARIF is written and a stale one is removed', async (_name, replies, extra, code) => {
    const out = path.join(repo.root, '..', 'stale.sarif');
    await fs.writeFile(out, '{"version":"2.1.0","runs":[{"results":[]}]}');
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(...replies);
    const run = await runCli(['audit', 'is user input passed to a shell?', '-C', repo.root, '--sarif', out, ...extra], { env: env() });
    expect(run.code).toBe(code);
    await expect(fs.access(out)).rejects.toThrow();
    expect(run.stderr).toContain(`no SARIF written to ${out}: the audit reached no verdict`);
  });

  it.each([
    [['--sarif', 'x.sarif', 'q'], '--sarif only works with the audit subcommand'],
    [['--fail-on', 'low', 'q'], '--fail-on only works with the audit subcommand'],
    [['--sarif', 'x.sarif', '--fail-on', 'low', 'q'], '--sarif and --fail-on only work with the audit subcommand'],
    [['--sarif-category', 'ci/auth', 'q'], '--sarif-category only works with the audit subcommand'],
    [['--sarif-on-error', 'notification', 'q'], '--sarif-on-error only works with the audit subcommand'],
    [['--sarif', 'x', '--sarif-category', 'c', '--sarif-on-error', 'none', 'q'], '--sarif, --sarif-category and --sarif-on-error only work'],
    [['audit', '--sarif-category', 'ci/auth', 'q'], '--sarif-category shape the SARIF file: add --sarif <file>'],
    [['audit', '--sarif', 'x.sarif', '--sarif-on-error', 'upload', 'q'], '--sarif-on-error must be none or notification (got "upload")'],
    [['audit', '--sarif', 'x.sarif', '--sarif-category', 'has space', 'q'], '--sarif-category must be 1 to 200 printable characters'],
  ])('%j → exit 2 with one line, nothing sent', async (argv, fragment) => {
    api = await startMockApi({ minCacheTokens: 256 });
    const run = await runCli(['-C', repo.root, ...argv], { env: env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(fragment);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(messages()).toHaveLength(0);
  });

  it('--sarif-on-error=notification: an outage writes a SARIF that says so (executionSuccessful false) and still exits 1', async () => {
    const out = path.join(repo.root, '..', 'notify.sarif');
    await fs.writeFile(out, '{"version":"2.1.0","runs":[{"results":[]}]}');
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(...outage);
    const run = await runCli(['audit', 'is user input passed to a shell?', '-C', repo.root, '--sarif', out, '--sarif-on-error=notification'], { env: env() });
    expect(run.code).toBe(1);
    const log = await readSarif(out);
    const [invocation] = log.runs[0].invocations;
    expect(invocation.executionSuccessful).toBe(false);
    expect(invocation.toolExecutionNotifications).toEqual([expect.objectContaining({ level: 'error', descriptor: { id: 'error_during_execution' } })]);
    expect(invocation.toolExecutionNotifications[0].message.text).toContain('Overloaded');
    expect(log.runs[0].results).toEqual([]);
    expect(log.runs[0].automationDetails.id).toBe('spelunk/is-user-input-passed-to-a-shell/');
    expect(run.stderr).toContain(`${out} reports the failure (executionSuccessful: false)`);
    await fs.rm(out);
  });

  it('--sarif-on-error=notification on an inconclusive audit names it and carries the summary, exit 5', async () => {
    const out = path.join(repo.root, '..', 'inconclusive.sarif');
    const run = await audit(['--sarif', out, '--sarif-on-error', 'notification'], { verdict: 'inconclusive', summary: 'the handlers are generated at build time', findings: [] });
    expect(run.code).toBe(5);
    const [invocation] = (await readSarif(out)).runs[0].invocations;
    expect(invocation).toEqual({
      executionSuccessful: false,
      toolExecutionNotifications: [{ level: 'error', descriptor: { id: 'inconclusive' }, message: { text: 'the audit reached no verdict (inconclusive): the handlers are generated at build time' } }],
    });
    await fs.rm(out);
  });

  it('a SARIF file written inside the repository does not fail the read-only check', async () => {
    const run = await audit(['--sarif', path.join(repo.root, 'spelunk.sarif'), '--output-format', 'json'], { verdict: 'pass', summary: 'ok', findings: [] });
    const result = JSON.parse(run.stdout);
    expect(result.readonly_verified).toBe(true);
    expect(run.code).toBe(0);
    await fs.rm(path.join(repo.root, 'spelunk.sarif'));
  });
});
