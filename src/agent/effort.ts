/**
 * The effort setting (`output_config.effort` in the Messages API): how many tokens the model spends on thinking,
 * text and tool calls. The API's levels are low, medium, high, xhigh and max; spelunk offers four of them.
 */
import { anthropicModelId } from './providers.js';
export const EFFORTS = ['low', 'medium', 'high', 'max'] as const;
export type Effort = (typeof EFFORTS)[number];

/** How spelunk was started: text (the REPL, one-shot text) or CI (json, stream-json, audit). */
type RunMode = 'text' | 'ci';

/**
 * Default per mode. In the text modes a person is waiting: medium answers sooner and costs less. json/stream-json
 * output and audits run unattended in CI, where thoroughness matters more than seconds: high (the API's default).
 */
const DEFAULT_EFFORT: Readonly<Record<RunMode, Effort>> = { text: 'medium', ci: 'high' };

const ALL: readonly Effort[] = EFFORTS;
/**
 * Levels each model accepts (Anthropic's effort documentation, Nov 2026): the 4.5 Sonnet and Haiku reject the
 * parameter outright, Opus 4.5 predates max, later models take all four. A model missing here is unknown: an
 * explicit --effort is sent and the API decides; the default is not sent, so an unknown model never fails on it.
 */
const SUPPORT: ReadonlyMap<string, readonly Effort[]> = new Map([
  ['claude-opus-5-5', ALL],
  ['claude-sonnet-5-5', ALL],
  ['claude-haiku-5-5', ALL],
  ['claude-sonnet-5', ALL],
  ['claude-opus-5', ALL],
  ['claude-opus-4-8', ALL],
  ['claude-opus-4-7', ALL],
  ['claude-opus-4-6', ALL],
  ['claude-sonnet-4-6', ALL],
  ['claude-opus-4-5', ['low', 'medium', 'high']],
  ['claude-sonnet-4-5', []],
  ['claude-haiku-4-5', []],
]);
/** Models that answer 400 to effort max without thinking enabled. */
const MAX_NEEDS_THINKING: ReadonlySet<string> = new Set(['claude-opus-5']);
const DATED_SUFFIX = /-\d{8}$/;

export function isEffort(value: string): value is Effort {
  return (EFFORTS as readonly string[]).includes(value);
}

/** The default effort of a mode. */
function defaultEffort(mode: RunMode): Effort {
  return DEFAULT_EFFORT[mode];
}

/** Levels `model` accepts; null when the model is not in the table. */
export function effortLevels(model: string): readonly Effort[] | null {
  return SUPPORT.get(anthropicModelId(model).replace(DATED_SUFFIX, '')) ?? null;
}

/** Why `effort` cannot be used with this model (a one-line fix), or null when it can. */
export function effortProblem(model: string, effort: Effort, thinking: boolean): string | null {
  const levels = effortLevels(model);
  if (levels === null) return null;
  if (levels.length === 0) return `${model} does not support an effort setting; drop --effort or pick a model that has one, e.g. -m claude-sonnet-5-5`;
  if (!levels.includes(effort)) return `${model} does not support --effort ${effort}; use ${levels.join(', ')}, or a newer model`;
  if (effort === 'max' && !thinking && MAX_NEEDS_THINKING.has(model.replace(DATED_SUFFIX, ''))) {
    return `--effort max on ${model} needs --thinking (the API rejects max effort without it on this model)`;
  }
  return null;
}

/**
 * The effort to send: an explicit choice is sent as given (checked earlier); a default only to a model known to
 * accept it. Null: send nothing, the model's own default applies.
 */
export function effortToSend(model: string, explicit: Effort | null, mode: RunMode, thinking: boolean): Effort | null {
  if (explicit !== null) return explicit;
  const effort = defaultEffort(mode);
  if (effortLevels(model) === null) return null;
  return effortProblem(model, effort, thinking) === null ? effort : null;
}
