/**
 * The request validation the real Messages API performs, with its wording, so a client bug shows up in tests as
 * the same 400 invalid_request_error (BadRequestError) it would cause in production.
 */

import { checkEffort } from './mock-api-effort.js';

/** At most this many blocks may carry cache_control (tools + system + messages). */
export const MAX_BREAKPOINTS = 4;

/** Sampling parameters the current API version rejects even at default values. */
const REJECTED_SAMPLING = ['temperature', 'top_p', 'top_k'] as const;

export interface RuleOptions {
  /** count_tokens does not take max_tokens. */
  requireMaxTokens: boolean;
  /** Newer models reject a conversation ending with an assistant turn; count_tokens does not generate, so it does not care. */
  forbidPrefill: boolean;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The API's error message for the first rule `body` breaks, or null when the request is acceptable. */
export function checkRequest(body: unknown, opts: RuleOptions): string | null {
  if (!isObj(body)) return 'body: Input should be a valid dictionary';
  const required = opts.requireMaxTokens ? ['model', 'max_tokens', 'messages'] : ['model', 'messages'];
  const missing = required.find((field) => body[field] === undefined);
  if (missing) return `${missing}: Field required`;
  if (typeof body['model'] !== 'string' || body['model'] === '') return 'model: Input should be a valid string';
  const maxTokens = body['max_tokens'];
  if (opts.requireMaxTokens && !(Number.isInteger(maxTokens) && (maxTokens as number) >= 1)) {
    return 'max_tokens: Input should be greater than or equal to 1';
  }
  const sampling = REJECTED_SAMPLING.find((name) => name in body);
  if (sampling) return `\`${sampling}\` is deprecated for this model.`;
  const effort = checkEffort(body);
  if (effort) return effort;
  const messages = body['messages'];
  if (!Array.isArray(messages)) return 'messages: Input should be a valid list';
  return (
    checkSystem(body['system']) ??
    checkMessages(messages) ??
    checkBreakpoints(body, messages) ??
    checkPairing(messages) ??
    (opts.forbidPrefill ? checkPrefill(messages) : null)
  );
}

function checkSystem(system: unknown): string | null {
  if (system === undefined) return null;
  if (typeof system === 'string') return textProblem('system', system);
  if (!Array.isArray(system)) return 'system: Input should be a valid string or list';
  for (const block of system) {
    if (!isObj(block) || block['type'] !== 'text') return "system: Input tag should be 'text'";
    const problem = textProblem('system', block['text']);
    if (problem) return problem;
  }
  return null;
}

function checkMessages(messages: unknown[]): string | null {
  if (messages.length === 0) return 'messages: at least one message is required';
  const firstTurn = messages.find((m) => !isObj(m) || m['role'] !== 'system');
  if (isObj(firstTurn) && firstTurn['role'] !== 'user') return 'messages: first message must use the "user" role';
  for (const [i, message] of messages.entries()) {
    if (!isObj(message)) return `messages.${i}: Input should be a valid dictionary`;
    if (!['user', 'assistant', 'system'].includes(String(message['role']))) {
      return `messages.${i}.role: Input should be 'user', 'assistant' or 'system'`;
    }
    const content = message['content'];
    const empty = content === '' || (Array.isArray(content) && content.length === 0);
    if (empty) return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    if (typeof content === 'string') {
      const problem = textProblem('messages', content);
      if (problem) return problem;
      continue;
    }
    if (!Array.isArray(content)) return `messages.${i}.content: Input should be a valid string or list`;
    const problem = checkBlocks(content, `messages.${i}.content`);
    if (problem) return problem;
  }
  return null;
}

function checkBlocks(blocks: unknown[], where: string): string | null {
  for (const [j, block] of blocks.entries()) {
    if (!isObj(block) || typeof block['type'] !== 'string') return `${where}.${j}.type: Field required`;
    if (block['type'] === 'text') {
      const problem = textProblem('messages', block['text']);
      if (problem) return problem;
    }
    // Text nested in a tool_result is validated like any other text block.
    const nested = block['type'] === 'tool_result' ? block['content'] : undefined;
    if (Array.isArray(nested)) {
      const problem = checkBlocks(nested, `${where}.${j}.content`);
      if (problem) return problem;
    }
  }
  return null;
}

/** Empty and whitespace-only text blocks are rejected, each with its own message. */
function textProblem(field: 'system' | 'messages', text: unknown): string | null {
  if (typeof text !== 'string') return `${field}: text content blocks must have a string \`text\` field`;
  if (text === '') return `${field}: text content blocks must be non-empty`;
  if (text.trim() === '') return `${field}: text content blocks must contain non-whitespace text`;
  return null;
}

function checkBreakpoints(body: Json, messages: unknown[]): string | null {
  const system = Array.isArray(body['system']) ? body['system'] : [];
  const tools = Array.isArray(body['tools']) ? body['tools'] : [];
  const contentBlocks = messages.flatMap((m) => (isObj(m) && Array.isArray(m['content']) ? m['content'] : []));
  const found = [...tools, ...system, ...contentBlocks].filter((b) => isObj(b) && isObj(b['cache_control'])).length;
  if (found <= MAX_BREAKPOINTS) return null;
  return `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${found}.`;
}

/**
 * Every tool_use of an assistant message is answered by exactly one tool_result in the leading run of the very
 * next message, and every tool_result answers a tool_use of the message right before it.
 */
function checkPairing(messages: unknown[]): string | null {
  for (const [i, message] of messages.entries()) {
    const previous = messages[i - 1];
    const offered = isObj(previous) && previous['role'] === 'assistant' ? idsOf(previous, 'tool_use') : [];
    const unexpected = isObj(message) && message['role'] === 'user' ? unexpectedResult(message, offered) : null;
    if (unexpected) {
      return (
        `messages.${i}.content.${unexpected.index}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ` +
        `${unexpected.id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`
      );
    }
    const next = messages[i + 1];
    if (!isObj(message) || message['role'] !== 'assistant' || next === undefined) continue;
    const problem = checkAnswers(i, idsOf(message, 'tool_use'), next);
    if (problem) return problem;
  }
  return null;
}

function checkAnswers(i: number, asked: string[], next: unknown): string | null {
  if (asked.length === 0) return null;
  const blocks = isObj(next) && next['role'] === 'user' && Array.isArray(next['content']) ? next['content'] : [];
  const resultIds = blocks.map((b) => (isObj(b) && b['type'] === 'tool_result' ? String(b['tool_use_id']) : null));
  const duplicate = resultIds.findIndex((id, k) => id !== null && resultIds.indexOf(id) !== k);
  if (duplicate >= 0) {
    return (
      `messages.${i + 1}.content.${duplicate}: each tool_use must have a single result. ` +
      `Found multiple \`tool_result\` blocks with id: ${resultIds[duplicate]}`
    );
  }
  const leadingIds = resultIds.slice(0, leadingResults(blocks));
  const unanswered = asked.filter((id) => !leadingIds.includes(id));
  if (unanswered.length === 0) return null;
  if (unanswered.every((id) => resultIds.includes(id))) {
    return (
      `messages.${i + 1}: Did not find ${unanswered.length} \`tool_result\` block(s) at the beginning of this message. ` +
      'Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.'
    );
  }
  return (
    `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(', ')}. ` +
    'Each `tool_use` block must have a corresponding `tool_result` block in the next message.'
  );
}

function checkPrefill(messages: unknown[]): string | null {
  const last = messages.at(-1);
  if (!isObj(last) || last['role'] !== 'assistant') return null;
  return 'This model does not support assistant message prefill. The conversation must end with a user message.';
}

function unexpectedResult(message: Json, offered: string[]): { index: number; id: string } | null {
  const content = Array.isArray(message['content']) ? message['content'] : [];
  for (const [index, block] of content.entries()) {
    if (!isObj(block) || block['type'] !== 'tool_result') continue;
    const id = String(block['tool_use_id']);
    if (!offered.includes(id)) return { index, id };
  }
  return null;
}

function leadingResults(blocks: unknown[]): number {
  const firstOther = blocks.findIndex((b) => !isObj(b) || b['type'] !== 'tool_result');
  return firstOther === -1 ? blocks.length : firstOther;
}

function idsOf(message: Json, type: string): string[] {
  const content = Array.isArray(message['content']) ? message['content'] : [];
  return content.filter((b) => isObj(b) && b['type'] === type).map((b) => String((b as Json)['id']));
}
