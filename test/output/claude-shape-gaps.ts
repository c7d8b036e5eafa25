/**
 * The fields of Claude Code's message types (@anthropic-ai/claude-agent-sdk) that spelunk's lines leave out; the type
 * check in claude-sdk-types.test.ts makes exactly these optional, and docs/ci.md's "What still differs from Claude
 * Code" names each one and says why.
 */
export const CLAUDE_SHAPE_GAPS = {
  /** system/init */
  init: ['claude_code_version'],
  /** the API message of an assistant line */
  message: ['container', 'context_management', 'diagnostics', 'stop_details'],
  /** a content block of that message */
  contentBlock: ['citations'],
  /** the usage of the assistant message and of the result */
  usage: ['cache_creation', 'fallback_credit', 'inference_geo', 'iterations', 'output_tokens_details', 'server_tool_use', 'service_tier', 'speed'],
  /** a modelUsage entry of the result */
  modelUsage: ['contextWindow', 'maxOutputTokens'],
  /** a stream_event's message_delta event (--include-partial-messages) */
  messageDelta: ['context_management'],
  /** its delta */
  messageDeltaDelta: ['container', 'stop_details'],
  /** its usage */
  messageDeltaUsage: ['fallback_credit', 'iterations', 'output_tokens_details', 'server_tool_use'],
} as const satisfies Record<string, readonly string[]>;
