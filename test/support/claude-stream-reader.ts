/**
 * A stream-json consumer written the way readers of `claude -p --output-format stream-json` are: split lines, parse,
 * dispatch on `type` (and `subtype` for system), skip whatever it does not know. It knows nothing about spelunk, so a
 * test that feeds it spelunk's stream shows such readers work unchanged.
 */
export interface ClaudeStreamSummary {
  sessionId: string | null;
  model: string | null;
  tools: string[];
  /** Text blocks of the assistant messages, in order. */
  texts: string[];
  /** tool_use blocks of the assistant messages. */
  toolUses: Array<{ id: string; name: string; input: unknown }>;
  /** tool_result blocks of the user messages, by tool_use_id. */
  toolResults: Map<string, { content: string; isError: boolean }>;
  result: { subtype: string; isError: boolean; text: string; numTurns: number; costUsd: number | null } | null;
  skipped: number;
}

export function readClaudeStream(ndjson: string): ClaudeStreamSummary {
  const out: ClaudeStreamSummary = { sessionId: null, model: null, tools: [], texts: [], toolUses: [], toolResults: new Map(), result: null, skipped: 0 };
  for (const line of ndjson.split('\n')) {
    if (line.trim() === '') continue;
    const event = JSON.parse(line) as Record<string, any>;
    switch (event.type) {
      case 'system':
        if (event.subtype !== 'init') break;
        out.sessionId = event.session_id;
        out.model = event.model;
        out.tools = event.tools;
        continue;
      case 'assistant':
        for (const block of event.message.content) {
          if (block.type === 'text') out.texts.push(block.text);
          if (block.type === 'tool_use') out.toolUses.push({ id: block.id, name: block.name, input: block.input });
        }
        continue;
      case 'user':
        for (const block of event.message.content) {
          if (block.type === 'tool_result') out.toolResults.set(block.tool_use_id, { content: block.content, isError: block.is_error === true });
        }
        continue;
      case 'result':
        out.result = { subtype: event.subtype, isError: event.is_error, text: event.result, numTurns: event.num_turns, costUsd: event.total_cost_usd };
        continue;
      default:
        break;
    }
    out.skipped++;
  }
  return out;
}
