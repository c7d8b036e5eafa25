import type { AgentEvent, ApiMessage } from '../agent/events.js';

/**
 * `--include-partial-messages`: the Messages API streaming events of each request, in the shape Claude Code writes
 * them (`{type: 'stream_event', event, parent_tool_use_id, session_id}`, the Agent SDK's SDKPartialAssistantMessage).
 * spelunk's client hands the loop text and thinking deltas and, at the end, the whole message, not the raw events;
 * so the events are rebuilt from those: `message_start` at the first delta (its id is the finished message's id only
 * once known, so it is "" there, and its usage is zero until `message_delta`), a `content_block_start`/`_delta`/`_stop`
 * per text or thinking block as it streams, each tool_use block whole (one `input_json_delta`) when the message is
 * complete, then `message_delta` (stop reason and usage) and `message_stop`. Signatures of thinking blocks are not
 * streamed (the `assistant` line carries the message as the API returned it).
 */
interface PartialMessages {
  /** The API events this agent event stands for, in order (none for most events). */
  eventsFor(event: AgentEvent): Array<Record<string, unknown>>;
}

type Kind = 'text' | 'thinking';

export function partialMessages(model: string): PartialMessages {
  let started = false;
  let open: { index: number; kind: Kind } | null = null;
  let next = 0;
  let turnText = false;
  let everText = false;

  const start = (): Array<Record<string, unknown>> => {
    if (started) return [];
    started = true;
    const usage = { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 };
    const message = { id: '', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage };
    return [{ type: 'message_start', message }];
  };
  const close = (): Array<Record<string, unknown>> => {
    if (open === null) return [];
    const stop = { type: 'content_block_stop', index: open.index };
    open = null;
    return [stop];
  };
  const delta = (kind: Kind, text: string): Array<Record<string, unknown>> => {
    const events = start();
    if (open?.kind !== kind) {
      events.push(...close());
      open = { index: next++, kind };
      events.push({ type: 'content_block_start', index: open.index, content_block: kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' } });
    }
    const body = kind === 'text' ? { type: 'text_delta', text } : { type: 'thinking_delta', thinking: text };
    events.push({ type: 'content_block_delta', index: open.index, delta: body });
    return events;
  };
  const finish = (message: ApiMessage): Array<Record<string, unknown>> => {
    const events = [...start(), ...close()];
    for (const block of message.content) {
      if (block.type !== 'tool_use') continue;
      const index = next++;
      events.push(
        { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } },
        { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) } },
        { type: 'content_block_stop', index },
      );
    }
    // The token counts as the API's message_delta carries them (its usage has no cache_creation split).
    const { cache_creation: _split, ...usage } = message.usage;
    events.push({ type: 'message_delta', delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence }, usage }, { type: 'message_stop' });
    return events;
  };

  return {
    eventsFor(event) {
      switch (event.type) {
        case 'request_start':
          started = false;
          open = null;
          next = 0;
          turnText = false;
          return [];
        case 'thinking':
          return delta('thinking', event.text);
        case 'text':
          // The loop puts "\n\n" before the first text of a request once earlier text was shown, so paragraphs do not
          // run together on a terminal; the API never sent it.
          if (!turnText && everText) {
            turnText = true;
            return [];
          }
          turnText = true;
          everText = true;
          return delta('text', event.text);
        case 'assistant_message':
          return finish(event.message);
        default:
          return [];
      }
    },
  };
}
