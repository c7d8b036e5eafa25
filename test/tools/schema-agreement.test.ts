import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { sessionTools } from '../../src/tools/index.js';
import type { InputSchema, Tool } from '../../src/tools/tool.js';
import type { JsonSchema } from '../../src/tools/schema.js';
import { WHITELIST } from '../../src/sandbox/programs.js';

// Property test: each tool's input schema (the object the model sees) and its parse agree, with ajv — an independent
// JSON Schema implementation — as the oracle. Random inputs near each schema (valid ones, then one or two mutations:
// wrong types, missing and extra fields, blank and over-long strings, bounds, nulls) must be accepted by parse when ajv
// accepts them (after the documented leniencies, and the rules a schema cannot state), and refused with a clear
// message when ajv refuses them.

const programs = new Map(WHITELIST.map((p) => [p, `/usr/bin/${p}`]));
const tools = sessionTools(programs, { report: null, warnings: [] }, '/usr/bin/git');
const ajv = new Ajv({ strict: false, allErrors: false });
const RUNS = 1500;

/** mulberry32: a small seeded generator, so a failing case is the same on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const pick = <T,>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

/** A value the schema accepts (most of the time: patterns and lengths are aimed at, not guaranteed). */
function valid(r: Rand, s: JsonSchema): unknown {
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
function mutate(r: Rand, s: JsonSchema, value: unknown): unknown {
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

/** The leniencies each tool documents, applied as the tool says it applies them. */
function lenient(tool: string, input: unknown): unknown {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return input;
  const obj = { ...(input as Record<string, unknown>) };
  if (tool === 'read_file') {
    for (const key of ['start_line', 'end_line']) {
      if (obj[key] === null) delete obj[key];
      else if (typeof obj[key] === 'string' && /^\s*\d+\s*$/.test(obj[key] as string)) obj[key] = Number(obj[key]);
    }
  }
  if (tool === 'report_findings' && Array.isArray(obj.findings)) {
    obj.findings = obj.findings.map((f: unknown) => {
      if (f === null || typeof f !== 'object' || Array.isArray(f)) return f;
      const copy = { ...(f as Record<string, unknown>) };
      for (const key of ['category', 'end_line']) if (copy[key] === null) delete copy[key];
      return copy;
    });
  }
  return obj;
}

/** The rules a JSON schema cannot state, which parse adds (each with its own message). */
function extraRuleBroken(tool: string, input: unknown): boolean {
  if (tool !== 'read_file') return false;
  const { start_line: start, end_line: end, outline } = input as { start_line?: number; end_line?: number; outline?: boolean };
  return (start !== undefined && end !== undefined && end < start) || (outline === true && (start !== undefined || end !== undefined));
}

function clearMessage(tool: string, error: string): void {
  expect(error.trim()).not.toBe('');
  expect(error).not.toMatch(/\n\s+at /);
  if (tool !== 'report_findings') return void expect(error).not.toContain('\n');
  // report_findings lists each problem on a line of its own, at most ten and a count of the rest.
  const [head, ...items] = error.split('\n');
  expect(head).toBe('report_findings was not recorded; fix these and call it again:');
  expect(items.length).toBeLessThanOrEqual(11);
  for (const item of items) expect(item).toMatch(/^(- \S.*|\(and \d+ more\))$/);
}

describe('every tool: the schema the model sees is the check (ajv as the oracle)', () => {
  it('offers the tools it checks', () => {
    expect(tools.map((t) => t.name)).toEqual(['read_file', 'bash', 'git', 'report_findings']);
  });

  it.each(tools.map((t) => [t.name, t] as [string, Tool<unknown>]))('%s: random inputs get the verdict ajv gives', (name, tool) => {
    const schema: InputSchema = tool.inputSchema;
    const check = ajv.compile(schema);
    const r = random([...name].reduce((h, c) => h * 31 + c.charCodeAt(0), 7));
    const seen = { accepted: 0, refused: 0 };
    for (let run = 0; run < RUNS; run += 1) {
      let input = valid(r, schema);
      for (let m = Math.floor(r() * 3); m > 0; m -= 1) input = mutate(r, schema, input);
      const schemaAccepts = check(lenient(name, input));
      const parsed = tool.parse(input);
      const context = `input ${JSON.stringify(input)?.slice(0, 300)}; ajv: ${ajv.errorsText(check.errors)}`;
      if (!schemaAccepts) {
        expect(parsed.ok, context).toBe(false);
        if (!parsed.ok) clearMessage(name, parsed.error);
        seen.refused += 1;
      } else if (extraRuleBroken(name, lenient(name, input))) {
        expect(parsed.ok, context).toBe(false);
        if (!parsed.ok) clearMessage(name, parsed.error);
      } else {
        expect(parsed.ok, `${context}; parse: ${parsed.ok ? '' : parsed.error}`).toBe(true);
        seen.accepted += 1;
      }
    }
    // Both sides of the boundary are exercised, not just one.
    expect(seen.accepted).toBeGreaterThan(RUNS / 10);
    expect(seen.refused).toBeGreaterThan(RUNS / 10);
  });
});
