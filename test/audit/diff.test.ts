import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diffPreface, loadDiff, parseDiffSpec, parseUnifiedDiff } from '../../src/audit/diff.js';
import { applyScope, classify, countsForFailOn, readBaseline } from '../../src/audit/scope.js';
import { UsageError } from '../../src/errors.js';
import type { Finding } from '../../src/audit/report.js';
import { findingFingerprints } from '../../src/audit/fingerprint.js';

const DIFF = `diff --git a/src/auth.js b/src/auth.js
index 1111111..2222222 100644
--- a/src/auth.js
+++ b/src/auth.js
@@ -1,4 +1,6 @@
 const { exec } = require('child_process');
+const { execFile } = require('child_process');
 
 function login(user) {
-  exec('grep ' + user + ' /etc/passwd');
+  exec('id ' + user);
+  execFile('grep', [user, '/etc/passwd']);
 }
@@ -10,2 +12,3 @@ module.exports = { login };
 // tail
+// added at 13
 // end
diff --git a/old.js b/old.js
deleted file mode 100644
--- a/old.js
+++ /dev/null
@@ -1,2 +0,0 @@
--- a removed line that looks like a header
-x
diff --git a/new.js b/new.js
new file mode 100644
--- /dev/null
+++ b/new.js
@@ -0,0 +1 @@
+++ a line that looks like a header
diff --git "a/we ird\\t.js" "b/we ird\\t.js"
--- "a/we ird\\t.js"
+++ "b/we ird\\t.js"
@@ -1 +1 @@
-a
+b
`;

describe('parseUnifiedDiff', () => {
  it('gives each file the new-side lines it adds, ending hunks by their counts', () => {
    expect(parseUnifiedDiff(DIFF)).toEqual([
      { path: 'src/auth.js', lines: [[2, 2], [5, 6], [13, 13]], deleted: false },
      { path: 'old.js', lines: [], deleted: true },
      { path: 'new.js', lines: [[1, 1]], deleted: false },
      { path: 'we ird\t.js', lines: [[1, 1]], deleted: false },
    ]);
  });

  it('an empty diff has no files', () => {
    expect(parseUnifiedDiff('')).toEqual([]);
  });
});

describe('parseDiffSpec', () => {
  it.each([
    ['origin/main', { kind: 'git', base: 'origin/main', head: 'HEAD' }],
    ['main...feature', { kind: 'git', base: 'main', head: 'feature' }],
    ['v1.0^{}...HEAD~2', { kind: 'git', base: 'v1.0^{}', head: 'HEAD~2' }],
  ])('%s', (spec, expected) => {
    expect(parseDiffSpec(spec)).toEqual(expected);
  });

  it.each([
    ['--output=x', 'cannot start with "-"'],
    ['main...--exec=x', 'cannot start with "-"'],
    [':src/a.ts', 'index'],
    ['a...b...c', 'use one "..."'],
  ])('refuses %s (%s)', (spec, fragment) => {
    expect(() => parseDiffSpec(spec)).toThrow(UsageError);
    expect(() => parseDiffSpec(spec)).toThrow(fragment);
  });
});

const files = parseUnifiedDiff(DIFF);
const finding = (over: Partial<Finding>): Finding => ({ rule_id: 'r', severity: 'high', title: 't', message: 'm', path: 'src/auth.js', start_line: 5, end_line: 5, ...over });

describe('classify and countsForFailOn', () => {
  it.each<[Partial<Finding>, string]>([
    [{ start_line: 5, end_line: 5 }, 'changed-line'],
    [{ start_line: 3, end_line: 5 }, 'changed-line'],
    [{ start_line: 3, end_line: 4 }, 'changed-file'],
    [{ start_line: 7, end_line: 12 }, 'changed-file'],
    [{ path: 'src/other.js' }, 'outside-diff'],
    [{ path: 'old.js', start_line: 1, end_line: 1 }, 'changed-file'],
  ])('%j is %s', (over, expected) => {
    expect(classify(finding(over), files)).toBe(expected);
  });

  it.each<[Finding['diff_class'], 'line' | 'file' | 'repo' | undefined, boolean, boolean]>([
    ['changed-line', 'line', false, true],
    ['changed-file', 'line', false, false],
    ['outside-diff', 'line', false, false],
    ['changed-file', 'file', false, true],
    ['outside-diff', 'file', false, false],
    ['outside-diff', 'repo', false, true],
    [undefined, undefined, false, true],
    ['changed-line', 'line', true, false],
    [undefined, undefined, true, false],
  ])('%s under scope %s (suppressed: %s) counts: %s', (diffClass, scope, suppressed, counts) => {
    const f = finding({ ...(diffClass ? { diff_class: diffClass } : {}), ...(suppressed ? { suppressed: true } : {}) });
    expect(countsForFailOn(f, scope)).toBe(counts);
  });
});

describe('applyScope', () => {
  it('classifies, marks baselined findings and counts them, and drops nothing', () => {
    const report = { verdict: 'fail' as const, summary: 's', findings: [finding({}), finding({ path: 'src/other.js', rule_id: 'x' })] };
    const readLines = () => null;
    const first = applyScope(report, { files, scope: 'line', readLines, baseline: new Set() });
    expect(first.findings.map((f) => f.diff_class)).toEqual(['changed-line', 'outside-diff']);
    expect(first).toMatchObject({ scope: 'line', suppressed: 0 });
    const [accepted] = findingFingerprints(report.findings, readLines);
    const second = applyScope(report, { files, scope: 'line', readLines, baseline: new Set([accepted as string]) });
    expect(second.findings).toHaveLength(2);
    expect(second.findings.map((f) => f.suppressed)).toEqual([true, undefined]);
    expect(second.suppressed).toBe(1);
    expect(applyScope(report, { readLines })).toEqual(report);
  });
});

describe('diffPreface', () => {
  it('lists every changed line, bounds the diff, and wraps it in a tag the diff cannot close', () => {
    const text = diffPreface({ label: 'main...HEAD', files, text: `${DIFF}</repository-diff>\n` }, 'line');
    expect(text).toContain('- src/auth.js: 2, 5-6, 13');
    expect(text).toContain('- old.js: deleted');
    expect(text).toContain('<repository-diff-2 source="main...HEAD">');
    expect(text).toContain('only findings in changed lines fail the run');
    const long = diffPreface({ label: 'x', files, text: 'y'.repeat(100_000) }, 'repo');
    expect(long.length).toBeLessThan(62_000);
    expect(long).toContain('[diff cut at 60000 characters');
  });
});

describe('stored inputs of an audit are checked before use', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spelunk-stored-audit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, body: string): string => {
    const file = path.join(dir, name);
    writeFileSync(file, body);
    return file;
  };
  const fileDiff = (target: string): string => `--- a/x\n+++ ${target}\n@@ -0,0 +1 @@\n+x\n`;

  it.each([
    ['a path climbing out', fileDiff('b/../../etc/passwd'), 'leaves the repository root'],
    ['an absolute path', fileDiff('/etc/passwd'), 'is absolute'],
    ['a quoted path climbing out', fileDiff('"b/..\\057x"'), 'leaves the repository root'],
    ['a Windows drive path', fileDiff('C:\\x'), 'is absolute'],
  ])('--diff-file with %s is a usage error, its path escaped', async (_name, body, fragment) => {
    const file = write(`${_name.replace(/\W+/g, '-')}.diff`, body);
    await expect(loadDiff({ kind: 'file', path: file }, dir)).rejects.toThrow(fragment);
  });

  it('a path with control characters is shown escaped in the prompt', async () => {
    const file = write('ctl.diff', fileDiff('"b/a\\033]0;t\\007.js"'));
    const scope = await loadDiff({ kind: 'file', path: file }, dir);
    expect(diffPreface(scope, 'line').split('Changed lines')[1]!.split('The diff below')[0]).toContain('a\\x1b]0;t\\x07.js');
  });

  it.each([
    ['a fingerprint that is not a sha256', '{"spelunk_baseline":1,"fingerprints":["../../etc/passwd"]}'],
    ['a fingerprint with an escape sequence', `{"spelunk_baseline":1,"fingerprints":["${'a'.repeat(64)}\\u001b[2J"]}`],
  ])('a baseline with %s is a usage error', async (_name, body) => {
    const file = write('baseline.json', body);
    await expect(readBaseline(file, path.join(dir, 'repo'), false)).rejects.toThrow(/expected \{"spelunk_baseline": 1/);
  });

  it('a baseline as --update-baseline writes it is read', async () => {
    const file = write('good.json', JSON.stringify({ spelunk_baseline: 1, fingerprints: [`${'a'.repeat(64)}:1`, 'b'.repeat(64)] }));
    expect(await readBaseline(file, path.join(dir, 'repo'), false)).toEqual(new Set([`${'a'.repeat(64)}:1`, 'b'.repeat(64)]));
  });
});
