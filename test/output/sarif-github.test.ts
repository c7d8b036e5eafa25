import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sarifToMarkdown } from '@security-alert/sarif-to-markdown';
import type { Log } from 'sarif';
import { applyScope } from '../../src/audit/scope.js';
import { sarifCategory, toSarif, toSarifFailure, type SarifLog } from '../../src/output/sarif.js';
import { fileLineReader, findingFingerprints } from '../../src/audit/fingerprint.js';
import type { AuditReport, Finding } from '../../src/audit/report.js';
import { findMultitool, validateWith, type Diagnostic } from '../support/sarif-multitool.js';
import { sarifValidator } from '../support/sarif-schema.js';

/**
 * Every SARIF shape spelunk writes, checked by Microsoft's validator with GitHub's ingestion rules (`--rule-kind Gh`,
 * what GitHub Advanced Security requires) and the core SARIF rules, and by the JSON schema (the validator turned a
 * doctored enum value into an empty log rather than an error, so both checks stay).
 */
const QUESTION = 'Is user input ever passed to a shell?';
const CODE = ['import { exec } from "node:child_process";', '', 'export function run(req) {', '  exec(req.query.cmd);', '}', ''];

/**
 * Core-rule notes and warnings that stay, each with the reason; anything else the validator reports fails the test.
 * No error and no GitHub (GH…) finding of any level is allowed.
 */
const EXPLAINED: Readonly<Record<string, string>> = {
  SARIF2002: 'note: results carry message.text, not id + arguments: the text is the model\'s own wording, there is no message table to point into',
  SARIF2003: 'note: no versionControlProvenance: spelunk writes it only on GitHub Actions or GitLab CI, whose environment names the repository (these shapes are built outside)',
  SARIF2005: 'warning: no informationUri: the project has no public page yet, and a placeholder would send readers to someone else\'s site',
  SARIF2006: 'note: the $schema URL was not reachable: the tests run offline',
  SARIF2009: 'note: rule ids are the model\'s kebab-case names of kinds of problem (shell-injection), not a "XX1234" catalogue',
  SARIF2010: 'note: no region snippet: the code stays in the repository; GitHub shows it from the analysed commit',
  SARIF2011: 'note: no contextRegion: likewise',
  SARIF2012: 'note: no helpUri: rules are made per audit, so there is no page per rule; help.text and help.markdown carry it inline',
};

const SHAPES = ['findings', 'none', 'diff-scoped', 'baseline-suppressions', 'failure-notification'] as const;

const validateSchema = sarifValidator();
let root: string;
const files: Record<string, string> = {};

const finding = (over: Partial<Finding>): Finding => ({
  rule_id: 'shell-injection',
  severity: 'critical',
  category: 'security',
  title: 'User input reaches exec',
  message: 'req.query.cmd is passed to exec unescaped.',
  path: 'app.js',
  start_line: 4,
  end_line: 4,
  ...over,
});

function shapes(): Record<(typeof SHAPES)[number], SarifLog> {
  const readLines = fileLineReader(root);
  const common = { root, toolVersion: '0.1.0', readLines, question: QUESTION, automationId: sarifCategory(QUESTION, null) };
  const report: AuditReport = {
    verdict: 'fail',
    summary: 's',
    findings: [
      finding({}),
      finding({ rule_id: 'missing-authz', severity: 'medium', category: 'correctness', title: 'No *auth* check <b>', start_line: 3, end_line: 5 }),
      finding({ rule_id: 'odd-path', severity: 'low', path: 'dir with space#1.js', start_line: 2, category: undefined }),
    ],
  };
  const diffScoped = applyScope(report, { files: [{ path: 'app.js', lines: [[4, 4]], deleted: false }], scope: 'line', readLines });
  const accepted = new Set(findingFingerprints(report.findings.slice(0, 1), readLines));
  const baselined = applyScope(report, { baseline: accepted, readLines });
  return {
    findings: toSarif({ ...common, report }),
    none: toSarif({ ...common, report: { verdict: 'pass', summary: 'clean', findings: [] } }),
    'diff-scoped': toSarif({ ...common, report: diffScoped }),
    'baseline-suppressions': toSarif({ ...common, report: baselined }),
    'failure-notification': toSarifFailure({ root, toolVersion: '0.1.0', automationId: 'spelunk/q/', reason: 'error_max_turns', message: 'the run reached --max-turns 25' }),
  };
}

beforeAll(() => {
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'spelunk-sarif-gh-')));
  writeFileSync(path.join(root, 'app.js'), CODE.join('\n'));
  writeFileSync(path.join(root, 'dir with space#1.js'), 'a\nb\n');
  for (const [name, log] of Object.entries(shapes())) {
    files[name] = path.join(root, `${name}.sarif`);
    writeFileSync(files[name], `${JSON.stringify(log, null, 2)}\n`);
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('every SARIF shape spelunk writes', () => {
  it.each(SHAPES)('%s: valid against the SARIF 2.1.0 schema', (name) => {
    validateSchema(shapes()[name]);
  });

  it('every rule has what GitHub and PR formatters read: descriptions, help (text and markdown), default level', () => {
    const rules = shapes().findings.runs[0]!.tool.driver.rules;
    expect(rules.map((r) => [r.id, r.defaultConfiguration.level])).toEqual([['shell-injection', 'error'], ['missing-authz', 'warning'], ['odd-path', 'note']]);
    const [shell, authz] = rules;
    expect(shell!.fullDescription.text).toBe(`Problems of the kind "shell-injection" that spelunk's audit found for the audit question "${QUESTION}"; each result's severity is its own.`);
    expect(shell!.help.text).toContain('How to fix: Each result names the code');
    expect(shell!.help.markdown).toContain('#### How to fix');
    expect(shell!.help.markdown).toContain('--baseline FILE --update-baseline');
    // The rule's text comes from its id, never a finding's title (which changes between uploads, and could carry
    // emphasis or HTML of the model's making).
    expect(authz!.shortDescription.text).toBe('Missing authz');
    expect(JSON.stringify(authz)).not.toContain('auth* check');
  });
});

describe('a PR-comment formatter (@security-alert/sarif-to-markdown) reads our severities', () => {
  const format = sarifToMarkdown({ owner: 'o', repo: 'r', branch: 'main', sourceRoot: '', simple: true, severities: ['error', 'warning', 'note'], failOn: ['error'] });

  it('a failing audit is not reported as clean: it reads each rule\'s defaultConfiguration.level', () => {
    const [findings] = format(shapes().findings as unknown as Log);
    expect(findings?.hasMessages).toBe(true);
    expect(findings?.shouldFail).toBe(true);
    expect(findings?.body).toContain('User input reaches exec');
    const [none] = format(shapes().none as unknown as Log);
    expect(none?.hasMessages).toBe(false);
  });
});

const tool = findMultitool();

describe.skipIf('skip' in tool)(`Sarif.Multitool validate${'skip' in tool ? ` (skipped: ${tool.skip})` : ''}`, () => {
  const binary = 'binary' in tool ? tool.binary : '';
  const byShape = (diagnostics: Diagnostic[]) => Object.fromEntries(Object.entries(files).map(([name, file]) => [name, diagnostics.filter((d) => d.file.endsWith(path.basename(file)))]));

  it('--rule-kind Gh (GitHub\'s ingestion rules): nothing at all, for every shape', { timeout: 120_000 }, () => {
    const found = validateWith(binary, Object.values(files), 'Gh');
    expect(byShape(found)).toEqual(Object.fromEntries(Object.keys(files).map((name) => [name, []])));
  });

  it('--rule-kind Sarif (core rules): no error, no warning but SARIF2005; every note is explained', { timeout: 120_000 }, () => {
    const found = validateWith(binary, Object.values(files), 'Sarif');
    // SARIF2005 (a driver without informationUri) is the one explained warning.
    expect(found.filter((d) => d.level !== 'note' && d.ruleId !== 'SARIF2005')).toEqual([]);
    expect(found.filter((d) => EXPLAINED[d.ruleId] === undefined)).toEqual([]);
    // The validator read every file: each shape gets at least the versionControlProvenance note.
    for (const [name, diagnostics] of Object.entries(byShape(found))) expect(diagnostics.map((d) => d.ruleId), name).toContain('SARIF2003');
  });

  it('the validator is real: a rule without help and a driver without informationUri are reported', { timeout: 120_000 }, () => {
    const log = shapes().findings as unknown as { runs: Array<{ tool: { driver: { informationUri?: string; rules: Array<{ help?: unknown; fullDescription?: unknown }> } } }> };
    delete log.runs[0]!.tool.driver.rules[0]!.help;
    delete log.runs[0]!.tool.driver.rules[0]!.fullDescription;
    delete log.runs[0]!.tool.driver.informationUri;
    const bad = path.join(root, 'doctored.sarif');
    writeFileSync(bad, JSON.stringify(log));
    expect(validateWith(binary, [bad], 'Gh').map((d) => `${d.ruleId} ${d.level}`)).toEqual(['GH2012 error', 'GH2012 error']);
    expect(validateWith(binary, [bad], 'Sarif').filter((d) => d.level === 'warning').map((d) => d.ruleId)).toEqual(['SARIF2005']);
  });
});
