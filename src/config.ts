import path from 'node:path';
import { EFFORTS, effortProblem, effortToSend, isEffort, type Effort } from './agent/effort.js';
import { UsageError } from './errors.js';
import { escapeControls } from './escape.js';
import { resolveModelAlias } from './agent/model.js';
import { resolveBaseUrl, resolveCredential, resolveProvider } from './endpoint.js';
import type { ProviderSettings } from './agent/providers.js';
import type { Severity } from './audit/report.js';
import { parseDiffSpec, type DiffSource } from './audit/diff.js';
import { SCOPES, type Scope } from './audit/scope.js';
import { realRoot } from './roots.js';
import { sandboxMode } from './sandbox/choose.js';
import type { SandboxMode } from './sandbox/kernel.js';

export const DEFAULT_MODEL = 'claude-sonnet-5-5';
type OutputFormat = 'text' | 'json' | 'stream-json';
/** `--verify-citations`: skip the check, report bad citations, or also ask the model once to correct them. */
type VerifyCitations = 'off' | 'report' | 'fix';
const VERIFY_MODES: readonly VerifyCitations[] = ['off', 'report', 'fix'];

/** Everything a run needs, resolved once from flags and environment. */
export interface Config {
  root: string;
  model: string;
  maxTurns: number;
  maxTokens: number;
  depth: number;
  /** Cap on the map's lines; null: only `mapTokens` limits it. */
  maxEntries: number | null;
  /** The repository map's budget in estimated tokens (`--map-tokens`). */
  mapTokens: number;
  toolTimeoutMs: number;
  verbose: boolean;
  /** --include-partial-messages: stream-json also writes the API's streaming events. */
  includePartialMessages?: boolean;
  thinking: boolean;
  /** The effort sent with every request (--effort, else the mode's default); null: none is sent. */
  effort: Effort | null;
  showThinking: boolean;
  /** false from --no-color; undefined = decide from the stream and NO_COLOR/FORCE_COLOR. */
  color: boolean | undefined;
  debug: boolean;
  interactive: boolean;
  outputFormat: OutputFormat;
  maxBudgetUsd: number | null;
  timeoutMs: number | null;
  audit: AuditConfig | null;
  /** --quiet: nothing on stderr but errors. */
  quiet: boolean;
  /** Saved sessions: whether to save this one, and which to continue ('latest' for -c, an id or prefix, or null). */
  session: { persist: boolean; resume: string | null };
  /** `spelunk mcp`: the budgets of one tool call and of the whole server (null = none). */
  mcp: { perCallUsd: number | null; totalUsd: number | null; maxCalls: number; maxMemoryGib: number } | null;
  verifyCitations: VerifyCitations;
  /** `--sandbox` / SPELUNK_SANDBOX: whether children run in the kernel sandbox (chosen at start-up, see sandbox/choose.ts). */
  sandboxMode: SandboxMode;
  /** false from --no-render: raw markdown even on a terminal. */
  render: boolean;
  /** --hint: the first question of a conversation carries locate's top files (src/locate/hint.ts); off by default. */
  hint?: boolean;
  /** SPELUNK_EDITOR_URL: the hyperlink template for citations (`vscode://file/{abs}:{line}`); null = file:// URLs. */
  editorUrl: string | null;
  /** The credential's value: ANTHROPIC_API_KEY, else ANTHROPIC_AUTH_TOKEN (which `credential` then says). */
  apiKey: string;
  /** Absent or 'apiKey': ANTHROPIC_API_KEY; 'authToken': ANTHROPIC_AUTH_TOKEN (a gateway's or proxy's bearer token). */
  credential?: 'apiKey' | 'authToken';
  /** `spelunk mcp` without a credential: why its model tools cannot run (locate still can); apiKey is then ''. */
  missingCredential?: string;
  baseURL: string | undefined;
  /** `--provider` / CLAUDE_CODE_USE_*: the cloud that serves Claude and its settings; absent: Anthropic's API. */
  provider?: ProviderSettings;
  /**
   * One budget for every HEAD read of a run (the read-only proof's, 0.5 s each, and a resume's, 0.2 s), in place of
   * their defaults. Never set from flags or the environment: main's options only, which the in-process tests use so that
   * a loaded machine cannot turn a moved HEAD into an unknown one (a missing "HEAD moved" line). Absent: the defaults.
   */
  headTimeoutMs?: number;
  /** `--allow-secrets` (or SPELUNK_ALLOW_SECRETS=1): secrets reach the model and the outputs unredacted for this run. */
  allowSecrets?: boolean;
}

/** What `--sarif-on-error` may say: no file (`none`, the default) or a log that reports the failure. */
const SARIF_ON_ERROR = ['none', 'notification'] as const;
type SarifOnError = (typeof SARIF_ON_ERROR)[number];

/** The audit's settings: threshold, SARIF file and shape, the change it is scoped to and the operator's baseline. */
interface AuditConfig {
  failOn: Severity;
  sarif: string | null;
  /** --sarif-category as given; null = derived from the question (see sarifCategory). */
  sarifCategory: string | null;
  sarifOnError: SarifOnError;
  diff: DiffSource | null;
  /** Which findings count for --fail-on when there is a diff (default line). */
  scope: Scope;
  /** Absolute path of the baseline file, given by the operator; never looked up in the repository. */
  baseline: string | null;
  updateBaseline: boolean;
  /** --review-output: where the pull-request review body goes (needs a diff); absent or null: none. */
  reviewOutput?: string | null;
  /** --previous-review: the PR's existing review comments, read to leave out findings already posted. */
  previousReview?: string | null;
}

/** Flag values as yargs hands them over (already type-coerced, not yet validated). */
export interface RawFlags {
  dir?: string;
  model?: string;
  provider?: string;
  maxTurns?: number;
  maxTokens?: number;
  depth?: number;
  maxEntries?: number;
  mapTokens?: number;
  toolTimeout?: number;
  verbose?: boolean;
  includePartialMessages?: boolean;
  thinking?: boolean;
  effort?: string;
  showThinking?: boolean;
  color?: boolean;
  debug?: boolean;
  interactive?: boolean;
  outputFormat?: string;
  maxBudgetUsd?: number;
  timeout?: number;
  failOn?: string;
  sarif?: string;
  sarifCategory?: string;
  sarifOnError?: string;
  quiet?: boolean;
  continue?: boolean;
  resume?: string;
  sessionPersistence?: boolean;
  maxBudgetUsdPerCall?: number;
  maxBudgetUsdTotal?: number;
  maxConcurrentCalls?: number;
  maxMemoryGib?: number;
  diff?: string;
  diffFile?: string;
  scope?: string;
  baseline?: string;
  updateBaseline?: boolean;
  reviewOutput?: string;
  previousReview?: string;
  verifyCitations?: string;
  render?: boolean;
  hint?: boolean;
  sandbox?: string;
  allowLargeQuestion?: boolean;
  allowHome?: boolean;
  allowSecrets?: boolean;
}

/** Validates flags and environment; throws UsageError with a one-line fix. */
export async function resolveConfig(
  flags: RawFlags,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
  audit: boolean,
  mcp = false,
): Promise<Config> {
  const root = await realRoot(flags.dir ?? '.', cwd);
  const outputFormat = flags.outputFormat ?? 'text';
  if (outputFormat !== 'text' && outputFormat !== 'json' && outputFormat !== 'stream-json') {
    throw new UsageError(`--output-format must be text, json or stream-json (got "${outputFormat}")`);
  }
  if (flags.includePartialMessages === true && outputFormat !== 'stream-json') {
    throw new UsageError('--include-partial-messages needs --output-format stream-json');
  }
  if (!mcp) refuseMcpFlags(flags);
  const session = resolveSession(flags, audit, mcp);
  const failOn = flags.failOn ?? 'high';
  if (!['low', 'medium', 'high', 'critical'].includes(failOn)) {
    throw new UsageError(`--fail-on must be low, medium, high or critical (got "${failOn}")`);
  }
  const auditConfig = audit ? resolveAudit(flags, failOn as Severity, cwd) : (refuseAuditFlags(flags), null);
  const verifyCitations = flags.verifyCitations ?? 'report';
  if (!(VERIFY_MODES as readonly string[]).includes(verifyCitations)) {
    throw new UsageError(`--verify-citations must be off, report or fix (got "${verifyCitations}")`);
  }
  const sandbox = sandboxMode(flags.sandbox, env.SPELUNK_SANDBOX);
  if (sandbox === null) {
    const given = escapeControls(flags.sandbox ?? env.SPELUNK_SANDBOX ?? '');
    throw new UsageError(`--sandbox (or SPELUNK_SANDBOX) must be auto, required or off (got "${given}")`);
  }
  const model = resolveModelAlias((flags.model ?? env.SPELUNK_MODEL ?? DEFAULT_MODEL).trim());
  if (model === '') throw new UsageError('--model is empty; pass a model id such as claude-sonnet-5-5');
  const thinking = flags.thinking ?? false;
  const effort = resolveEffort(flags.effort, model, thinking, audit || outputFormat !== 'text');
  return {
    root,
    model,
    maxTurns: positiveInt('--max-turns', flags.maxTurns, 25),
    maxTokens: positiveInt('--max-tokens', flags.maxTokens, 16_000),
    depth: positiveInt('--depth', flags.depth, 3),
    maxEntries: flags.maxEntries === undefined ? null : positiveInt('--max-entries', flags.maxEntries, 0),
    mapTokens: positiveInt('--map-tokens', flags.mapTokens, 2_000),
    toolTimeoutMs: positiveNumber('--tool-timeout', flags.toolTimeout, 30) * 1000,
    verbose: flags.verbose ?? false,
    ...(flags.includePartialMessages === true ? { includePartialMessages: true } : {}),
    thinking,
    effort,
    showThinking: flags.showThinking ?? false,
    color: flags.color === false ? false : undefined,
    debug: flags.debug ?? false,
    interactive: flags.interactive ?? false,
    outputFormat,
    maxBudgetUsd: flags.maxBudgetUsd === undefined ? null : positiveNumber('--max-budget-usd', flags.maxBudgetUsd, 0),
    timeoutMs: flags.timeout === undefined ? null : positiveNumber('--timeout', flags.timeout, 0) * 1000,
    audit: auditConfig,
    quiet: flags.quiet ?? false,
    session,
    mcp: mcp ? resolveMcpLimits(flags) : null,
    verifyCitations: verifyCitations as VerifyCitations,
    sandboxMode: sandbox,
    render: flags.render !== false,
    hint: flags.hint === true,
    editorUrl: env.SPELUNK_EDITOR_URL?.trim() || null,
    baseURL: resolveBaseUrl(env.ANTHROPIC_BASE_URL),
    ...(resolveAllowSecrets(flags, env, audit) ? { allowSecrets: true } : {}),
    // Last: every flag and setting mistake above is said before a missing key (properties are evaluated in order).
    ...credentialFields(flags.provider, env, mcp),
  };
}

/**
 * The provider and its credential. `spelunk mcp` starts without one (locate is free), and its model tools then say what
 * is missing; everywhere else a missing key, region or project is a usage error. A cloud needs no ANTHROPIC_API_KEY.
 */
function credentialFields(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  mcp: boolean,
): Pick<Config, 'apiKey' | 'credential' | 'missingCredential' | 'provider'> {
  try {
    const provider = resolveProvider(flag, env);
    if (provider.provider !== 'anthropic') return { apiKey: '', provider };
    const { apiKey, credential } = resolveCredential(env);
    return { apiKey, ...(credential === 'authToken' ? { credential } : {}) };
  } catch (error) {
    // A mistyped --provider is a mistake on the command line, not a missing setting: the server does not start.
    if (!mcp || !(error instanceof UsageError) || error.message.startsWith('--provider')) throw error;
    return { apiKey: '', missingCredential: error.message };
  }
}

/** The MCP server's limits; other commands refuse these flags (refuseMcpFlags). */
function resolveMcpLimits(flags: RawFlags): NonNullable<Config['mcp']> {
  const { maxBudgetUsdPerCall: perCall, maxBudgetUsdTotal: total } = flags;
  return {
    perCallUsd: perCall === undefined ? null : positiveNumber('--max-budget-usd-per-call', perCall, 0),
    totalUsd: total === undefined ? null : positiveNumber('--max-budget-usd-total', total, 0),
    maxCalls: positiveInt('--max-concurrent-calls', flags.maxConcurrentCalls, 4),
    maxMemoryGib: positiveInt('--max-memory-gib', flags.maxMemoryGib, 4),
  };
}

/** Outside `spelunk mcp` these flags would do nothing: refused, naming the subcommand. */
function refuseMcpFlags(flags: RawFlags): void {
  const mcpOnly = [
    flags.maxBudgetUsdPerCall !== undefined && '--max-budget-usd-per-call',
    flags.maxBudgetUsdTotal !== undefined && '--max-budget-usd-total',
    flags.maxConcurrentCalls !== undefined && '--max-concurrent-calls',
    flags.maxMemoryGib !== undefined && '--max-memory-gib',
  ].filter(Boolean);
  if (mcpOnly.length === 0) return;
  const verb = mcpOnly.length === 1 ? 'works' : 'work';
  throw new UsageError(`${mcpOnly.join(' and ')} only ${verb} with the mcp subcommand: spelunk mcp -C <root> ${mcpOnly.join(' … ')} …`);
}

/**
 * Redaction is off only when asked for this run: --allow-secrets, or SPELUNK_ALLOW_SECRETS=1 (a value other than 1 or
 * 0 is a usage error rather than a guess). An audit takes only the flag: an environment variable set for other runs
 * of a CI job must not send a repository's secrets to the model unnoticed.
 */
function resolveAllowSecrets(flags: RawFlags, env: Readonly<Record<string, string | undefined>>, audit: boolean): boolean {
  if (flags.allowSecrets !== undefined) return flags.allowSecrets;
  const value = env.SPELUNK_ALLOW_SECRETS?.trim();
  if (value === undefined || value === '' || value === '0') return false;
  if (value !== '1') throw new UsageError(`SPELUNK_ALLOW_SECRETS must be 1 or 0 (got "${escapeControls(value)}")`);
  if (audit) throw new UsageError('SPELUNK_ALLOW_SECRETS is not honoured by audit; pass --allow-secrets on the command line to send secrets unredacted');
  return true;
}

/** Without `audit` these flags would do nothing, and a pipeline that forgot the subcommand would go green. */
function refuseAuditFlags(flags: RawFlags): void {
  const given = [
    flags.sarif !== undefined && '--sarif',
    flags.failOn !== undefined && '--fail-on',
    flags.sarifCategory !== undefined && '--sarif-category',
    flags.sarifOnError !== undefined && '--sarif-on-error',
    flags.diff !== undefined && '--diff',
    flags.diffFile !== undefined && '--diff-file',
    flags.scope !== undefined && '--scope',
    flags.baseline !== undefined && '--baseline',
    flags.updateBaseline !== undefined && '--update-baseline',
    flags.reviewOutput !== undefined && '--review-output',
    flags.previousReview !== undefined && '--previous-review',
  ].filter((flag): flag is string => typeof flag === 'string');
  if (given.length === 0) return;
  const names = given.length === 1 ? given[0]! : `${given.slice(0, -1).join(', ')} and ${given.at(-1)!}`;
  throw new UsageError(
    `${names} only ${given.length === 1 ? 'works' : 'work'} with the audit subcommand: spelunk audit "question" ${given.join(' … ')} …`,
  );
}

/** The audit settings; the SARIF-shaping flags need --sarif, or they would be silently ignored. */
function resolveAudit(flags: RawFlags, failOn: Severity, cwd: string): AuditConfig {
  const onError = flags.sarifOnError ?? 'none';
  if (!(SARIF_ON_ERROR as readonly string[]).includes(onError)) {
    throw new UsageError(`--sarif-on-error must be none or notification (got "${onError}")`);
  }
  const needsSarif = [
    flags.sarifCategory !== undefined && '--sarif-category',
    flags.sarifOnError !== undefined && '--sarif-on-error',
  ].filter(Boolean);
  if (!flags.sarif && needsSarif.length > 0) {
    throw new UsageError(`${needsSarif.join(' and ')} shape the SARIF file: add --sarif <file> (e.g. --sarif spelunk.sarif)`);
  }
  const category = flags.sarifCategory?.trim();
  if (category !== undefined && !/^[\x21-\x7e]{1,200}$/.test(category)) {
    throw new UsageError(
      `--sarif-category must be 1 to 200 printable characters without spaces, e.g. spelunk/auth/ (got "${escapeControls(category)}")`,
    );
  }
  return {
    failOn,
    sarif: flags.sarif ? path.resolve(cwd, flags.sarif) : null,
    sarifCategory: category ?? null,
    sarifOnError: onError as SarifOnError,
    ...auditScope(flags, cwd),
  };
}

/** -c / --resume / --no-session-persistence; audits and the MCP server start fresh and are not saved. */
function resolveSession(flags: RawFlags, audit: boolean, mcp: boolean): Config['session'] {
  const resume = flags.resume === undefined ? null : flags.resume.trim();
  if (resume === '') throw new UsageError('--resume needs a session id (or a prefix of one); -c continues the latest');
  if (flags.continue && resume !== null) throw new UsageError('use either -c/--continue (the latest session) or --resume <id>, not both');
  const which = flags.continue ? 'latest' : resume;
  if (which !== null && (audit || mcp)) {
    throw new UsageError(
      `${flags.continue ? '-c/--continue' : '--resume'} does not work with ${audit ? 'audit' : 'mcp'}: audits and the MCP server start a fresh conversation`,
    );
  }
  return { persist: flags.sessionPersistence !== false && !audit && !mcp, resume: which };
}

/** --effort checked against the model; without it, the mode's default where the model takes one. */
function resolveEffort(flag: string | undefined, model: string, thinking: boolean, ci: boolean): Effort | null {
  if (flag === undefined) return effortToSend(model, null, ci ? 'ci' : 'text', thinking);
  if (!isEffort(flag)) throw new UsageError(`--effort must be ${EFFORTS.slice(0, -1).join(', ')} or ${EFFORTS.at(-1)} (got "${flag}")`);
  const problem = effortProblem(model, flag, thinking);
  if (problem) throw new UsageError(problem);
  return flag;
}

/** --diff / --diff-file / --scope / --baseline / --update-baseline, checked together (each mistake is one line). */
function auditScope(
  flags: RawFlags,
  cwd: string,
): Pick<AuditConfig, 'diff' | 'scope' | 'baseline' | 'updateBaseline' | 'reviewOutput' | 'previousReview'> {
  if (flags.diff !== undefined && flags.diffFile !== undefined) {
    throw new UsageError('--diff and --diff-file name the change twice; give one of them');
  }
  if (flags.diff !== undefined && flags.diff.trim() === '') {
    throw new UsageError('--diff needs a base revision: --diff origin/main or --diff BASE...HEAD');
  }
  const diff =
    flags.diff !== undefined
      ? parseDiffSpec(flags.diff.trim())
      : flags.diffFile !== undefined
        ? { kind: 'file' as const, path: path.resolve(cwd, flags.diffFile) }
        : null;
  if (flags.scope !== undefined && !(SCOPES as readonly string[]).includes(flags.scope)) {
    throw new UsageError(`--scope must be line, file or repo (got "${flags.scope}")`);
  }
  if (flags.scope !== undefined && diff === null) {
    throw new UsageError('--scope only applies to an audit of a change; add --diff BASE or --diff-file pr.diff');
  }
  if (flags.updateBaseline === true && flags.baseline === undefined) {
    throw new UsageError('--update-baseline needs the file to write: --baseline FILE --update-baseline');
  }
  if (flags.reviewOutput !== undefined && diff === null) {
    throw new UsageError('--review-output comments on the changed lines of a change: add --diff BASE (or --diff-file pr.diff)');
  }
  if (flags.previousReview !== undefined && flags.reviewOutput === undefined) {
    throw new UsageError('--previous-review only shapes a review: add --review-output review.json');
  }
  for (const [flag, value] of [
    ['--review-output', flags.reviewOutput],
    ['--previous-review', flags.previousReview],
  ] as const) {
    if (value !== undefined && value.trim() === '') throw new UsageError(`${flag} needs a file name`);
  }
  return {
    reviewOutput: flags.reviewOutput === undefined ? null : path.resolve(cwd, flags.reviewOutput),
    previousReview: flags.previousReview === undefined ? null : path.resolve(cwd, flags.previousReview),
    diff,
    scope: (flags.scope ?? 'line') as Scope,
    baseline: flags.baseline === undefined ? null : path.resolve(cwd, flags.baseline),
    updateBaseline: flags.updateBaseline === true,
  };
}

function positiveInt(flag: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) {
    throw new UsageError(`${flag} must be a whole number of at least 1 (got ${value ?? 'a non-number'})`);
  }
  return value;
}

function positiveNumber(flag: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) {
    throw new UsageError(`${flag} must be a number greater than 0 (got ${value ?? 'a non-number'})`);
  }
  return value;
}
