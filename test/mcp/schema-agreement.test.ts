import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { MCP_TOOLS, parseCall } from '../../src/mcp/tools.js';
import type { JsonSchema } from '../../src/schema.js';
import { mutate, random, valid } from '../support/schema-inputs.js';

// Property test: the inputSchema each MCP tool lists (what the client sees in tools/list) and parseCall agree, with
// ajv — an independent JSON Schema implementation — as the oracle. Random arguments near each schema must be accepted
// by parseCall exactly when ajv accepts them (and come back typed: trimmed, defaults filled in), and refused with one
// clear line that names the fields to fix when ajv refuses them.

const ajv = new Ajv({ strict: false, allErrors: false });
const RUNS = 1500;

/** Each phrase of a refusal starts with the field it is about, or says the arguments are not an object. */
const PHRASE = /^(question|session_id|max_turns|fail_on|diff|k) (is|must) \S|^the arguments must be a JSON object$/;
/** Where one phrase ends and the next begins ("; " also appears inside a phrase: "…characters; keep it under …"). */
const NEXT = /; (?=(?:question|session_id|max_turns|fail_on|diff|k) (?:is|must) |the arguments )/;

describe('every MCP tool: the inputSchema the client sees is the check (ajv as the oracle)', () => {
  it.each(MCP_TOOLS.map((t) => [t.name, t.inputSchema as JsonSchema] as const))('%s: random arguments get the verdict ajv gives', (name, schema) => {
    const check = ajv.compile(schema);
    const r = random([...name].reduce((h, c) => h * 31 + c.charCodeAt(0), 11));
    const seen = { accepted: 0, refused: 0 };
    for (let run = 0; run < RUNS; run += 1) {
      let input = valid(r, schema);
      for (let m = Math.floor(r() * 3); m > 0; m -= 1) input = mutate(r, schema, input);
      const accepted = check(input);
      const parsed = parseCall(name, input);
      const context = `arguments ${JSON.stringify(input)?.slice(0, 300)}; ajv: ${ajv.errorsText(check.errors)}`;
      if (!accepted) {
        expect(typeof parsed, context).toBe('string');
        const message = parsed as string;
        expect(message, context).not.toContain('\n');
        for (const phrase of message.split(NEXT)) expect(phrase, context).toMatch(PHRASE);
        seen.refused += 1;
        continue;
      }
      expect(typeof parsed, `${context}; parseCall: ${String(parsed)}`).toBe('object');
      const given = input as Record<string, unknown>;
      expect(parsed, context).toMatchObject({ tool: name, question: (given.question as string).trim() });
      seen.accepted += 1;
    }
    // Both sides of the boundary are exercised, not just one.
    expect(seen.accepted).toBeGreaterThan(RUNS / 10);
    expect(seen.refused).toBeGreaterThan(RUNS / 10);
  });

  it('the bounds the check enforces are in the schema the client sees', () => {
    for (const tool of MCP_TOOLS) {
      expect(tool.inputSchema.properties.question).toMatchObject({ type: 'string', pattern: '\\S', maxLength: 20_000 });
    }
    expect(MCP_TOOLS.find((t) => t.name === 'ask_followup')!.inputSchema.properties).toMatchObject({ session_id: { type: 'string', pattern: '\\S' } });
  });
});
