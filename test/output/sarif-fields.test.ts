import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Finding } from '../../src/audit/report.js';
import { sarifCategory, sarifProvenance, toSarif } from '../../src/output/sarif.js';

// The survivors of the 2026-11-26 Stryker run on output/sarif.ts: fields a result carries only sometimes, the root's
// URI, a path with directories, and the category slug at its length limit.

const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'spelunk-sarif-fields-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const finding = (over: Partial<Finding>): Finding => ({
  rule_id: 'shell-injection',
  severity: 'high',
  title: 'exec',
  message: 'm',
  path: 'app.js',
  start_line: 1,
  end_line: 1,
  ...over,
});

function run(findings: Finding[], automationId?: string) {
  const input = { report: { verdict: 'fail' as const, summary: 's', findings }, root, toolVersion: '1', readLines: () => null };
  return toSarif(automationId === undefined ? input : { ...input, automationId }).runs[0]!;
}

describe('toSarif fields', () => {
  it('a finding in the --baseline is marked suppressed (external); one that is not, or false, carries no suppressions', () => {
    const [accepted, fresh, explicit] = run([finding({ suppressed: true }), finding({}), finding({ suppressed: false })]).results;
    expect(accepted!.suppressions).toEqual([{ kind: 'external', justification: 'accepted in the --baseline file' }]);
    expect('suppressions' in fresh!).toBe(false);
    expect('suppressions' in explicit!).toBe(false);
  });

  it('a finding of a diff review carries its diff_class; others have none', () => {
    const [changed, plain] = run([finding({ diff_class: 'changed-line' }), finding({})]).results;
    expect(changed!.properties).toEqual({ severity: 'high', title: 'exec', diff_class: 'changed-line' });
    expect(plain!.properties).toEqual({ severity: 'high', title: 'exec' });
  });

  it('without an automation id the run has no automationDetails at all', () => {
    expect('automationDetails' in run([])).toBe(false);
    expect(run([], 'spelunk/q/').automationDetails).toEqual({ id: 'spelunk/q/' });
  });

  it('%SRCROOT% names no path: consumers resolve it to their checkout', () => {
    expect(Object.keys(run([]).originalUriBaseIds)).toEqual(['%SRCROOT%']);
    expect(run([]).originalUriBaseIds['%SRCROOT%']).not.toHaveProperty('uri');
  });

  it('a path with directories keeps its "/" separators and encodes each segment', () => {
    const [result] = run([finding({ path: 'lib/sub dir/x y#1.js' })]).results;
    expect(result!.locations[0]!.physicalLocation.artifactLocation).toEqual({ uri: 'lib/sub%20dir/x%20y%231.js', uriBaseId: '%SRCROOT%' });
  });
});

describe('sarifCategory at the edges', () => {
  it('a run of spaces and punctuation between words is one "-"', () => {
    expect(sarifCategory('a  b, -- c', null)).toBe('spelunk/a-b-c/');
  });

  it('a slug of exactly 60 characters is kept whole, without a hash', () => {
    const question = `${'a'.repeat(30)} ${'b'.repeat(29)}`;
    expect(sarifCategory(question, null)).toBe(`spelunk/${'a'.repeat(30)}-${'b'.repeat(29)}/`);
  });

  it('a cut that ends on a "-" drops it before the hash', () => {
    const category = sarifCategory(`${'a'.repeat(59)} ${'b'.repeat(10)}`, null);
    expect(category).toMatch(new RegExp(`^spelunk/${'a'.repeat(59)}-[0-9a-f]{8}/$`));
  });
});

describe('versionControlProvenance from the CI environment', () => {
  const SHA = 'a'.repeat(40);
  it.each<[string, Record<string, string>, string | null, object | undefined]>([
    ['GitHub Actions on a pull request: the head branch', { GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'o/r', GITHUB_HEAD_REF: 'feature', GITHUB_REF_NAME: '7/merge' }, SHA, { repositoryUri: 'https://github.com/o/r', revisionId: SHA, branch: 'feature', mappedTo: { uriBaseId: '%SRCROOT%' } }],
    ['GitHub Actions on a push', { GITHUB_SERVER_URL: 'https://ghe.example.net/', GITHUB_REPOSITORY: 'o/r', GITHUB_HEAD_REF: '', GITHUB_REF_NAME: 'main' }, SHA, { repositoryUri: 'https://ghe.example.net/o/r', revisionId: SHA, branch: 'main', mappedTo: { uriBaseId: '%SRCROOT%' } }],
    ['GitLab CI', { CI_PROJECT_URL: 'https://gitlab.com/g/p', CI_COMMIT_REF_NAME: 'dev' }, SHA, { repositoryUri: 'https://gitlab.com/g/p', revisionId: SHA, branch: 'dev', mappedTo: { uriBaseId: '%SRCROOT%' } }],
    ['no CI: none (a git remote is not read)', {}, SHA, undefined],
    ['no commit: none', { GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'o/r' }, null, undefined],
    ['an address with credentials: none', { CI_PROJECT_URL: 'https://user:token@gitlab.com/g/p' }, SHA, undefined],
  ])('%s', (_name, env, commit, expected) => {
    expect(sarifProvenance(env, commit)).toEqual(expected);
  });

  it('the log carries it when given, and a rule\'s short description does not depend on which finding came first', () => {
    const a = toSarif({ report: { verdict: 'fail', summary: 's', findings: [finding({ title: 'one' })] }, root: '/r', toolVersion: '0', readLines: () => null, provenance: sarifProvenance({ CI_PROJECT_URL: 'https://gitlab.com/g/p' }, 'b'.repeat(40)) });
    const b = toSarif({ report: { verdict: 'fail', summary: 's', findings: [finding({ title: 'another' })] }, root: '/r', toolVersion: '0', readLines: () => null });
    expect(a.runs[0]!.versionControlProvenance).toEqual([{ repositoryUri: 'https://gitlab.com/g/p', revisionId: 'b'.repeat(40), mappedTo: { uriBaseId: '%SRCROOT%' } }]);
    expect('versionControlProvenance' in b.runs[0]!).toBe(false);
    expect(a.runs[0]!.tool.driver.rules[0]).toEqual(b.runs[0]!.tool.driver.rules[0]);
  });
});

describe('a rule reads the same in every upload of an audit (issue 35): its text depends on its id and the question only', () => {
  const rule = (findings: Finding[]) => {
    const log = toSarif({ report: { verdict: 'fail', summary: 's', findings }, root: '/r', toolVersion: '0', readLines: () => null, question: 'is the login safe?' });
    return log.runs[0]!.tool.driver.rules.find((r) => r.id === 'shell-injection')!;
  };
  const text = (r: ReturnType<typeof rule>) => ({ short: r.shortDescription, full: r.fullDescription, help: r.help, name: r.name });
  const critical = finding({ title: 'Critical **exec**', severity: 'critical', category: 'security', start_line: 4 });
  const low = finding({ title: 'minor <b>exec</b>', severity: 'low', category: 'correctness', start_line: 9 });
  const medium = finding({ title: 'another title', severity: 'medium', start_line: 12 });
  const first = rule([critical, low, medium]);

  it.each<[string, Finding[]]>([
    ['the same findings in another order', [medium, low, critical]],
    ['the critical one fixed (the most severe is now medium)', [low, medium]],
    ['only a finding of another category', [low]],
    ['one finding with a title of its own', [finding({ title: 'Shell built from input', severity: 'high' })]],
  ])('%s: short and full description, help and name unchanged', (_name, findings) => {
    expect(text(rule(findings))).toEqual(text(first));
  });

  it('what does follow the findings is where GitHub reads it: the level, the score and the tags', () => {
    expect(first.defaultConfiguration.level).toBe('error');
    expect(first.properties).toEqual({ 'security-severity': '9.5', tags: ['correctness', 'security'] });
    const later = rule([low, medium]);
    expect(later.defaultConfiguration.level).toBe('warning');
    expect(later.properties).toEqual({ tags: ['correctness'] });
    expect(JSON.stringify(text(first))).not.toMatch(/Critical|exec\*|<b>|another title|critical|security/);
  });
});
