import { escapeControls } from '../escape.js';
import { schemaIssues } from '../schema.js';
import type { InputSchema, ParseResult, ToolOutcome } from './tool.js';

/** Longest command shown to the person, in characters. */
const MAX_DISPLAY_CHARS = 300;
/** Longest refusal clause in the one-line summary, in characters. */
const MAX_SUMMARY_CHARS = 100;

/** The input of both command tools (bash, git): one command line, split by the same lexer. */
export interface CommandInput {
  command: string;
}

/**
 * The input schema of a command tool: one non-blank `command` string. `description` says what the model may send.
 */
export function commandInputSchema(description: string): InputSchema {
  return {
    type: 'object',
    properties: { command: { type: 'string', description, pattern: '\\S' } },
    required: ['command'],
    additionalProperties: false,
  };
}

/**
 * Validates `{command: string}` from the model against `schema` (commandInputSchema). `tool` names the tool in
 * messages, `example` is a command it would run, `what` says what a command consists of ("a program and its arguments").
 */
export function commandInputParser(
  schema: InputSchema,
  tool: string,
  example: string,
  what: string,
): (input: unknown) => ParseResult<CommandInput> {
  const quoted = JSON.stringify(example);
  return (input) => {
    const [issue] = schemaIssues(schema, input);
    if (issue === undefined) return { ok: true, value: { command: (input as CommandInput).command } };
    if (issue.at === '') {
      if (issue.keyword === 'additionalProperties') {
        return { ok: false, error: `unexpected field ${issue.keys!.join(', ')}; ${tool} takes only {"command": "…"}` };
      }
      return { ok: false, error: `expected an object like {"command": ${quoted}}` };
    }
    if (issue.keyword === 'pattern') return { ok: false, error: `"command" is empty; give ${what}, e.g. ${quoted}` };
    return { ok: false, error: `"command" must be a string, e.g. ${quoted}` };
  };
}

/** A policy refusal: the whole reason for the model, its first clause (cut to 100 characters) for the person. */
export function refusal(reason: string): ToolOutcome {
  const clause = reason.split('; ')[0] as string;
  const summary = clause.length > MAX_SUMMARY_CHARS ? `${clause.slice(0, MAX_SUMMARY_CHARS - 3)}…` : clause;
  return { content: `Command refused: ${reason}`, summary: `denied: ${summary}`, isError: true };
}

/** A command as one printable line: control characters are shown escaped, never sent to the terminal. */
export function printableCommand(command: string): string {
  const safe = escapeControls(command);
  return safe.length > MAX_DISPLAY_CHARS ? `${safe.slice(0, MAX_DISPLAY_CHARS - 1)}…` : safe;
}
