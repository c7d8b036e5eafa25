import type { SandboxKind } from '../sandbox/kernel.js';
import type { SymbolSource } from '../symbols/layer.js';
import type { InputSchema, ParseResult } from '../schema.js';

export type { InputSchema, ParseResult };

/** What every tool returns: text for the model, a one-line summary for the human, and whether it failed. */
export interface ToolOutcome {
  /** Sent to the model as the tool_result content. */
  content: string;
  /** Shown to the person after the call, e.g. "34 lines" or "denied: pipes are not supported". */
  summary: string;
  /** True makes the tool_result `is_error: true`. */
  isError: boolean;
  /** Set when spelunk itself failed (a program could not start, a tool crashed), not the model's request. */
  infrastructure?: boolean;
}

/** What a tool may use while running; everything else it needs comes from its parsed input. */
export interface ToolContext {
  /** Real, absolute repository root (already realpath'd). */
  root: string;
  /** Aborted on Ctrl+C or run timeout: tools must stop and kill their processes. */
  signal: AbortSignal;
  /** Per-call wall-clock limit for processes, in milliseconds. */
  timeoutMs: number;
  /** Called with the real absolute path of every file a tool reads directly (for the read-only manifest). */
  onRead?: (absPath: string) => void;
  /** The sandbox programs run in; absent means the tables alone (the conservative reading). */
  sandbox?: SandboxKind;
  /** The session's symbol layer (read_file's outline); absent: a call makes its own, loading the grammar again. */
  symbols?: SymbolSource;
}

/** A tool as the Messages API lists it (the agent adds cache_control to the last one). */
export interface ToolDefinition {
  name: string;
  description: string;
  input_schema: object;
}

/** One tool: its definition for the model, input validation, a display string, and the run itself. */
export interface Tool<I = unknown> {
  name: string;
  description: string;
  inputSchema: InputSchema;
  /** Validates untrusted model input; never throws. */
  parse(input: unknown): ParseResult<I>;
  /** Short human form of a call, e.g. `rg -n "createServer" lib` or `lib/app.js:1-120`. */
  display(input: I): string;
  /** Runs the call; may throw only on programming errors (dispatch turns those into error outcomes too). */
  run(input: I, ctx: ToolContext): Promise<ToolOutcome>;
}
