import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { makeAuditBranch, NEW, OLD } from '../support/audit-branch.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';

/**
 * A fixture branch: main has an old shell injection in src/auth.js:4; the branch `feature` adds src/search.js with a
 * seeded SQL injection at line 3. `audit --diff main` must fail the run for the new one only.
 */
let ws: string;
let root: string;
let api: MockApi | undefined;

beforeAll(async () => {
  const branch = await makeAuditBranch('spelunk-audit-diff-');
  ({ ws, root } = branch);
  await fs.writeFile(path.join(ws, 'pr.diff'), branch.git('diff', 'main...feature'));
});
afterAll(async () => fs.rm(ws, { recursive: true, force: true }));
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function audit(args: string[], findings: object[]) {
  api = await startMockApi({ minCacheTokens: 256 });
  api.enqueue(reply(toolUse('report_findings', { verdict: findings.length > 0 ? 'fail' : 'pass', summary: 's', findings })), reply(text('Done.')));
  const run = await runCli(['audit', '-C', root, '--output-format', 'json', ...args, 'is user input used safely?'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url }, cwd: ws });
  const result = run.stdout === '' ? null : JSON.parse(run.stdout);
  return { run, result, first: api.requests.find((r) => r.path === '/v1/messages')?.body };
}

describe('spelunk audit --diff: only findings in the changed lines fail the run', () => {
  it.each<[string, string[], object[], number, string[]]>([
    ['both seeded bugs reported', ['--diff', 'main'], [OLD, NEW], 4, ['outside-diff', 'changed-line']],
    ['only the old bug reported', ['--diff', 'main'], [OLD], 0, ['outside-diff']],
    ['only the old bug, --scope repo', ['--diff', 'main', '--scope', 'repo'], [OLD], 4, ['outside-diff']],
    ['only the old bug, --scope file', ['--diff', 'main', '--scope', 'file'], [OLD], 0, ['outside-diff']],
    ['the new file, an unchanged line of it is impossible: changed-line', ['--diff', 'main...feature'], [NEW], 4, ['changed-line']],
    ['--diff-file, no git needed', ['--diff-file', 'pr.diff'], [OLD, NEW], 4, ['outside-diff', 'changed-line']],
  ])('%s → exit %s', async (_name, args, findings, code, classes) => {
    const { run, result } = await audit(args, findings);
    expect(run.code, run.stderr).toBe(code);
    expect(result.audit.findings.map((f: { diff_class: string }) => f.diff_class)).toEqual(classes);
    expect(result.audit.scope).toBe(args.includes('--scope') ? args[args.indexOf('--scope') + 1] : 'line');
  });

  it('the change is in the first user message, after a preamble identical to an audit without --diff', async () => {
    const plain = await audit([], []);
    const scoped = await audit(['--diff', 'main'], []);
    expect(scoped.first?.system).toEqual(plain.first?.system);
    expect(scoped.first?.tools).toEqual(plain.first?.tools);
    const content = JSON.stringify(scoped.first?.messages?.[0]?.content);
    expect(content).toContain('This audit is scoped to a change (main...HEAD): 1 file(s)');
    expect(content).toContain('- src/search.js: 1-5');
    expect(content).toContain('<repository-diff source=\\"main...HEAD\\">');
    expect(content).toMatch(/Audit question:\\n\\nis user input used safely\?/);
    const fromFile = await audit(['--diff-file', 'pr.diff'], []);
    expect(JSON.stringify(fromFile.first?.messages?.[0]?.content)).toContain('This audit is scoped to a change (pr.diff): 1 file(s)');
  });

  it('SARIF carries the class in properties', async () => {
    const sarif = path.join(ws, 'out.sarif');
    const { run } = await audit(['--diff', 'main', '--sarif', sarif], [OLD, NEW]);
    expect(run.code).toBe(4);
    const log = JSON.parse(await fs.readFile(sarif, 'utf8'));
    expect(log.runs[0].results.map((r: { properties: { diff_class: string } }) => r.properties.diff_class)).toEqual(['outside-diff', 'changed-line']);
  });
});

describe('the text view', () => {
  it('shows each finding\'s class and suppression, and what counts', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('report_findings', { verdict: 'fail', summary: 's', findings: [OLD, NEW] })), reply(text('Done.')));
    const run = await runCli(['audit', '-C', root, '--diff', 'main', 'q'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, NO_COLOR: '1' }, cwd: ws });
    expect(run.code).toBe(4);
    expect(run.stdout).toContain('scope: only changed-line findings count for --fail-on');
    expect(run.stdout).toMatch(/outside-diff/);
    expect(run.stdout).toMatch(/changed-line/);
  });
});

describe('--baseline: accepted findings are reported as suppressed, counted, never dropped', () => {
  it('--update-baseline writes the fingerprints; the next run suppresses them in the result and in SARIF', async () => {
    const baseline = path.join(ws, 'baseline.json');
    const first = await audit(['--baseline', baseline, '--update-baseline'], [OLD, NEW]);
    expect(first.run.code, first.run.stderr).toBe(0);
    expect(first.result.audit.suppressed).toBe(2);
    const written = JSON.parse(await fs.readFile(baseline, 'utf8'));
    expect(written).toMatchObject({ spelunk_baseline: 1, fingerprints: [expect.stringMatching(/^[0-9a-f]{64}:1$/), expect.stringMatching(/^[0-9a-f]{64}:1$/)] });

    const sarif = path.join(ws, 'baselined.sarif');
    const second = await audit(['--baseline', baseline, '--sarif', sarif], [OLD, NEW, { ...NEW, rule_id: 'new-rule', title: 'another' }]);
    expect(second.run.code).toBe(4);
    expect(second.result.audit.suppressed).toBe(2);
    expect(second.result.audit.findings.map((f: { suppressed?: boolean }) => f.suppressed ?? false)).toEqual([true, true, false]);
    const log = JSON.parse(await fs.readFile(sarif, 'utf8'));
    expect(log.runs[0].results.map((r: { suppressions?: unknown[] }) => r.suppressions?.length ?? 0)).toEqual([1, 1, 0]);

    const onlyOld = await audit(['--baseline', baseline], [OLD, NEW]);
    expect(onlyOld.run.code).toBe(0);
  });
});

describe('bad audit-scope flags: exit 2 with one line', () => {
  it.each<[string[], string]>([
    [['--diff', 'main', '--diff-file', 'pr.diff'], '--diff and --diff-file name the change twice'],
    [['--diff', 'no-such-branch'], '--diff no-such-branch...HEAD:'],
    [['--diff=--output=x'], 'cannot start with "-"'],
    [['--diff-file', 'missing.diff'], '--diff-file'],
    [['--scope', 'line'], '--scope only applies to an audit of a change'],
    [['--diff', 'main', '--scope', 'everything'], '--scope must be line, file or repo'],
    [['--update-baseline'], '--update-baseline needs the file to write'],
    [['--baseline', 'repo/accepted.json'], 'is inside the repository'],
    [['--baseline', 'absent.json'], 'absent.json: cannot be read (ENOENT)'],
  ])('%j', async (args, fragment) => {
    const run = await runCli(['audit', '-C', root, ...args, 'q'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' }, cwd: ws });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(fragment);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('--diff without the audit subcommand is a usage error', async () => {
    const run = await runCli(['-C', root, '--diff', 'main', 'q'], { env: { ANTHROPIC_API_KEY: 'k' }, cwd: ws });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--diff only works with the audit subcommand');
  });
});
