import { promises as fs } from 'node:fs';
import path from 'node:path';
import { UsageError } from './errors.js';
import type { Severity } from './tools/report-findings.js';

export const DEFAULT_MODEL = 'claude-sonnet-5-5';
export type OutputFormat = 'text' | 'json' | 'stream-json';

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
  thinking: boolean;
  showThinking: boolean;
  /** false from --no-color; undefined = decide from the stream and NO_COLOR/FORCE_COLOR. */
  color: boolean | undefined;
  debug: boolean;
  interactive: boolean;
  outputFormat: OutputFormat;
  maxBudgetUsd: number | null;
  timeoutMs: number | null;
  audit: { failOn: Severity; sarif: string | null } | null;
  apiKey: string;
  baseURL: string | undefined;
}

/** Flag values as yargs hands them over (already type-coerced, not yet validated). */
export interface RawFlags {
  dir?: string;
  model?: string;
  maxTurns?: number;
  maxTokens?: number;
  depth?: number;
  maxEntries?: number;
  mapTokens?: number;
  toolTimeout?: number;
  verbose?: boolean;
  thinking?: boolean;
  showThinking?: boolean;
  color?: boolean;
  debug?: boolean;
  interactive?: boolean;
  outputFormat?: string;
  maxBudgetUsd?: number;
  timeout?: number;
  failOn?: string;
  sarif?: string;
}

/** Validates flags and environment; throws UsageError with a one-line fix. */
export async function resolveConfig(flags: RawFlags, env: Readonly<Record<string, string | undefined>>, cwd: string, audit: boolean): Promise<Config> {
  const root = await resolveRoot(flags.dir ?? '.', cwd);
  const apiKey = env.ANTHROPIC_API_KEY?.trim();
  if (!apiKey) throw new UsageError('ANTHROPIC_API_KEY is not set; export ANTHROPIC_API_KEY=sk-ant-… (get a key at console.anthropic.com)');
  const outputFormat = flags.outputFormat ?? 'text';
  if (outputFormat !== 'text' && outputFormat !== 'json' && outputFormat !== 'stream-json') {
    throw new UsageError(`--output-format must be text, json or stream-json (got "${outputFormat}")`);
  }
  // Without `audit` these would do nothing, and a pipeline that forgot the subcommand would go green.
  const auditOnly = [flags.sarif !== undefined && '--sarif', flags.failOn !== undefined && '--fail-on'].filter(Boolean);
  if (!audit && auditOnly.length > 0) {
    throw new UsageError(`${auditOnly.join(' and ')} only work with the audit subcommand: spelunk audit "question" ${auditOnly.join(' … ')} …`);
  }
  const failOn = flags.failOn ?? 'high';
  if (!['low', 'medium', 'high', 'critical'].includes(failOn)) {
    throw new UsageError(`--fail-on must be low, medium, high or critical (got "${failOn}")`);
  }
  const model = (flags.model ?? env.SPELUNK_MODEL ?? DEFAULT_MODEL).trim();
  if (model === '') throw new UsageError('--model is empty; pass a model id such as claude-sonnet-5-5');
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
    thinking: flags.thinking ?? false,
    showThinking: flags.showThinking ?? false,
    color: flags.color === false ? false : undefined,
    debug: flags.debug ?? false,
    interactive: flags.interactive ?? false,
    outputFormat,
    maxBudgetUsd: flags.maxBudgetUsd === undefined ? null : positiveNumber('--max-budget-usd', flags.maxBudgetUsd, 0),
    timeoutMs: flags.timeout === undefined ? null : positiveNumber('--timeout', flags.timeout, 0) * 1000,
    audit: audit ? { failOn: failOn as Severity, sarif: flags.sarif ? path.resolve(cwd, flags.sarif) : null } : null,
    apiKey,
    baseURL: env.ANTHROPIC_BASE_URL?.trim() || undefined,
  };
}

/** The repository root as a real absolute path, so every later containment check compares real paths. */
async function resolveRoot(dir: string, cwd: string): Promise<string> {
  const absolute = path.resolve(cwd, dir);
  let real: string;
  try {
    real = await fs.realpath(absolute);
  } catch {
    throw new UsageError(`--dir ${dir}: no such directory; pass the repository root with -C <path>`);
  }
  const stat = await fs.stat(real);
  if (!stat.isDirectory()) throw new UsageError(`--dir ${dir}: not a directory; pass the repository root with -C <path>`);
  return real;
}

function positiveInt(flag: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new UsageError(`${flag} must be a whole number of at least 1 (got ${value ?? 'a non-number'})`);
  return value;
}

function positiveNumber(flag: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new UsageError(`${flag} must be a number greater than 0 (got ${value ?? 'a non-number'})`);
  return value;
}
