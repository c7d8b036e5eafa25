/**
 * The subset of JSON Schema the tools' input schemas use. A tool's schema (the one the model sees) is also what checks
 * its input: `schemaIssues` interprets exactly these keywords, so the two cannot disagree. The property test
 * (test/tools/schema-agreement.test.ts) holds this interpreter to ajv on every tool's schema. Interpreted here rather
 * than compiled with ajv at run time: ajv ships in the MCP server's lazily loaded vendor chunk, and every question's
 * start-up would otherwise read it.
 */
/** What a parser of untrusted input returns: the typed value, or one message that says what to fix. */
export type ParseResult<I> = { ok: true; value: I } | { ok: false; error: string };

/** JSON Schema for a tool input, as the Messages API wants it; the same object checks the input (schemaIssues). */
export interface InputSchema extends JsonSchema {
  type: 'object';
  properties: Readonly<Record<string, JsonSchema>>;
}

export interface JsonSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'boolean';
  description?: string;
  properties?: Readonly<Record<string, JsonSchema>>;
  required?: readonly string[];
  additionalProperties?: false;
  items?: JsonSchema;
  maxItems?: number;
  enum?: readonly string[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  /** An unanchored ECMAScript pattern, as JSON Schema reads it. */
  pattern?: string;
}

/** One way the input breaks its schema; `at` is the field's path (`findings[0].title`, '' for the input itself). */
export interface SchemaIssue {
  at: string;
  keyword:
    'type' | 'required' | 'additionalProperties' | 'enum' | 'minimum' | 'maximum' | 'minLength' | 'maxLength' | 'maxItems' | 'pattern';
  /** The offending value (undefined for a missing required field). */
  value: unknown;
  /** The schema of the field at `at`. */
  schema: JsonSchema;
  /** additionalProperties: the unknown keys, in the input's order. */
  keys?: string[];
}

/** Every issue of `value` against `schema` (depth first, in property order); none means the schema accepts it. */
export function schemaIssues(schema: JsonSchema, value: unknown, at = ''): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  check(schema, value, at, issues);
  return issues;
}

function check(schema: JsonSchema, value: unknown, at: string, issues: SchemaIssue[]): void {
  const issue = (keyword: SchemaIssue['keyword']): void => void issues.push({ at, keyword, value, schema });
  if (schema.type !== undefined && !hasType(value, schema.type)) return issue('type');
  if (schema.enum !== undefined && !schema.enum.includes(value as string)) return issue('enum');
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) issue('minimum');
    if (schema.maximum !== undefined && value > schema.maximum) issue('maximum');
  }
  if (typeof value === 'string') {
    // JSON Schema counts code points, not UTF-16 units.
    const length = schema.minLength === undefined && schema.maxLength === undefined ? 0 : [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) issue('minLength');
    if (schema.maxLength !== undefined && length > schema.maxLength) issue('maxLength');
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) issue('pattern');
  }
  if (Array.isArray(value)) {
    if (schema.maxItems !== undefined && value.length > schema.maxItems) return issue('maxItems');
    if (schema.items) value.forEach((item, i) => check(schema.items!, item, `${at}[${i}]`, issues));
  }
  if (isObject(value)) checkObject(schema, value, at, issues);
}

function checkObject(schema: JsonSchema, value: Record<string, unknown>, at: string, issues: SchemaIssue[]): void {
  const properties = schema.properties ?? {};
  const prefix = at === '' ? '' : `${at}.`;
  if (schema.additionalProperties === false) {
    const keys = Object.keys(value).filter((key) => !Object.hasOwn(properties, key));
    if (keys.length > 0) issues.push({ at, keyword: 'additionalProperties', value, schema, keys });
  }
  // In the schema's property order, so the messages read in the order the model sees the fields.
  const required = new Set(schema.required ?? []);
  for (const key of new Set([...Object.keys(properties), ...required])) {
    const sub = properties[key] ?? {};
    if (Object.hasOwn(value, key)) check(sub, value[key], `${prefix}${key}`, issues);
    else if (required.has(key)) issues.push({ at: `${prefix}${key}`, keyword: 'required', value: undefined, schema: sub });
  }
}

function hasType(value: unknown, type: NonNullable<JsonSchema['type']>): boolean {
  switch (type) {
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    default:
      return typeof value === type;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON value for a one-line message: short, and `nothing` for a missing one. */
export function showValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 40 ? `${json.slice(0, 40)}…` : json;
}

/** A copy of `input` without the listed fields that are null: models send null for "not given". */
export function dropNulls(input: unknown, fields: readonly string[]): unknown {
  if (!isObject(input) || !fields.some((f) => input[f] === null)) return input;
  return Object.fromEntries(Object.entries(input).filter(([key, v]) => !(v === null && fields.includes(key))));
}
