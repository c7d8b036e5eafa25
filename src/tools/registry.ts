import type { Redactor } from '../secrets/redactor.js';
import type { Tool, ToolContext, ToolDefinition, ToolOutcome } from './tool.js';

/** The tools of one session, by name; dispatch turns every failure into an error outcome for the model. */
export class ToolRegistry {
  readonly #tools: ReadonlyMap<string, Tool<any>>;
  readonly #redactor: Redactor | null;

  /** `redactor`: every outcome passes through it before the model, the events and the saved session see it. */
  constructor(tools: readonly Tool<any>[], redactor: Redactor | null = null) {
    this.#tools = new Map(tools.map((t) => [t.name, t]));
    this.#redactor = redactor;
  }

  names(): string[] {
    return [...this.#tools.keys()];
  }

  /** Definitions in a fixed order: the tools are the first bytes of the cached prefix. */
  definitions(): ToolDefinition[] {
    return [...this.#tools.values()].map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));
  }

  /** Human form of a requested call, shown before it runs. */
  display(name: string, input: unknown): string {
    const tool = this.#tools.get(name);
    if (!tool) return '(unknown tool)';
    const parsed = tool.parse(input);
    return parsed.ok ? tool.display(parsed.value) : '(invalid input)';
  }

  /** Never throws: unknown tools, bad input, cancellation and crashes all come back as `isError` outcomes. */
  async dispatch(name: string, input: unknown, ctx: ToolContext): Promise<ToolOutcome> {
    const outcome = await this.#run(name, input, ctx);
    if (this.#redactor === null) return outcome;
    try {
      return await this.#redactor.outcome(name, input, outcome);
    } catch (error) {
      // Fail closed: an output the secret scan could not read is not sent.
      const message = error instanceof Error ? error.message : String(error);
      return { content: `${name}: the output was withheld because the secret scan failed (${message}).`, summary: 'withheld: secret scan failed', isError: true, infrastructure: true };
    }
  }

  async #run(name: string, input: unknown, ctx: ToolContext): Promise<ToolOutcome> {
    const tool = this.#tools.get(name);
    if (!tool) {
      const known = this.names().join(', ');
      return { content: `Unknown tool "${name}". Available tools: ${known}.`, summary: `unknown tool ${name}`, isError: true };
    }
    const parsed = tool.parse(input);
    if (!parsed.ok) {
      return { content: `Invalid input for ${name}: ${parsed.error}`, summary: `invalid input: ${parsed.error}`, isError: true };
    }
    if (ctx.signal.aborted) return cancelled();
    try {
      return await tool.run(parsed.value, ctx);
    } catch (error) {
      if (ctx.signal.aborted) return cancelled();
      const message = error instanceof Error ? error.message : String(error);
      // A crash is spelunk's failure, not the model's request: the run must not end as a success.
      return { content: `${name} failed: ${message}`, summary: `failed: ${message}`, isError: true, infrastructure: true };
    }
  }
}

function cancelled(): ToolOutcome {
  return { content: 'Cancelled by the user before it finished.', summary: 'cancelled', isError: true };
}
