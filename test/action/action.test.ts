import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateAction, validateWorkflow } from '@action-validator/core';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
// @ts-expect-error: a plain .mjs script of the action, without type declarations
import { auditPlan } from '../../scripts/action/audit.mjs';
// @ts-expect-error: likewise
import { decide } from '../../scripts/action/post-review.mjs';
// @ts-expect-error: likewise
import { keyPlan } from '../../scripts/action/key.mjs';
// @ts-expect-error: likewise
import { sarifTarget } from '../../scripts/action/audit.mjs';

/**
 * action.yml against SchemaStore's github-action schema, as embedded in @action-validator/core 0.6.0 (a dev
 * dependency, GPL-3.0, used only here: it validates `runs.using: composite` steps, inputs and outputs), the README's
 * workflow against the github-workflow schema, and the rules that keep inputs out of shell text.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const ACTION_TEXT = readFileSync(path.join(ROOT, 'action.yml'), 'utf8');
const ACTION = parse(ACTION_TEXT) as {
  inputs: Record<string, { default?: string; required?: boolean }>;
  runs: { steps: Array<{ name?: string; id?: string; if?: string; run?: string; env?: Record<string, string>; uses?: string; with?: Record<string, string>; 'continue-on-error'?: boolean }> };
};
const step = (name: string) => ACTION.runs.steps.find((s) => s.name === name || s.id === name || s.uses?.startsWith(name))!;

describe('action.yml', () => {
  it('is valid against SchemaStore\'s github-action schema', () => {
    expect(validateAction(ACTION_TEXT).errors).toEqual([]);
  });

  it('the schema check is real: a composite step without a shell, or a misspelt input key, is reported', () => {
    expect(validateAction(ACTION_TEXT.replace('      shell: bash\n      run: bash "$GITHUB_ACTION_PATH/scripts/action/setup-sandbox.sh"', '      run: bash x')).errors).not.toEqual([]);
    expect(validateAction(ACTION_TEXT.replace('    required: true\n  anthropic-api-key:', '    requird: true\n  anthropic-api-key:')).errors).not.toEqual([]);
  });

  it.each(ACTION.runs.steps.filter((s) => s.run !== undefined).map((s) => [s.name ?? '?', s.run!] as const))('step "%s": no ${{ }} expression in its shell text (inputs go through env)', (_name, run) => {
    expect(run).not.toContain('${{');
  });

  it('runs the audit with --sandbox required by default, uploads SARIF, and posts the review with the workflow token', () => {
    expect(ACTION.inputs.sandbox?.default).toBe('required');
    expect(ACTION.inputs['github-token']?.default).toBe('${{ github.token }}');
    const uses = ACTION.runs.steps.map((s) => s.uses).filter(Boolean);
    expect(uses).toContain('github/codeql-action/upload-sarif@v3');
    const scripts = ACTION.runs.steps.flatMap((s) => [...(s.run ?? '').matchAll(/\$GITHUB_ACTION_PATH\/(scripts\/action\/[\w.-]+)/g)].map((m) => m[1]!));
    expect(scripts.sort()).toEqual(['scripts/action/audit.mjs', 'scripts/action/fetch-comments.mjs', 'scripts/action/key.mjs', 'scripts/action/post-review.mjs', 'scripts/action/setup-sandbox.sh']);
    for (const script of scripts) expect(existsSync(path.join(ROOT, script)), script).toBe(true);
  });

  it('installs only the runtime dependency (prepare builds dist/ with what the build needs)', () => {
    expect(step('Install spelunk').run).toBe('npm ci --prefix "$GITHUB_ACTION_PATH" --omit=dev --no-audit --no-fund');
  });

  it('without a key nothing else runs: every step after the check is gated on it, the verdict on an exit code', () => {
    const [first, ...rest] = ACTION.runs.steps;
    expect(first?.id).toBe('key');
    expect(ACTION.inputs['on-missing-key']?.default).toBe('skip');
    for (const s of rest) expect(s.if, s.name ?? s.uses).toMatch(/steps\.key\.outputs\.run == 'true'|steps\.upload\.outcome == 'failure'|steps\.audit\.outputs\.exit-code != ''/);
  });

  it('upload-sarif: the checked-out commit (ref and sha), and a missing code-scanning feature is a warning, not a red job', () => {
    const upload = step('github/codeql-action/upload-sarif');
    expect(upload.with).toMatchObject({ ref: '${{ steps.audit.outputs.sarif-ref }}', sha: '${{ steps.audit.outputs.sarif-sha }}' });
    expect(upload['continue-on-error']).toBe(true);
    expect(upload.id).toBe('upload');
    expect(step('Say that the SARIF upload failed').run).toMatch(/^echo "::warning::/);
  });

  it('every input reaches a step', () => {
    const used = ACTION_TEXT.split('\nruns:')[1]!;
    for (const name of Object.keys(ACTION.inputs)) expect(used, name).toContain(`inputs.${name}`);
  });
});

describe('the workflow in docs/ci.md that uses the action', () => {
  const ci = readFileSync(path.join(ROOT, 'docs', 'ci.md'), 'utf8');
  const section = ci.slice(ci.indexOf('## The spelunk GitHub Action'));
  const workflow = /```yaml\n([\s\S]*?)```/.exec(section)?.[1] ?? '';

  it('is valid against SchemaStore\'s github-workflow schema and uses this action with the inputs it declares', () => {
    expect(workflow).toContain('uses: your-org/spelunk@');
    expect(validateWorkflow(workflow).errors).toEqual([]);
    const parsed = parse(workflow) as { jobs: Record<string, { steps: Array<{ uses?: string; with?: Record<string, unknown> }> }> };
    const step = Object.values(parsed.jobs).flatMap((j) => j.steps).find((s) => s.uses?.startsWith('your-org/spelunk@'));
    for (const key of Object.keys(step?.with ?? {})) expect(Object.keys(ACTION.inputs), key).toContain(key);
    for (const [key, input] of Object.entries(ACTION.inputs)) if (input.required) expect(Object.keys(step?.with ?? {}), key).toContain(key);
  });
});

describe('every workflow in docs/ci.md', () => {
  const ci = readFileSync(path.join(ROOT, 'docs', 'ci.md'), 'utf8');
  const workflows = [...ci.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((y) => /^jobs:/m.test(y));

  it('is valid against SchemaStore\'s github-workflow schema (the recipes, the action, the matrix over repositories)', () => {
    expect(workflows.length).toBeGreaterThanOrEqual(3);
    for (const workflow of workflows) expect(validateWorkflow(workflow).errors, workflow.split('\n')[0]).toEqual([]);
  });

  it('the matrix over repositories gives each repository and question its own category', () => {
    const sweep = workflows.find((w) => w.includes('matrix.repo'));
    expect(sweep).toContain('CATEGORY: spelunk/${{ matrix.repo }}/${{ matrix.check.id }}/');
    expect(sweep).toContain('--sarif-category "$CATEGORY"');
  });
});

describe('audit.mjs: inputs → spelunk argv', () => {
  const PR_EVENT = path.join(ROOT, 'test', 'action', 'pr-event.json');
  const base = { INPUT_QUESTION: 'Is input validated?', RUNNER_TEMP: '/tmp/rt', GITHUB_EVENT_PATH: PR_EVENT };

  it('on a pull request: the base branch, the sandbox required, SARIF and the review with the earlier comments', () => {
    const { args, files } = auditPlan({ ...base, SPELUNK_PREVIOUS_REVIEW: '/tmp/rt/prev.json' });
    expect(args).toEqual([
      'audit', '-C', '.', '--sandbox', 'required', '--fail-on', 'high', '--output-format', 'json', '--timeout', '900',
      '--sarif', files.sarif, '--diff', 'origin/main...HEAD', '--review-output', files.review, '--previous-review', '/tmp/rt/prev.json',
      'Is input validated?',
    ]);
    expect(files.sarif).toMatch(/^\/tmp\/rt\/spelunk-[0-9a-f]{12}\.sarif$/);
    expect(auditPlan({ ...base, INPUT_QUESTION: 'another question' }).files.sarif).not.toBe(files.sarif);
  });

  it.each<[string, Record<string, string>, string[], string[]]>([
    ['outside a pull request: the whole repository, no review', { GITHUB_EVENT_PATH: '' }, ['--sarif'], ['--diff', '--review-output']],
    ['an explicit base', { INPUT_DIFF_BASE: 'origin/release' }, ['origin/release...HEAD'], []],
    ['post-review false: no review', { INPUT_POST_REVIEW: 'false' }, ['--diff'], ['--review-output', '--previous-review']],
    ['budget, model, category, directory', { INPUT_MAX_BUDGET_USD: '1.5', INPUT_MODEL: 'claude-x', INPUT_SARIF_CATEGORY: 'sec/', INPUT_WORKING_DIRECTORY: 'code' }, ['--max-budget-usd', '1.5', '--model', 'claude-x', '--sarif-category', 'sec/', 'code'], []],
    ['sandbox auto', { INPUT_SANDBOX: 'auto' }, ['auto'], ['required']],
  ])('%s', (_name, env, present, absent) => {
    const { args } = auditPlan({ ...base, ...env });
    for (const arg of present) expect(args).toContain(arg);
    for (const arg of absent) expect(args).not.toContain(arg);
  });

  it.each<[Record<string, string>, string]>([
    [{ INPUT_QUESTION: '' }, 'INPUT_QUESTION is not set'],
    [{ INPUT_QUESTION: '--sarif=/etc/x' }, 'must not start with "-"'],
    [{ INPUT_FAIL_ON: 'severe' }, 'fail-on must be one of'],
    [{ INPUT_SANDBOX: 'off' }, 'sandbox must be required or auto'],
  ])('%j is refused', (env, fragment) => {
    expect(() => auditPlan({ ...base, ...env })).toThrow(fragment);
  });
});

describe('post-review.mjs: post when the state changes, dismiss when it passes', () => {
  const pr = { number: 7, headSha: 'a'.repeat(40), baseRef: 'main' };
  const body = (category: string, verdict = 'fail', event = 'REQUEST_CHANGES') => `summary\n<!-- spelunk:review category=${category} verdict=${verdict} event=${event} -->`;
  const earlier = (id: number, b: string, state = 'COMMENTED') => ({ id, body: b, state });
  const failing = { body: body('spelunk/q/'), event: 'REQUEST_CHANGES' };
  const passing = { body: body('spelunk/q/', 'pass', 'COMMENT'), event: 'COMMENT' };
  const review = (over: object) => ({ commit_id: 'a'.repeat(40), comments: [], ...failing, ...over });

  it.each<[string, 'post' | 'skip', object, object[], string, number[]]>([
    ['the first review of this question', 'post', {}, [], '', []],
    ['new inline comments', 'post', { comments: [{ path: 'a', line: 1, side: 'RIGHT', body: 'b' }] }, [earlier(1, body('spelunk/q/'), 'CHANGES_REQUESTED')], '', []],
    ['the same fail again, nothing new', 'skip', {}, [earlier(1, 'LGTM'), earlier(2, body('spelunk/q/'), 'CHANGES_REQUESTED')], 'nothing new', []],
    ['another question\'s summary does not count', 'post', {}, [earlier(1, body('spelunk/other/'))], '', []],
    ['a summary of the old form (no verdict) is not the same state', 'post', {}, [earlier(1, 'summary\n<!-- spelunk:review category=spelunk/q/ -->')], '', []],
    ['fail, then pass: posted, and the changes-requested review dismissed', 'post', passing, [earlier(1, body('spelunk/q/'), 'CHANGES_REQUESTED')], '', [1]],
    ['pass after pass: nothing posted, a leftover changes-requested review still dismissed', 'skip', passing, [earlier(1, body('spelunk/q/'), 'CHANGES_REQUESTED'), earlier(2, body('spelunk/q/', 'pass', 'COMMENT'))], 'nothing new', [1]],
    ['a pass dismisses only this category\'s reviews, and only changes-requested ones', 'post', passing, [earlier(1, body('spelunk/other/'), 'CHANGES_REQUESTED'), earlier(2, body('spelunk/q/'), 'DISMISSED')], '', []],
    ['the latest summary decides: fail, pass, then fail again posts', 'post', {}, [earlier(1, body('spelunk/q/'), 'DISMISSED'), earlier(2, body('spelunk/q/', 'pass', 'COMMENT'))], '', []],
    ['the same verdict under another event (fail-on changed) posts', 'post', { body: body('spelunk/q/', 'fail', 'COMMENT'), event: 'COMMENT' }, [earlier(1, body('spelunk/q/'), 'CHANGES_REQUESTED')], '', [1]],
    ['a review for another commit than the PR head', 'skip', { commit_id: 'b'.repeat(40) }, [], 'check out the head', []],
  ])('%s', (_name, action, over, reviews, why, dismissed) => {
    const decision = decide(review(over), pr, reviews) as { post?: object; skip?: string; dismiss: number[] };
    expect(action in decision).toBe(true);
    if (why) expect(decision.skip).toContain(why);
    expect(decision.dismiss).toEqual(dismissed);
  });
});

describe('key.mjs: a pull request without the key (a fork, Dependabot) ends with a notice, or fails when asked', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spelunk-key-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const event = (head: string) => {
    const file = path.join(dir, `${head.replace('/', '_')}.json`);
    writeFileSync(file, JSON.stringify({ pull_request: { number: 1, head: { repo: { full_name: head } }, base: { repo: { full_name: 'o/r' } } } }));
    return file;
  };

  it.each<[string, Record<string, string>, object]>([
    ['a key: run', { ANTHROPIC_API_KEY: 'sk-ant-x' }, { run: true }],
    ['a fork\'s pull request: skip with a notice naming the fork', { GITHUB_EVENT_PATH: event('someone/r') }, { run: false, level: 'notice', line: expect.stringMatching(/forks \(this one is from someone\/r\); the audit is skipped and the job passes/) }],
    ['Dependabot: skip, saying where its secrets go', { GITHUB_ACTOR: 'dependabot[bot]', GITHUB_EVENT_PATH: event('o/r') }, { run: false, level: 'notice', line: expect.stringContaining('Secrets and variables → Dependabot') }],
    ['the repository\'s own pull request without the secret: skip, saying to pass it', { GITHUB_EVENT_PATH: event('o/r') }, { run: false, level: 'notice', line: expect.stringContaining('the anthropic-api-key input is empty') }],
    ['on-missing-key fail: an error', { INPUT_ON_MISSING_KEY: 'fail', GITHUB_EVENT_PATH: event('someone/r') }, { run: false, level: 'error', line: expect.stringContaining('cannot run (on-missing-key: fail)') }],
    ['a blank key is no key', { ANTHROPIC_API_KEY: '  ' }, { run: false, level: 'notice' }],
    ['Claude on Bedrock (CLAUDE_CODE_USE_BEDROCK=1 in the job): run without an Anthropic key', { CLAUDE_CODE_USE_BEDROCK: '1', GITHUB_EVENT_PATH: event('o/r') }, { run: true }],
    ['Claude on Vertex AI (CLAUDE_CODE_USE_VERTEX=true): run', { CLAUDE_CODE_USE_VERTEX: 'true' }, { run: true }],
    ['a switch that is off is no provider', { CLAUDE_CODE_USE_BEDROCK: '0', GITHUB_EVENT_PATH: event('o/r') }, { run: false, level: 'notice' }],
  ])('%s', (_name, env, plan) => {
    expect(keyPlan(env)).toMatchObject(plan);
  });

  it('run as the action runs it: the notice on stdout, run=false and skipped=true in the step outputs, exit 0', () => {
    const outputs = path.join(dir, 'outputs.txt');
    const stdout = execFileSync(process.execPath, [path.join(ROOT, 'scripts/action/key.mjs')], { env: { PATH: '/usr/bin:/bin', GITHUB_OUTPUT: outputs, GITHUB_EVENT_PATH: event('someone/r'), ANTHROPIC_API_KEY: '' }, encoding: 'utf8' });
    expect(stdout).toMatch(/^::notice::spelunk: no ANTHROPIC_API_KEY: GitHub withholds secrets/);
    expect(readFileSync(outputs, 'utf8')).toBe('run=false\nskipped=true\n');
  });

  it('a bad on-missing-key is refused', () => {
    expect(() => keyPlan({ INPUT_ON_MISSING_KEY: 'ignore' })).toThrow('on-missing-key must be skip or fail');
  });
});

describe('audit.mjs: the commit the SARIF upload names', () => {
  const SHA = 'c'.repeat(40);
  const PR_EVENT = path.join(ROOT, 'test', 'action', 'pr-event.json');
  it.each<[string, Record<string, string>, string | null, object]>([
    ['a pull request: its head, refs/pull/N/head', { GITHUB_EVENT_PATH: PR_EVENT, GITHUB_REF: 'refs/pull/7/merge' }, SHA, { 'sarif-ref': expect.stringMatching(/^refs\/pull\/\d+\/head$/), 'sarif-sha': SHA }],
    ['a push: the pushed ref', { GITHUB_REF: 'refs/heads/main' }, SHA, { 'sarif-ref': 'refs/heads/main', 'sarif-sha': SHA }],
    ['no commit known: neither (upload-sarif takes both or none)', { GITHUB_REF: 'refs/heads/main' }, null, { 'sarif-ref': '', 'sarif-sha': '' }],
    ['no ref known (a local run): neither', {}, SHA, { 'sarif-ref': '', 'sarif-sha': '' }],
  ])('%s', (_name, env, commit, outputs) => {
    expect(sarifTarget(env, commit)).toEqual(outputs);
  });
});
