import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReportFindingsTool } from '../../src/tools/report-findings.js';
import { normaliseRuleId, type AuditReport, type Finding, type FindingInput, type FindingsSink, type Severity } from '../../src/audit/report.js';
import { verdictExitCode } from '../../src/audit/verdict.js';
import type { ToolContext } from '../../src/tools/tool.js';

let base: string;
let root: string;

beforeAll(() => {
  base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'spelunk-findings-')));
  root = path.join(base, 'repo');
  mkdirSync(path.join(root, 'src', 'dir'), { recursive: true });
  writeFileSync(path.join(root, 'src', 'ten.ts'), Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
  writeFileSync(path.join(root, 'no-final-newline.txt'), 'a\nb\nc');
  writeFileSync(path.join(root, 'empty.txt'), '');
  writeFileSync(path.join(root, 'with space.ts'), 'x\n');
  writeFileSync(path.join(base, 'secret.txt'), 'outside\n'.repeat(50));
  symlinkSync(path.join(base, 'secret.txt'), path.join(root, 'escape.txt'));
  symlinkSync(path.join(root, 'src', 'ten.ts'), path.join(root, 'alias.ts'));
  // Sparse files: their size is what the check reads, not their (absent) content.
  writeFileSync(path.join(root, 'at-limit.bin'), '');
  truncateSync(path.join(root, 'at-limit.bin'), 64 * 1024 * 1024);
  writeFileSync(path.join(root, 'huge.bin'), '');
  truncateSync(path.join(root, 'huge.bin'), 64 * 1024 * 1024 + 1);
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

function context(reads: string[] = []): ToolContext {
  return { root, signal: new AbortController().signal, timeoutMs: 5_000, onRead: (abs) => reads.push(abs) };
}

const finding = (over: Partial<FindingInput>): FindingInput => ({
  rule_id: 'shell-injection',
  severity: 'high',
  title: 'exec with user input',
  message: 'req.query.cmd reaches child_process.exec',
  path: 'src/ten.ts',
  start_line: 3,
  ...over,
});

async function file(findings: FindingInput[], sink: FindingsSink = { report: null, warnings: [] }) {
  const tool = createReportFindingsTool(sink);
  const parsed = tool.parse({ verdict: 'fail', summary: 'found one', findings });
  if (!parsed.ok) throw new Error(parsed.error);
  const outcome = await tool.run(parsed.value, context());
  return { sink, outcome };
}

describe('report_findings location checks', () => {
  it.each<[string, Partial<FindingInput>, string | Partial<Finding>]>([
    ['a valid single line', {}, { path: 'src/ten.ts', start_line: 3, end_line: 3 }],
    ['a valid range to the last line', { start_line: 9, end_line: 10 }, { start_line: 9, end_line: 10 }],
    ['a ./ path', { path: './src/ten.ts' }, { path: 'src/ten.ts' }],
    ['an absolute path inside', { path: '<root>/src/ten.ts' }, { path: 'src/ten.ts' }],
    ['a symlink inside, reported by its target', { path: 'alias.ts' }, { path: 'src/ten.ts' }],
    ['the last line without a final newline', { path: 'no-final-newline.txt', start_line: 3 }, { end_line: 3 }],
    ['a path with a space', { path: 'with space.ts', start_line: 1 }, { path: 'with space.ts' }],
    ['a path outside the root', { path: '../secret.txt' }, 'outside the repository root'],
    ['an absolute path outside', { path: '/etc/passwd' }, 'outside the repository root'],
    ['a symlink escaping the root', { path: 'escape.txt' }, 'outside the repository root'],
    ['a missing file', { path: 'src/nope.ts' }, 'no such file'],
    ['a directory', { path: 'src/dir' }, 'not a regular file'],
    ['a file over 64 MiB', { path: 'huge.bin', start_line: 1 }, 'file is larger than 64 MiB; cannot verify lines'],
    ['a file of exactly 64 MiB', { path: 'at-limit.bin', start_line: 1 }, { path: 'at-limit.bin', end_line: 1 }],
    ['a start past EOF', { start_line: 11 }, 'past the end of the file (10 lines)'],
    ['an end past EOF', { start_line: 10, end_line: 11 }, 'end_line 11 is past the end'],
    ['end before start', { start_line: 5, end_line: 4 }, 'end_line 4 is before start_line 5'],
    ['a line in an empty file', { path: 'empty.txt', start_line: 1 }, 'past the end of the file (0 lines)'],
    ['line 4 of a 3-line file without final newline', { path: 'no-final-newline.txt', start_line: 4 }, '(3 lines)'],
  ])('%s', async (_name, over, expected) => {
    const input = finding({ ...over, path: (over.path ?? 'src/ten.ts').replace('<root>', root) });
    const { sink, outcome } = await file([input]);
    if (typeof expected === 'string') {
      expect(sink.report?.findings).toEqual([]);
      expect(sink.warnings).toHaveLength(1);
      expect(sink.warnings[0]).toContain(expected);
      expect(outcome.isError).toBe(true);
      expect(outcome.content).toContain(expected);
      expect(outcome.content).toContain('call report_findings again');
      return;
    }
    expect(sink.warnings).toEqual([]);
    expect(outcome.isError).toBe(false);
    expect(sink.report?.findings).toHaveLength(1);
    expect(sink.report?.findings[0]).toMatchObject(expected);
  });

  it('keeps the valid findings, drops the invalid ones, and a second call replaces the report', async () => {
    const sink: FindingsSink = { report: null, warnings: [] };
    const tool = createReportFindingsTool(sink);
    const first = await tool.run(
      { verdict: 'fail', summary: 's', findings: [finding({}), finding({ start_line: 99 }), finding({ path: 'gone.ts' })] },
      context(),
    );
    expect(sink.report?.findings.map((f) => f.start_line)).toEqual([3]);
    expect(sink.warnings).toHaveLength(2);
    expect(first.summary).toBe('fail: 1 finding (2 invalid dropped)');
    expect(first.content).toContain('findings[1]');
    expect(first.content).toContain('findings[2]');

    const second = await tool.run({ verdict: 'fail', summary: 'fixed', findings: [finding({ start_line: 9 })] }, context());
    expect(second.isError).toBe(false);
    expect(sink.report).toEqual({ verdict: 'fail', summary: 'fixed', findings: [expect.objectContaining({ start_line: 9 })] });
    // The corrected report does not erase what the model cited first: a pipeline must learn it happened.
    expect(sink.warnings).toHaveLength(2);

    // The correction is offered once; after that the model is told to stop.
    const third = await tool.run({ verdict: 'fail', summary: 'again', findings: [finding({ start_line: 0 })] }, context());
    expect(third.content).toContain('this report stands');
    expect(third.content).not.toContain('call report_findings again');
  });

  it('records every dropped finding of every call, with rule id, path, lines and reason, even once corrected', async () => {
    const sink: FindingsSink = { report: null, warnings: [] };
    const tool = createReportFindingsTool(sink);
    await tool.run({ verdict: 'fail', summary: 's', findings: [finding({ start_line: 9, end_line: 12 }), finding({ rule_id: 'sqli', path: 'gone.ts', start_line: 2 })] }, context());
    await tool.run({ verdict: 'fail', summary: 's', findings: [finding({ start_line: 40 })] }, context());
    await tool.run({ verdict: 'fail', summary: 'fixed', findings: [finding({ start_line: 9, end_line: 10 })] }, context());
    expect(sink.report?.findings).toEqual([expect.objectContaining({ start_line: 9, end_line: 10 })]);
    expect(sink.warnings).toEqual([
      'report_findings call 1 dropped findings[0] (shell-injection at src/ten.ts:9-12): end_line 12 is past the end of the file (10 lines)',
      expect.stringMatching(/^report_findings call 1 dropped findings\[1\] \(sqli at gone\.ts:2\): .*no such file/),
      'report_findings call 2 dropped findings[0] (shell-injection at src/ten.ts:40): start_line 40 is past the end of the file (10 lines)',
    ]);
  });

  it('tells the model a fail without a valid finding counts as inconclusive', async () => {
    const { outcome } = await file([finding({ start_line: 50 })]);
    expect(outcome.content).toContain('counts as inconclusive');
  });

  it.each<[string, AuditReport['verdict'], FindingInput[], string]>([
    ['a pass with one finding', 'pass', [finding({})], 'Recorded verdict "pass" with 1 valid finding. Now end your turn with a short summary.'],
    ['a pass without findings', 'pass', [], 'Recorded verdict "pass" with 0 valid findings. Now end your turn with a short summary.'],
    ['a fail with two findings', 'fail', [finding({}), finding({ start_line: 4 })], 'Recorded verdict "fail" with 2 valid findings. Now end your turn with a short summary.'],
    [
      'a fail without findings',
      'fail',
      [],
      'Recorded verdict "fail" with 0 valid findings. A "fail" verdict without a valid finding counts as inconclusive. Now end your turn with a short summary.',
    ],
  ])('answers %s with what it recorded and what to do next', async (_name, verdict, findings, content) => {
    const tool = createReportFindingsTool({ report: null, warnings: [] });
    const outcome = await tool.run({ verdict, summary: 's', findings }, context());
    expect(outcome).toEqual({ content, summary: `${verdict}: ${findings.length} finding${findings.length === 1 ? '' : 's'}`, isError: false });
  });

  it('lists each invalid finding on its own line, then invites one corrected call', async () => {
    const { outcome } = await file([finding({ start_line: 50 }), finding({ path: 'src/dir' })]);
    expect(outcome.content).toBe(
      'Recorded verdict "fail" with 0 valid findings. A "fail" verdict without a valid finding counts as inconclusive. ' +
        '2 findings had an invalid location:\n' +
        '- findings[0] (shell-injection at src/ten.ts:50): start_line 50 is past the end of the file (10 lines)\n' +
        '- findings[1] (shell-injection at src/dir:3): not a regular file\n' +
        'Check these locations with read_file, then call report_findings again with the complete corrected report ' +
        '(it replaces this one), or end your turn to keep only the valid findings.',
    );
  });

  it('records the summary without surrounding blanks', async () => {
    const sink: FindingsSink = { report: null, warnings: [] };
    await createReportFindingsTool(sink).run({ verdict: 'pass', summary: '  all clear \n', findings: [] }, context());
    expect(sink.report?.summary).toBe('all clear');
  });

  it('checks locations for a caller that does not listen to reads', async () => {
    const sink: FindingsSink = { report: null, warnings: [] };
    const ctx: ToolContext = { root, signal: new AbortController().signal, timeoutMs: 5_000 };
    const outcome = await createReportFindingsTool(sink).run({ verdict: 'fail', summary: 's', findings: [finding({})] }, ctx);
    expect(outcome.isError).toBe(false);
    expect(sink.report?.findings).toEqual([expect.objectContaining({ path: 'src/ten.ts', end_line: 3 })]);
  });

  it.each<[string, unknown, string]>([
    ['with an error code', Object.assign(new Error('I/O error'), { code: 'EIO' }), 'cannot read the file (EIO)'],
    ['without a code', new Error('disk gone'), 'cannot read the file (Error: disk gone)'],
  ])('drops a finding whose file cannot be read (%s), saying why', async (_name, error, reason) => {
    const sink: FindingsSink = { report: null, warnings: [] };
    const ctx: ToolContext = { ...context(), onRead: () => { throw error; } };
    const outcome = await createReportFindingsTool(sink).run({ verdict: 'fail', summary: 's', findings: [finding({})] }, ctx);
    expect(sink.report?.findings).toEqual([]);
    expect(outcome.content).toContain(`src/ten.ts:3): ${reason}\n`);
  });

  it('stops with the abort instead of dropping findings when the run is cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    const ctx: ToolContext = { root, signal: controller.signal, timeoutMs: 5_000 };
    const sink: FindingsSink = { report: null, warnings: [] };
    await expect(createReportFindingsTool(sink).run({ verdict: 'fail', summary: 's', findings: [finding({})] }, ctx)).rejects.toThrow();
    expect(sink.report).toBeNull();
  });

  it('reports each file it reads to onRead once', async () => {
    const reads: string[] = [];
    const tool = createReportFindingsTool({ report: null, warnings: [] });
    await tool.run({ verdict: 'fail', summary: 's', findings: [finding({}), finding({ start_line: 5 }), finding({ path: 'alias.ts' })] }, context(reads));
    expect(reads).toEqual([path.join(root, 'src', 'ten.ts')]);
  });
});

describe('report_findings input shape', () => {
  const tool = createReportFindingsTool({ report: null, warnings: [] });
  const good = { verdict: 'pass', summary: 'no exec anywhere', findings: [] };

  it.each<[string, unknown, string]>([
    ['not an object', 'pass', 'must be an object'],
    ['null', null, 'the input must be an object {verdict, summary, findings}'],
    ['an array', [], 'the input must be an object {verdict, summary, findings}'],
    ['a null finding', { ...good, findings: [null] }, 'findings[0] must be an object with rule_id, severity, category, title'],
    ['a numeric rule id', { ...good, findings: [finding({ rule_id: 123 as unknown as string })] }, 'findings[0].rule_id must be a short id'],
    ['a missing title', { ...good, findings: [{ ...finding({}), title: undefined }] }, 'findings[0].title must be a non-empty string (got nothing)'],
    ['a blank message', { ...good, findings: [finding({ message: ' ' })] }, 'findings[0].message must be a non-empty string (got " ")'],
    ['a title over 200 characters', { ...good, findings: [finding({ title: 't'.repeat(201) })] }, 'findings[0].title is 201 characters; at most 200'],
    ['a summary over 4000 characters', { ...good, summary: 's'.repeat(4001) }, 'summary is 4001 characters; at most 4000'],
    ['a verdict shown in full up to 40 characters', { ...good, verdict: 'v'.repeat(38) }, `(got "${'v'.repeat(38)}")`],
    ['a longer verdict shown cut', { ...good, verdict: 'v'.repeat(50) }, `(got "${'v'.repeat(39)}…)`],
    ['a bad verdict', { ...good, verdict: 'ok' }, 'verdict must be one of pass, fail, inconclusive'],
    ['an empty summary', { ...good, summary: '  ' }, 'summary must be a non-empty string'],
    ['missing findings', { verdict: 'pass', summary: 's' }, 'use [] when there are none'],
    ['an unknown top-level field', { ...good, confidence: 0.9 }, 'unknown field confidence'],
    ['a finding that is not an object', { ...good, findings: ['src/a.ts:3'] }, 'findings[0] must be an object'],
    ['a bad severity', { ...good, findings: [finding({ severity: 'severe' as Severity })] }, 'findings[0].severity must be one of low, medium, high, critical (got "severe")'],
    ['a numeric severity', { ...good, findings: [finding({ severity: 2 as unknown as Severity })] }, 'findings[0].severity must be one of'],
    ['a rule id with spaces', { ...good, findings: [finding({ rule_id: 'Shell Injection' })] }, 'findings[0].rule_id'],
    ['a string line number', { ...good, findings: [{ ...finding({}), start_line: '3' }] }, 'start_line must be an integer'],
    ['a fractional end line', { ...good, findings: [finding({ end_line: 3.5 })] }, 'end_line must be an integer'],
    ['a misnamed field', { ...good, findings: [{ ...finding({}), file: 'a.ts' }] }, 'unknown field findings[0].file'],
    ['a missing path', { ...good, findings: [{ ...finding({}), path: undefined }] }, 'findings[0].path must be a non-empty string (got nothing)'],
    ['a category off the list', { ...good, findings: [finding({ category: 'style' as 'security' })] }, 'findings[0].category must be one of security, correctness, performance, maintainability'],
    // The schema's minimum: a line below 1 refuses the report with the field named, as the schema the model sees says.
    ['line 0', { ...good, findings: [finding({ start_line: 0 })] }, 'findings[0].start_line must be an integer line number, 1 or more (got 0)'],
    ['a negative end line', { ...good, findings: [finding({ end_line: -4 })] }, 'findings[0].end_line must be an integer line number, 1 or more (got -4)'],
    ['too many findings', { ...good, findings: Array.from({ length: 201 }, () => finding({})) }, 'at most 200 findings'],
  ])('rejects %s', (_name, input, fragment) => {
    const parsed = tool.parse(input);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.error).toContain(fragment);
      expect(parsed.error).toContain('fix these and call it again');
    }
  });

  it('lists every shape error on its own line, values shown as JSON', () => {
    expect(tool.parse({ ...good, verdict: 'ok', extra: 1 })).toEqual({
      ok: false,
      error:
        'report_findings was not recorded; fix these and call it again:\n' +
        '- unknown field extra (allowed: verdict, summary, findings)\n' +
        '- verdict must be one of pass, fail, inconclusive (got "ok")',
    });
  });

  it('accepts the largest report: 200 findings and texts at their limits, trimmed', () => {
    const parsed = tool.parse({
      ...good,
      summary: 's'.repeat(4000),
      findings: [finding({ title: ` ${'t'.repeat(198)} `, message: ' evidence\n' }), ...Array.from({ length: 199 }, () => finding({}))],
    });
    expect(parsed.ok).toBe(true);
    if (parsed.ok) {
      expect(parsed.value.findings).toHaveLength(200);
      expect(parsed.value.findings[0]).toMatchObject({ title: 't'.repeat(198), message: 'evidence' });
    }
  });

  it('accepts a good report, treating a null end_line as absent', () => {
    const parsed = tool.parse({ ...good, verdict: 'fail', findings: [{ ...finding({}), end_line: null }] });
    expect(parsed).toEqual({ ok: true, value: { verdict: 'fail', summary: good.summary, findings: [finding({})] } });
    if (parsed.ok) expect(tool.display(parsed.value)).toBe('verdict fail, 1 finding');
  });

  it.each([
    ['shell-injection', 'shell-injection'],
    ['Shell_Injection', 'shell-injection'],
    ['SQLi--raw-query-', 'sqli-raw-query'],
    ['owasp/a03.injection', 'owasp/a03.injection'],
    ['owasp/a03./', 'owasp/a03'],
  ])('normalises rule id %s to %s, so one kind of problem is one SARIF rule', (given, expected) => {
    const parsed = tool.parse({ ...good, findings: [finding({ rule_id: given })] });
    expect(parsed.ok && parsed.value.findings[0]?.rule_id).toBe(expected);
  });

  it('leaves an id of separators only as it is rather than empty', () => {
    expect(normaliseRuleId('__')).toBe('__');
    expect(normaliseRuleId('./')).toBe('./');
  });

  it('keeps a category, and files a finding without one', () => {
    const parsed = tool.parse({ ...good, findings: [finding({ category: 'security' }), { ...finding({}), category: null }] });
    expect(parsed.ok && parsed.value.findings.map((f) => f.category)).toEqual(['security', undefined]);
  });

  it('lists at most ten shape errors', () => {
    const parsed = tool.parse({ ...good, findings: Array.from({ length: 12 }, () => ({ ...finding({}), severity: 'x' })) });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toContain('(and 2 more)');
  });

  it('offers the model a schema with required fields and no extra properties', () => {
    expect(tool.name).toBe('report_findings');
    expect(tool.inputSchema.required).toEqual(['verdict', 'summary', 'findings']);
    expect(tool.description).toContain('exactly once, at the end');
  });
});

describe('verdictExitCode', () => {
  const at = (...severities: Severity[]): Finding[] =>
    severities.map((severity) => ({ ...finding({ severity }), end_line: 3 }));
  const report = (verdict: AuditReport['verdict'], findings: Finding[] = []): AuditReport => ({ verdict, summary: 's', findings });

  it.each<[string, number, AuditReport | null, Severity]>([
    ['no report', 5, null, 'high'],
    ['inconclusive', 5, report('inconclusive'), 'low'],
    ['inconclusive with findings', 5, report('inconclusive', at('critical')), 'low'],
    ['pass', 0, report('pass'), 'high'],
    ['pass with a low note', 0, report('pass', at('low')), 'low'],
    ['fail at the threshold', 4, report('fail', at('high')), 'high'],
    ['fail above the threshold', 4, report('fail', at('low', 'critical')), 'high'],
    ['fail below the threshold', 0, report('fail', at('low', 'medium')), 'high'],
    ['fail with --fail-on low', 4, report('fail', at('low')), 'low'],
    ['fail with --fail-on critical', 0, report('fail', at('high')), 'critical'],
    ['fail without valid findings', 5, report('fail'), 'low'],
  ])('%s → %i', (_name, exit, r, failOn) => {
    expect(verdictExitCode(r, failOn)).toBe(exit);
  });
});

