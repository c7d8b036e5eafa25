import type { JsonSchema } from '../../src/schema.js';

// Random inputs near a JSON schema, for the property tests that hold a parser to ajv (test/tools/schema-agreement.test.ts,
// test/mcp/schema-agreement.test.ts): valid ones, then one or two mutations (wrong types, missing and extra fields,
// blank and over-long strings, bounds, nulls).

/** mulberry32: a small seeded generator, so a failing case is the same on every run. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Rand = () => number;
const pick = <T,>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

/** A value the schema accepts (most of the time: patterns and lengths are aimed at, not guaranteed). */
export function valid(r: Rand, s: JsonSchema): unknown {
  if (s.enum) return pick(r, s.enum);
  switch (s.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, sub] of Object.entries(s.properties ?? {})) {
        if (s.required?.includes(key) || r() < 0.5) out[key] = valid(r, sub);
      }
      return out;
    }
    case 'array':
      return Array.from({ length: Math.floor(r() * 3) }, () => valid(r, s.items ?? {}));
    case 'integer':
      return pick(r, [1, 2, 3, 7, 40, 1000, s.maximum ?? 99]);
    case 'boolean':
      return r() < 0.5;
    case 'string':
      if (s.pattern?.startsWith('^[A-Za-z0-9]')) return pick(r, ['shell-injection', 'a', 'owasp/a03.injection', 'X_1']);
      return pick(r, ['src/a.ts', 'log --oneline -n 3', 'rg -n x src', 'a', 'é 日本']);
    default:
      return null;
  }
}

/** Any JSON value, for wrong types. */
function anyValue(r: Rand): unknown {
  return pick(r, [null, true, false, 0, -1, 1.5, 2 ** 53, '', ' ', '\t\n', '12', ' 7 ', 'x', 'x'.repeat(4100), [], [1], {}, { a: 1 }]);
}

/** `value` with one change somewhere along a random path. */
export function mutate(r: Rand, s: JsonSchema, value: unknown): unknown {
  if (s.type === 'object' && value !== null && typeof value === 'object' && !Array.isArray(value) && r() < 0.8) {
    const obj = { ...(value as Record<string, unknown>) };
    const keys = Object.keys(s.properties ?? {});
    const roll = r();
    if (roll < 0.15) obj[pick(r, ['extra', 'offset', 'file', 'timeout'])] = anyValue(r);
    else if (roll < 0.3 && keys.length > 0) delete obj[pick(r, keys)];
    else if (keys.length > 0) {
      const key = pick(r, keys);
      obj[key] = mutate(r, s.properties![key]!, key in obj ? obj[key] : valid(r, s.properties![key]!));
    }
    return obj;
  }
  if (s.type === 'array' && Array.isArray(value) && value.length > 0 && r() < 0.7) {
    const copy = [...value];
    const i = Math.floor(r() * copy.length);
    copy[i] = mutate(r, s.items ?? {}, copy[i]);
    return copy;
  }
  if (s.type === 'array' && r() < 0.2) return Array.from({ length: (s.maxItems ?? 5) + 1 }, () => valid(r, s.items ?? {}));
  if (s.type === 'integer' && r() < 0.6) return pick(r, [0, -4, 1.5, (s.minimum ?? 0) + 1, 1e300, 2 ** 53, '12', ' 3 ', '0x10', null]);
  if (s.type === 'string' && r() < 0.6) {
    return pick(r, ['', '   ', 'Shell Injection', 'x'.repeat((s.maxLength ?? 10) + 1), 'x'.repeat(s.maxLength ?? 10), null, 5]);
  }
  return anyValue(r);
}
