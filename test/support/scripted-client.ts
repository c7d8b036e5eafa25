import type { Usage } from '../../src/agent/events.js';
import { ModelAbortError, ModelError, type Block, type ModelChunk, type ModelClient, type ModelRequest, type StopReason } from '../../src/agent/model.js';

/** One scripted model turn: the blocks it returns, or a failure. */
export type Step =
  | { blocks: Block[]; stop?: StopReason; usage?: Partial<Usage> }
  | { error: ModelError }
  | { hang: true };

/** A ModelClient that replays steps and records every request (deep-copied), for the loop's unit tests. */
export function scriptedClient(steps: Step[], opts: { countTokens?: number | null } = {}): ModelClient & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    requests,
    async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelChunk> {
      requests.push(structuredClone(request));
      const step = steps.shift();
      if (!step) throw new ModelError('scripted client: no step left', 500, 'api_error', null, false);
      if ('error' in step) throw step.error;
      if ('hang' in step) {
        if (signal.aborted) throw new ModelAbortError();
        await new Promise<void>((_, reject) => signal.addEventListener('abort', () => reject(new ModelAbortError()), { once: true }));
        return;
      }
      for (const block of step.blocks) if (block.type === 'text') yield { type: 'text', text: block.text };
      const hasTool = step.blocks.some((b) => b.type === 'tool_use');
      yield {
        type: 'message',
        response: {
          content: step.blocks,
          stopReason: step.stop ?? (hasTool ? 'tool_use' : 'end_turn'),
          usage: { input_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 10, ...step.usage },
          requestId: `req_${requests.length}`,
        },
      };
    },
    async countTokens() {
      return opts.countTokens === undefined ? 1000 : opts.countTokens;
    },
  };
}

export function toolUse(name: string, input: unknown, id: string): Block {
  return { type: 'tool_use', id, name, input };
}

export function text(t: string): Block {
  return { type: 'text', text: t };
}
