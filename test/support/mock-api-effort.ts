/**
 * How the Messages API treats `output_config.effort` (Anthropic's effort documentation, Nov 2026), kept apart from
 * spelunk's own table in src/agent/effort.ts on purpose: a disagreement between the two shows up as a 400 in tests.
 */

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every level the API knows. */
const API_EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;

/** Levels per model; a model not listed here is not checked (the mock does not know it). */
const MODEL_EFFORTS: ReadonlyMap<string, readonly string[]> = new Map<string, readonly string[]>([
  ['claude-sonnet-4-5', []],
  ['claude-haiku-4-5', []],
  ['claude-opus-4-5', ['low', 'medium', 'high']],
  ['claude-opus-4-6', ['low', 'medium', 'high', 'max']],
  ['claude-sonnet-4-6', ['low', 'medium', 'high', 'max']],
  ['claude-opus-4-7', API_EFFORTS],
  ['claude-opus-4-8', API_EFFORTS],
  ['claude-opus-5', API_EFFORTS],
  ['claude-sonnet-5', API_EFFORTS],
  ['claude-opus-5-5', API_EFFORTS],
  ['claude-sonnet-5-5', API_EFFORTS],
  ['claude-haiku-5-5', API_EFFORTS],
]);

/** Opus 5 rejects its two highest levels when thinking is not enabled. */
const HIGH_LEVELS_NEED_THINKING = new Set(['claude-opus-5']);

/** The API's message for a bad output_config, or null. */
export function checkEffort(body: Json): string | null {
  if (!('output_config' in body)) return null;
  const config = body['output_config'];
  if (!isObj(config)) return 'output_config: Input should be a valid dictionary';
  const unknown = Object.keys(config).find((key) => key !== 'effort' && key !== 'format');
  if (unknown) return `output_config.${unknown}: Extra inputs are not permitted`;
  const effort = config['effort'];
  if (effort === undefined || effort === null) return null;
  if (typeof effort !== 'string' || !(API_EFFORTS as readonly string[]).includes(effort)) {
    return "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'";
  }
  const model = String(body['model']).replace(/-\d{8}$/, '');
  const levels = MODEL_EFFORTS.get(model);
  if (levels === undefined) return null;
  if (levels.length === 0) return `This model (${model}) does not support the effort parameter.`;
  if (!levels.includes(effort)) return `Effort level "${effort}" is not supported by ${model}. Supported levels: ${levels.join(', ')}.`;
  const thinking = isObj(body['thinking']) && body['thinking']['type'] !== 'disabled';
  if (HIGH_LEVELS_NEED_THINKING.has(model) && (effort === 'xhigh' || effort === 'max') && !thinking) {
    return `Effort level "${effort}" requires thinking to be enabled for ${model}.`;
  }
  return null;
}
