import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { sessionTools } from '../../src/tools/index.js';
import type { InputSchema, Tool } from '../../src/tools/tool.js';
import { WHITELIST } from '../../src/sandbox/programs.js';
import { mutate, random, valid } from '../support/schema-inputs.js';

// Property test: each tool's input schema (the object the model sees) and its parse agree, with ajv — an independent
// JSON Schema implementation — as the oracle. Random inputs near each schema (valid ones, then one or two mutations:
// wrong types, missing and extra fields, blank and over-long strings, bounds, nulls) must be accepted by parse when ajv
// accepts them (after the documented leniencies, and the rules a schema cannot state), and refused with a clear
// message when ajv refuses them.

const programs = new Map(WHITELIST.map((p) => [p, `/usr/bin/${p}`]));
const tools = sessionTools(programs, { report: null, warnings: [] }, '/usr/bin/git');
const ajv = new Ajv({ strict: false, allErrors: false });
const RUNS = 1500;

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
