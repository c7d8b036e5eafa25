import { escapeControls } from '../escape.js';
import type { ParseResult, ToolOutcome } from './tool.js';

/** Longest command shown to the person, in characters. */
const MAX_DISPLAY_CHARS = 300;
/** Longest refusal clause in the one-line summary, in characters. */
const MAX_SUMMARY_CHARS = 100;

/** The input of both command tools (bash, git): one command line, split by the same lexer. */
export interface CommandInput {
  command: string;
}

/**
 * Validates `{command: string}` from the model. `tool` names the tool in messages, `example` is a command it would run,
 * `what` says what a command consists of ("a program and its arguments").
 */
export function commandInputParser(tool: string, example: string, what: string): (input: unknown) => ParseResult<CommandInput> {
  const quoted = JSON.stringify(example);
  return (input) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      return { ok: false, error: `expected an object like {"command": ${quoted}}` };
    }
    const extra = Object.keys(input).filter((key) => key !== 'command');
    if (extra.length > 0) return { ok: false, error: `unexpected field ${extra.join(', ')}; ${tool} takes only {"command": "…"}` };
    const { command } = input as { command?: unknown };
    if (typeof command !== 'string') return { ok: false, error: `"command" must be a string, e.g. ${quoted}` };
    if (command.trim() === '') return { ok: false, error: `"command" is empty; give ${what}, e.g. ${quoted}` };
    return { ok: true, value: { command } };
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
