// Runs `spelunk audit` for the GitHub Action (action.yml) and records what happened as step outputs. The inputs come
// in environment variables (INPUT_*), never pasted into a shell: a question is data. spelunk is started with an argv,
// without a shell, in the kernel sandbox (--sandbox required). The step itself succeeds whatever the verdict, so the
// SARIF upload and the review can follow; the action's last step turns the exit code into the job's result.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { need, oneLine, pullRequest, setOutputs } from './github.mjs';

const SEVERITIES = ['low', 'medium', 'high', 'critical'];
const SANDBOX_MODES = ['required', 'auto'];

/** The spelunk argv for these inputs, and where its files go. Throws with one line on a bad input. */
export function auditPlan(env) {
  const question = need(env, 'INPUT_QUESTION');
  // spelunk takes the question as a positional word; one that starts with "-" would be read as a flag.
  if (question.startsWith('-')) throw new Error('question must not start with "-"');
  const failOn = env.INPUT_FAIL_ON?.trim() || 'high';
  if (!SEVERITIES.includes(failOn)) throw new Error(`fail-on must be one of ${SEVERITIES.join(', ')} (got "${failOn}")`);
  const sandbox = env.INPUT_SANDBOX?.trim() || 'required';
  if (!SANDBOX_MODES.includes(sandbox)) throw new Error(`sandbox must be required or auto (got "${sandbox}")`);
  const pr = pullRequest(env);
  const base = env.INPUT_DIFF_BASE?.trim() || (pr?.baseRef ? `origin/${pr.baseRef}` : '');
  const temp = env.RUNNER_TEMP || '/tmp';
  // One set of files per question, so several audits in one job do not overwrite each other.
  const id = createHash('sha256').update(question).digest('hex').slice(0, 12);
  const files = {
    sarif: path.join(temp, `spelunk-${id}.sarif`),
    review: path.join(temp, `spelunk-${id}.review.json`),
    result: path.join(temp, `spelunk-${id}.result.json`),
  };
  const review = base !== '' && pr !== null && env.INPUT_POST_REVIEW?.trim() !== 'false';
  const previous = env.SPELUNK_PREVIOUS_REVIEW?.trim();
  const args = [
    'audit',
    '-C', env.INPUT_WORKING_DIRECTORY?.trim() || '.',
    '--sandbox', sandbox,
    '--fail-on', failOn,
    '--output-format', 'json',
    '--timeout', env.INPUT_TIMEOUT?.trim() || '900',
    '--sarif', files.sarif,
    ...(env.INPUT_SARIF_CATEGORY?.trim() ? ['--sarif-category', env.INPUT_SARIF_CATEGORY.trim()] : []),
    ...(env.INPUT_MAX_BUDGET_USD?.trim() ? ['--max-budget-usd', env.INPUT_MAX_BUDGET_USD.trim()] : []),
    ...(env.INPUT_MODEL?.trim() ? ['--model', env.INPUT_MODEL.trim()] : []),
    ...(base !== '' ? ['--diff', `${base}...HEAD`] : []),
    ...(review ? ['--review-output', files.review] : []),
    ...(review && previous ? ['--previous-review', previous] : []),
    question,
  ];
  return { args, files };
}

/**
 * upload-sarif's `ref` and `sha`, both or neither: the commit spelunk analysed (on a pull request the checked-out head,
 * `refs/pull/N/head`; upload-sarif would otherwise name the merge commit, which the review's lines do not match).
 */
export function sarifTarget(env, commit) {
  const pr = pullRequest(env);
  const ref = pr === null ? (env.GITHUB_REF?.trim() ?? '') : `refs/pull/${pr.number}/head`;
  const known = /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(commit ?? '') && ref !== '';
  return { 'sarif-ref': known ? ref : '', 'sarif-sha': known ? commit : '' };
}

/** spelunk's environment: the runner's, without the workflow token and the action's inputs (spelunk needs neither). */
function childEnv(env) {
  return Object.fromEntries(Object.entries(env).filter(([name]) => name !== 'GITHUB_TOKEN' && !name.startsWith('INPUT_')));
}

function main(env) {
  const { args, files } = auditPlan(env);
  const bin = env.SPELUNK_BIN?.trim() || path.join(need(env, 'GITHUB_ACTION_PATH'), 'dist', 'spelunk.js');
  const out = openSync(files.result, 'w');
  let run;
  try {
    run = spawnSync(process.execPath, [bin, ...args], { stdio: ['ignore', out, 'inherit'], env: childEnv(env) });
  } finally {
    closeSync(out);
  }
  const code = run.status ?? 1;
  let result = null;
  try {
    result = JSON.parse(readFileSync(files.result, 'utf8'));
  } catch {
    // A usage error prints one line on stderr and no result; the exit code says the rest.
  }
  const sarif = existsSync(files.sarif) ? files.sarif : '';
  const category = sarif === '' ? '' : (JSON.parse(readFileSync(sarif, 'utf8')).runs?.[0]?.automationDetails?.id ?? '');
  setOutputs(env, {
    'exit-code': code,
    verdict: result?.audit?.verdict ?? '',
    'sarif-file': sarif,
    category,
    'review-file': existsSync(files.review) ? files.review : '',
    'result-file': files.result,
  });
  setOutputs(env, sarifTarget(env, result?.repo?.git_commit));
  const summary = result?.audit?.summary ?? result?.error?.message ?? '';
  process.stderr.write(`spelunk-action: exit ${code}${result?.audit ? `, verdict ${result.audit.verdict}` : ''}${summary ? `: ${oneLine(summary).slice(0, 500)}` : ''}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    main(process.env);
  } catch (error) {
    process.stdout.write(`::error::spelunk-action: ${oneLine(error.message)}\n`);
    process.exitCode = 1;
  }
}
