// Decides whether the audit can run: it needs ANTHROPIC_API_KEY, which GitHub withholds from pull requests from forks
// and from Dependabot's (Dependabot has secrets of its own). Without it the action ends with a notice and the job
// passes (on-missing-key: skip, the default), or fails with one line saying why (on-missing-key: fail).
// Usage: node key.mjs   (env: ANTHROPIC_API_KEY, INPUT_ON_MISSING_KEY, GITHUB_ACTOR, GITHUB_EVENT_PATH, GITHUB_OUTPUT)
import { readFileSync } from 'node:fs';
import { setOutputs } from './github.mjs';

const MODES = ['skip', 'fail'];
const CLOUD_SWITCHES = ['CLAUDE_CODE_USE_BEDROCK', 'CLAUDE_CODE_USE_VERTEX', 'CLAUDE_CODE_USE_FOUNDRY'];

/** Whether to run, and the line to print when not. Throws with one line on a bad input. */
export function keyPlan(env) {
  const mode = env.INPUT_ON_MISSING_KEY?.trim() || 'skip';
  if (!MODES.includes(mode)) throw new Error(`on-missing-key must be skip or fail (got "${mode}")`);
  if (env.ANTHROPIC_API_KEY?.trim()) return { run: true };
  // Claude on a cloud (a CLAUDE_CODE_USE_* switch in the job's env) needs no Anthropic key: the cloud's credentials decide.
  if (CLOUD_SWITCHES.some((name) => /^(1|true|yes|on)$/i.test(env[name]?.trim() ?? ''))) return { run: true };
  const why = `no ANTHROPIC_API_KEY: ${origin(env)}`;
  if (mode === 'fail') return { run: false, level: 'error', line: `spelunk: ${why}; the audit cannot run (on-missing-key: fail)` };
  return { run: false, level: 'notice', line: `spelunk: ${why}; the audit is skipped and the job passes (on-missing-key: skip)` };
}

/** Why the key is missing, as far as the event says. */
function origin(env) {
  if (/^dependabot\[bot\]$/.test(env.GITHUB_ACTOR ?? '')) return 'Dependabot\'s pull requests get only Dependabot secrets (add ANTHROPIC_API_KEY under Settings → Secrets and variables → Dependabot)';
  const pr = readEvent(env.GITHUB_EVENT_PATH)?.pull_request;
  const head = pr?.head?.repo?.full_name;
  if (pr && head && head !== pr.base?.repo?.full_name) return `GitHub withholds secrets from pull requests from forks (this one is from ${head})`;
  return 'the anthropic-api-key input is empty (pass ${{ secrets.ANTHROPIC_API_KEY }}, and check that the secret exists)';
}

function readEvent(file) {
  try {
    return file ? JSON.parse(readFileSync(file, 'utf8')) : null;
  } catch {
    return null;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    const plan = keyPlan(process.env);
    setOutputs(process.env, { run: plan.run, skipped: !plan.run && plan.level === 'notice' });
    if (!plan.run) process.stdout.write(`::${plan.level}::${plan.line}\n`);
    if (plan.level === 'error') process.exitCode = 1;
  } catch (error) {
    process.stdout.write(`::error::spelunk-action: ${error.message}\n`);
    process.exitCode = 1;
  }
}
