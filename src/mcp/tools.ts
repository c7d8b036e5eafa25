import { SEVERITIES, type Severity } from '../audit/report.js';
import { EXIT } from '../exit-codes.js';
import { schemaIssues, type SchemaIssue } from '../schema.js';

/** A client may ask for fewer or more requests than the server's --max-turns, but never more than this. */
const MAX_TURNS_CAP = 100;
/** A question longer than this is refused: it would be most of the prompt, and no one types it. */
const MAX_QUESTION_CHARS = 20_000;

/**
 * A question: something besides whitespace (`\S`: JavaScript's \s is exactly what trim() removes), and not a prompt's
 * worth. The client sees these bounds in the schema, and the same schema is the check (parseCall).
 */
const questionSchema = (description?: string) =>
  ({ type: 'string', pattern: '\\S', maxLength: MAX_QUESTION_CHARS, ...(description === undefined ? {} : { description }) }) as const;

/**
 * Every tool only reads the fixed root: no tool takes a directory, so a client can never point spelunk elsewhere.
 * openWorldHint false: it talks to the Anthropic API, but the "world" it explores is only that repository.
 */
const ANNOTATIONS = { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;

const USAGE_SCHEMA = {
  type: 'object',
  description: 'Tokens and estimated cost of this call (cost_usd null when the model has no known price)',
  properties: {
    input: { type: 'integer' },
    cache_write: { type: 'integer' },
    cache_read: { type: 'integer' },
    output: { type: 'integer' },
    requests: { type: 'integer' },
    cost_usd: { type: ['number', 'null'] },
  },
  required: ['input', 'cache_write', 'cache_read', 'output', 'requests', 'cost_usd'],
} as const;

const ANSWER_SCHEMA = {
  type: 'object',
  properties: {
    answer_markdown: { type: 'string', description: 'the answer, with path:line evidence' },
    citations: {
      type: 'array',
      description: 'path:line references of the answer, each checked against the repository',
      items: {
        type: 'object',
        properties: {
          path: { type: 'string' },
          commit: { type: 'string', description: 'present for a file cited as it was at a commit (abc1234:path:line)' },
          start_line: { type: ['integer', 'null'] },
          end_line: { type: ['integer', 'null'] },
          status: { type: 'string', enum: ['ok', 'missing_file', 'outside_root', 'line_out_of_range', 'not_a_file', 'quote_mismatch'] },
          excerpt: { type: ['string', 'null'], description: 'for ok: the first cited line' },
        },
        required: ['path', 'start_line', 'end_line', 'status', 'excerpt'],
      },
    },
    session_id: { type: 'string', description: 'pass to ask_followup to continue this conversation' },
    truncated: { type: 'boolean', description: 'true when the answer or a list was cut to fit the result size limit (notes say what was left out)' },
    stop_reason: { type: 'string', description: 'end_turn when answered; otherwise the limit or failure that ended it' },
    readonly_verified: { type: ['boolean', 'null'], description: 'the repository was checked unchanged after the call' },
    sandbox: { type: 'string', enum: ['kernel', 'tables'], description: 'kernel: programs ran in the bubblewrap sandbox (only the repository, read-only); tables: behind the command tables alone' },
    notes: { type: 'array', items: { type: 'string' }, description: 'warnings and why the answer may be incomplete' },
    usage: USAGE_SCHEMA,
  },
  required: ['answer_markdown', 'citations', 'session_id', 'truncated', 'stop_reason', 'usage'],
} as const;

const AUDIT_SCHEMA = {
  type: 'object',
  description: 'the result object of `spelunk audit --output-format json` (schema/result.schema.json) plus fail_on and exit_code',
  properties: {
    subtype: { type: 'string' },
    is_error: { type: 'boolean' },
    result: { type: 'string' },
    session_id: { type: 'string' },
    stop_reason: { type: 'string' },
    readonly_verified: { type: ['boolean', 'null'] },
    sandbox: { type: 'string', enum: ['kernel', 'tables'] },
    audit: {
      type: 'object',
      properties: {
        verdict: { type: 'string', enum: ['pass', 'fail', 'inconclusive'] },
        summary: { type: 'string' },
        findings: { type: 'array' },
      },
      required: ['verdict', 'summary', 'findings'],
    },
    truncated: {
      type: 'boolean',
      description: 'true when the result text or a list was cut to fit the result size limit (warnings say what was left out)',
    },
    fail_on: { type: 'string', enum: [...SEVERITIES] },
    exit_code: {
      type: 'integer',
      description: `what \`spelunk audit\` would exit with: ${EXIT.ok} pass, ${EXIT.auditFailed} failed, ${EXIT.auditInconclusive} inconclusive, ${EXIT.failure}/${EXIT.limit} errors and limits`,
    },
  },
  required: ['subtype', 'is_error', 'result', 'session_id', 'audit', 'truncated', 'fail_on', 'exit_code'],
} as const;

const LOCATE_SCHEMA = {
  type: 'object',
  description: 'the object `spelunk locate --output-format json` prints',
  properties: {
    type: { type: 'string', enum: ['locate'] },
    query: { type: 'string' },
    results: {
      type: 'array',
      description: 'best first; paths relative to the repository root',
      items: {
        type: 'object',
        properties: {
          path: { type: 'string' },
          score: { type: 'number' },
          symbols: {
            type: 'array',
            items: {
              type: 'object',
              properties: { name: { type: 'string' }, kind: { type: 'string' }, line: { type: 'integer' } },
              required: ['name', 'kind', 'line'],
            },
          },
          lines: {
            type: 'array',
            items: { type: 'object', properties: { line: { type: 'integer' }, text: { type: 'string' } }, required: ['line', 'text'] },
          },
        },
        required: ['path', 'score', 'symbols', 'lines'],
      },
    },
    notes: { type: 'array', items: { type: 'string' }, description: 'why the ranking may be partial' },
  },
  required: ['type', 'query', 'results', 'notes'],
} as const;

/** Files a locate call may ask for. */
const LOCATE_MAX_K = 50;

/** The tools `spelunk mcp` lists, as the MCP `tools/list` result carries them. */
export const MCP_TOOLS = [
  {
    name: 'ask',
    title: 'Ask about the repository',
    description:
      'Researches a question about this one repository with read-only tools (file reads, rg, grep, find, ls) and answers with path:line evidence. Calls the Claude API: costs money (typically a few cents to a dollar, reported in usage.cost_usd) and takes from tens of seconds to several minutes. Starts a new conversation; continue it with ask_followup. For file names alone, locate is free and instant.',
    inputSchema: {
      type: 'object',
      properties: {
        question: questionSchema('what to find out, e.g. "where are sessions expired?"'),
        max_turns: { type: 'integer', minimum: 1, maximum: MAX_TURNS_CAP, description: 'model requests allowed for this question' },
      },
      required: ['question'],
    },
    outputSchema: ANSWER_SCHEMA,
    annotations: ANNOTATIONS,
  },
  {
    name: 'ask_followup',
    title: 'Follow up on an earlier answer',
    description:
      'Continues the conversation of an earlier ask (its files and findings stay in context, and the prompt cache stays warm). Calls the Claude API: costs money (usually less than the first ask) and takes tens of seconds to minutes.',
    inputSchema: {
      type: 'object',
      properties: {
        session_id: { type: 'string', pattern: '\\S', description: 'the session_id an earlier ask returned' },
        question: questionSchema(),
      },
      required: ['session_id', 'question'],
    },
    outputSchema: ANSWER_SCHEMA,
    annotations: ANNOTATIONS,
  },
  {
    name: 'audit',
    title: 'Audit the repository',
    description:
      'Runs a code audit of this repository for a yes/no question (e.g. "does every handler check auth?"): a verdict of pass, fail or inconclusive, with findings at verified locations; with diff, an audit of a change (findings classified against it). Calls the Claude API: costs money (typically tens of cents to a few dollars) and takes minutes.',
    inputSchema: {
      type: 'object',
      properties: {
        question: questionSchema(),
        fail_on: { type: 'string', enum: [...SEVERITIES], description: 'lowest severity that makes the verdict a failure (default high)' },
        diff: {
          type: 'string',
          pattern: '\\S',
          maxLength: 500,
          description: 'audit a change: BASE or BASE...HEAD, as `spelunk audit --diff` takes it (e.g. "origin/main"); only findings on changed lines fail it',
        },
      },
      required: ['question'],
    },
    outputSchema: AUDIT_SCHEMA,
    annotations: ANNOTATIONS,
  },
  {
    name: 'locate',
    title: 'Locate the files for a question (free)',
    description:
      'Ranks the files of this repository most likely to answer a question, with their best symbols and path:line lines. No model call and no cost: search (rg) plus BM25 over paths, content and tree-sitter definitions. Call it before ask, or instead of it when file names are enough.',
    inputSchema: {
      type: 'object',
      properties: {
        question: questionSchema('what to find, e.g. "where are sessions expired?"; identifiers and paths help'),
        k: { type: 'integer', minimum: 1, maximum: LOCATE_MAX_K, description: 'files to return (default 10)' },
      },
      required: ['question'],
    },
    outputSchema: LOCATE_SCHEMA,
    annotations: ANNOTATIONS,
  },
] as const;

export type McpCall =
  | { tool: 'ask'; question: string; maxTurns: number | null }
  | { tool: 'ask_followup'; sessionId: string; question: string }
  | { tool: 'audit'; question: string; failOn: Severity; diff: string | null }
  | { tool: 'locate'; question: string; k: number };

const TOOL_NAMES = MCP_TOOLS.map((t) => t.name);

/**
 * The message for a tools/call naming a tool spelunk does not list, or null for one of its tools. The server answers
 * such a call with a protocol error (-32602), as the MCP spec asks: there is no tool to report a result.
 */
export function unknownTool(name: string): string | null {
  return MCP_TOOLS.some((t) => t.name === name)
    ? null
    : `unknown tool "${name}"; the tools are ${TOOL_NAMES.slice(0, -1).join(', ')} and ${TOOL_NAMES.at(-1)}`;
}

/**
 * Validates a tools/call against the inputSchema the client was given (tools/list), so the two cannot disagree;
 * returns the typed call (strings trimmed, defaults filled in) or one line naming every field to fix.
 */
export function parseCall(name: string, args: unknown): McpCall | string {
  const tool = MCP_TOOLS.find((t) => t.name === name);
  if (!tool) return unknownTool(name)!;
  const input = args ?? {};
  const issues = schemaIssues(tool.inputSchema, input);
  if (issues.length > 0) return describeIssues(issues);
  const given = input as Record<string, unknown>;
  const question = (given.question as string).trim();
  switch (tool.name) {
    case 'ask':
      return { tool: 'ask', question, maxTurns: Object.hasOwn(given, 'max_turns') ? (given.max_turns as number) : null };
    case 'ask_followup':
      return { tool: 'ask_followup', sessionId: (given.session_id as string).trim(), question };
    case 'audit': {
      const diff = Object.hasOwn(given, 'diff') ? (given.diff as string).trim() : null;
      return { tool: 'audit', question, failOn: Object.hasOwn(given, 'fail_on') ? (given.fail_on as Severity) : 'high', diff };
    }
    case 'locate':
      return { tool: 'locate', question, k: Object.hasOwn(given, 'k') ? (given.k as number) : 10 };
  }
}

/** What a missing or blank string field should hold, for the message that asks for it. */
const WANTED: Readonly<Record<string, string>> = {
  question: 'a non-empty string such as "where is the config loaded?"',
  session_id: 'pass the session_id an earlier ask returned',
  diff: 'BASE or BASE...HEAD such as "origin/main", or leave it out to audit the whole repository',
};

/** The issues in one line: one phrase per field (its first issue), in the schema's order. */
function describeIssues(issues: readonly SchemaIssue[]): string {
  const first = new Map<string, SchemaIssue>();
  for (const issue of issues) if (!first.has(issue.at)) first.set(issue.at, issue);
  return [...first.values()].map(describeIssue).join('; ');
}

function describeIssue({ at, keyword, value, schema }: SchemaIssue): string {
  if (at === '') return 'the arguments must be a JSON object';
  if (schema.enum) return `${at} must be ${orList(schema.enum)}`;
  if (schema.type === 'integer') return `${at} must be a whole number from ${schema.minimum} to ${schema.maximum}`;
  if (keyword === 'maxLength') return `${at} is ${[...(value as string)].length} characters; keep it under ${schema.maxLength}`;
  return `${at} is required: ${WANTED[at] ?? 'a non-empty string'}`;
}

function orList(items: readonly string[]): string {
  return items.length === 1 ? items[0]! : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}
