import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditReport, Finding } from '../../src/audit/report.js';
import { sarifCategory, toSarif, toSarifFailure, writeSarif } from '../../src/output/sarif.js';
import { FINGERPRINT_KEY, fileLineReader } from '../../src/audit/fingerprint.js';
import { sarifValidator } from '../support/sarif-schema.js';

const validateSarif = sarifValidator();

let root: string;

const CODE = ['import { exec } from "node:child_process";', '', 'export function run(req) {', '  exec(req.query.cmd);', '}', ''];

beforeEach(() => {
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'spelunk-sarif-')));
  writeFileSync(path.join(root, 'app.js'), CODE.join('\n'));
  writeFileSync(path.join(root, 'dir with space#1.js'), 'a\nb\n');
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

const finding = (over: Partial<Finding>): Finding => ({
  rule_id: 'shell-injection',
  severity: 'critical',
  title: 'User input reaches exec',
  message: 'req.query.cmd is passed to exec unescaped.',
  path: 'app.js',
  start_line: 4,
  end_line: 4,
  ...over,
});

const report = (findings: Finding[]): AuditReport => ({ verdict: 'fail', summary: 's', findings });

function sarifOf(findings: Finding[]) {
  return toSarif({ report: report(findings), root, toolVersion: '0.1.0', readLines: fileLineReader(root) });
}

function fingerprints(findings: Finding[]): string[] {
  return sarifOf(findings).runs[0]!.results.map((r) => r.partialFingerprints[FINGERPRINT_KEY]!);
}

describe('toSarif', () => {
  it('builds a SARIF 2.1.0 log with driver, rules, results and locations', () => {
    const sarif = sarifOf([
      finding({}),
      finding({ rule_id: 'missing-authz', severity: 'medium', title: 'No auth check', start_line: 3, end_line: 5 }),
      finding({ severity: 'low', title: 'Another exec', start_line: 1 }),
      finding({ rule_id: 'odd-path', severity: 'high', path: 'dir with space#1.js', start_line: 2 }),
    ]);
    expect(sarif.version).toBe('2.1.0');
    expect(sarif.$schema).toContain('sarif-2.1.0');
    const run = sarif.runs[0]!;
    expect(run.tool.driver).toMatchObject({ name: 'spelunk', version: '0.1.0', semanticVersion: '0.1.0' });
    // No public project page yet: no informationUri rather than a placeholder (test/licences.test.ts).
    expect(run.tool.driver.informationUri).toBeUndefined();
    expect(run.tool.driver.rules.map((r) => [r.id, r.name, r.shortDescription.text, r.defaultConfiguration.level, r.properties])).toEqual([
      ['shell-injection', 'ShellInjection', 'Shell injection', 'error', { tags: [] }],
      ['missing-authz', 'MissingAuthz', 'Missing authz', 'warning', { tags: [] }],
      ['odd-path', 'OddPath', 'Odd path', 'error', { tags: [] }],
    ]);
    // No absolute path of the machine that ran the audit.
    expect(JSON.stringify(sarif)).not.toContain(root);
    expect(run.originalUriBaseIds['%SRCROOT%']).toEqual({ description: { text: expect.stringContaining('root of the repository') } });
    expect(run.results.map((r) => [r.ruleId, r.ruleIndex, r.level])).toEqual([
      ['shell-injection', 0, 'error'],
      ['missing-authz', 1, 'warning'],
      ['shell-injection', 0, 'note'],
      ['odd-path', 2, 'error'],
    ]);
    expect(run.results[1]).toMatchObject({
      message: { text: 'No auth check\n\nreq.query.cmd is passed to exec unescaped.' },
      locations: [
        { physicalLocation: { artifactLocation: { uri: 'app.js', uriBaseId: '%SRCROOT%' }, region: { startLine: 3, endLine: 5 } } },
      ],
      properties: { severity: 'medium' },
    });
    expect(run.results[3]?.locations[0]?.physicalLocation.artifactLocation.uri).toBe('dir%20with%20space%231.js');
    for (const result of run.results) expect(result.partialFingerprints[FINGERPRINT_KEY]).toMatch(/^[0-9a-f]{64}:1$/);
    expect(run.invocations).toEqual([{ executionSuccessful: true }]);
    validateSarif(sarif);
  });

  it.each([
    ['critical', '9.5'],
    ['high', '8.0'],
    ['medium', '5.5'],
    ['low', '2.0'],
  ] as const)('a %s security rule has security-severity %s', (severity, score) => {
    const sarif = sarifOf([finding({ severity, category: 'security' })]);
    expect(sarif.runs[0]!.tool.driver.rules[0]!.properties['security-severity']).toBe(score);
    validateSarif(sarif);
  });

  it('a rule takes its most severe finding\'s score and its findings\' categories as tags; only a security rule has a score', () => {
    const sarif = sarifOf([
      finding({ severity: 'low', category: 'security' }),
      finding({ severity: 'high', start_line: 3, category: 'correctness' }),
      finding({ rule_id: 'slow-loop', severity: 'medium', category: 'performance' }),
      finding({ rule_id: 'untagged', severity: 'low' }),
    ]);
    const rules = sarif.runs[0]!.tool.driver.rules;
    expect(rules.map((r) => [r.id, r.properties['security-severity'], r.properties.tags])).toEqual([
      ['shell-injection', '8.0', ['correctness', 'security']],
      ['slow-loop', undefined, ['performance']],
      ['untagged', undefined, []],
    ]);
    validateSarif(sarif);
  });

  it('carries run.automationDetails.id when given', () => {
    const sarif = toSarif({ report: report([finding({})]), root, toolVersion: '1', readLines: () => null, automationId: 'spelunk/auth/' });
    expect(sarif.runs[0]!.automationDetails).toEqual({ id: 'spelunk/auth/' });
    validateSarif(sarif);
  });

  it('a failure log: executionSuccessful false, one error notification, an empty results array, schema-valid', () => {
    const sarif = toSarifFailure({ root, toolVersion: '1', automationId: 'spelunk/q/', reason: 'error_during_execution', message: 'the Messages API request failed' });
    const run = sarif.runs[0]!;
    expect(run.invocations).toEqual([
      {
        executionSuccessful: false,
        toolExecutionNotifications: [{ level: 'error', message: { text: 'the Messages API request failed' }, descriptor: { id: 'error_during_execution' } }],
      },
    ]);
    expect(run.results).toEqual([]);
    expect(run.tool.driver.rules).toEqual([]);
    validateSarif(sarif);
  });

  it('the schema check is real: it rejects a log without a version and a rule with a bad id type', () => {
    const sarif = sarifOf([finding({})]) as unknown as { version?: string; runs: Array<{ tool: { driver: { rules: Array<{ id: unknown }> } } }> };
    expect(() => validateSarif({ ...sarif, version: undefined })).toThrow(/version/);
    sarif.runs[0]!.tool.driver.rules[0]!.id = 7;
    expect(() => validateSarif(sarif)).toThrow(/invalid SARIF/);
  });

  it('gives an empty run for a report without findings', () => {
    const sarif = toSarif({ report: { verdict: 'pass', summary: 'ok', findings: [] }, root, toolVersion: '1', readLines: () => null });
    expect(sarif.runs[0]?.results).toEqual([]);
    expect(sarif.runs[0]?.tool.driver.rules).toEqual([]);
  });

  it('fingerprints are identical across runs', () => {
    expect(fingerprints([finding({})])).toEqual(fingerprints([finding({})]));
  });

  it('fingerprints do not change with the wording of a finding, its severity, or the clock', () => {
    const [before] = fingerprints([finding({})]);
    const reworded = fingerprints([finding({ title: 'Shell injection in the handler', message: 'Another explanation entirely.', severity: 'critical' })]);
    expect(reworded).toEqual([before]);
    const realNow = Date.now;
    Date.now = () => realNow() + 86_400_000;
    try {
      expect(fingerprints([finding({})])).toEqual([before]);
    } finally {
      Date.now = realNow;
    }
  });

  it('fingerprints do not depend on where the repository is checked out', () => {
    const [here] = fingerprints([finding({})]);
    const elsewhere = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'spelunk-sarif-other-checkout-')));
    try {
      writeFileSync(path.join(elsewhere, 'app.js'), CODE.join('\n'));
      const log = toSarif({ report: report([finding({})]), root: elsewhere, toolVersion: '0.1.0', readLines: fileLineReader(elsewhere) });
      expect(log.runs[0]!.results[0]!.partialFingerprints[FINGERPRINT_KEY]).toBe(here);
      expect(log.runs[0]!.originalUriBaseIds).toEqual(sarifOf([]).runs[0]!.originalUriBaseIds);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('fingerprints survive lines inserted above and re-indentation, and change when the code changes', () => {
    const [before] = fingerprints([finding({})]);
    writeFileSync(path.join(root, 'app.js'), ['// header', '// more', ...CODE.slice(0, 3), '\texec(req.query.cmd);  ', ...CODE.slice(4)].join('\n'));
    expect(fingerprints([finding({ start_line: 6, end_line: 6 })])).toEqual([before]);

    writeFileSync(path.join(root, 'app.js'), CODE.join('\n').replace('req.query.cmd', 'shellQuote(req.query.cmd)'));
    expect(fingerprints([finding({})])).not.toEqual([before]);
  });

  it('fingerprints differ by rule and by path, and repeated code in one file stays distinct', () => {
    const [a] = fingerprints([finding({})]);
    const [b] = fingerprints([finding({ rule_id: 'other' })]);
    expect(a).not.toBe(b);
    writeFileSync(path.join(root, 'copy.js'), CODE.join('\n'));
    const [c] = fingerprints([finding({ path: 'copy.js' })]);
    expect(c).not.toBe(a);

    writeFileSync(path.join(root, 'twice.js'), 'exec(x)\nexec(x)\n');
    const twice = fingerprints([finding({ path: 'twice.js', start_line: 2, end_line: 2 }), finding({ path: 'twice.js', start_line: 1, end_line: 1 })]);
    expect(twice[1]?.endsWith(':1')).toBe(true);
    expect(twice[0]?.endsWith(':2')).toBe(true);
    expect(twice[0]?.slice(0, 64)).toBe(twice[1]?.slice(0, 64));
  });

  it('falls back to the title when the file cannot be read', () => {
    const gone = (title: string) =>
      toSarif({ report: report([finding({ title })]), root, toolVersion: '1', readLines: () => null }).runs[0]!.results[0]!
        .partialFingerprints[FINGERPRINT_KEY];
    expect(gone('a')).toBe(gone('a'));
    expect(gone('a')).not.toBe(gone('b'));
  });
});

describe('sarifCategory', () => {
  it.each([
    ['Is user input passed to a shell?', null, 'spelunk/is-user-input-passed-to-a-shell/'],
    ['  Does every HANDLER check auth?! ', null, 'spelunk/does-every-handler-check-auth/'],
    ['q', 'backend/auth', 'backend/auth/'],
    ['q', 'backend/auth/', 'backend/auth/'],
  ])('%j with --sarif-category %j → %s', (question, given, expected) => {
    expect(sarifCategory(question, given)).toBe(expected);
  });

  it('a question without ASCII letters, or a long one, gets a hash so distinct questions stay distinct', () => {
    expect(sarifCategory('¿¿??', null)).toMatch(/^spelunk\/[0-9a-f]{8}\/$/);
    expect(sarifCategory('¿¿??', null)).not.toBe(sarifCategory('!!!', null));
    const long = (end: string) => sarifCategory(`${'does this module validate every input '.repeat(3)}${end}`, null);
    expect(long('a')).toMatch(/^spelunk\/does-this-module-[a-z0-9-]+-[0-9a-f]{8}\/$/);
    expect(long('a').length).toBeLessThanOrEqual('spelunk/'.length + 60 + 10);
    expect(long('a')).not.toBe(long('b'));
  });
});

describe('fileLineReader', () => {
  it('reads lines under the root and refuses paths that leave it', () => {
    const read = fileLineReader(root);
    expect(read('app.js')?.[3]).toBe('  exec(req.query.cmd);');
    expect(read('../../etc/passwd')).toBeNull();
    expect(read('missing.js')).toBeNull();
  });
});

describe('writeSarif', () => {
  it('writes the log as JSON and leaves no temporary file behind', async () => {
    const sarif = sarifOf([finding({})]);
    const written = await writeSarif(path.join(root, 'out.sarif'), sarif, root);
    expect(written).toBe(path.join(root, 'out.sarif'));
    expect(JSON.parse(readFileSync(written, 'utf8'))).toEqual(sarif);
    expect(readdirSync(root).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('fails with the cause when the directory does not exist', async () => {
    await expect(writeSarif(path.join(root, 'no', 'dir', 'out.sarif'), sarifOf([]), root)).rejects.toThrow(/ENOENT/);
  });
});
