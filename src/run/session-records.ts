import type { CacheState } from '../agent/cache-watch.js';
import type { Block, Message } from '../agent/model.js';

/**
 * A saved session is untrusted input: anyone who can write the state directory (or a synced or restored copy of it)
 * wrote it. Each record is rebuilt field by field from what it must be, never passed on as parsed: a `head` reaches
 * git (`"head": "--output=FILE"` made `git diff` truncate FILE), a model name and a question reach the terminal, the
 * messages reach the API. Anything else is a damaged file, which is ignored whole.
 */

export const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A full object id: SHA-1 or SHA-256, lower-case hex, as `git rev-parse` prints it. */
const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
const PREAMBLE_HASH = /^[0-9a-f]{16}$/;
/** Model names as the API spells them (`claude-sonnet-4-5`, `claude-3-5-haiku@20241022`, a gateway's `org/name:tag`). */
const MODEL = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,99}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;
/** tool_use ids (`toolu_…`) and tool names, as the API defines them. */
const TOOL_USE_ID = /^[A-Za-z0-9_-]{1,256}$/;
const TOOL_NAME = /^[A-Za-z0-9_-]{1,128}$/;
/** Bounds on one record: far above what a real conversation writes, low enough that nothing degenerate is kept. */
const MAX_MESSAGES = 100_000;
const MAX_SEGMENTS = 100_000;
const MAX_SHORT_CHARS = 4_096;

/** The first line of a session file. */
export interface HeaderRecord {
  type: 'session';
  version: 1;
  session_id: string;
  root: string;
  created_at: string;
}

/**
 * One completed question. `messages` replace the conversation from index `base` on: a question added to a trailing
 * user message (after a cancelled one) rewrites that message, so a record can start one message back.
 */
export interface TurnRecord {
  type: 'turn';
  at: string;
  question: string;
  base: number;
  messages: Message[];
  model: string;
  head: string | null;
  preamble_hash: string;
  cost_usd: number | null;
  /** Written after a model request mid-question (the question's cost is in its final record). */
  partial?: boolean;
  /** The fingerprint of the last request, so a resumed run can explain a cache miss on its first request. */
  cache?: CacheState | null;
}

type SessionRecord = HeaderRecord | TurnRecord;
type Checked<T> = T | { bad: string };

/** The record `value` (one parsed line) as it must be, or what is wrong with it (a few words, no stored text). */
export function checkRecord(value: unknown): Checked<SessionRecord> {
  if (!isObject(value)) return { bad: 'a line is not a record' };
  if (value.type === 'session') return checkHeader(value);
  if (value.type === 'turn') return checkTurn(value);
  return { bad: 'a record of unknown type' };
}

/** A parse result that is a failure. */
export function isBad<T>(checked: Checked<T>): checked is { bad: string } {
  return isObject(checked) && typeof (checked as { bad?: unknown }).bad === 'string' && Object.keys(checked).length === 1;
}

function checkHeader(value: Record<string, unknown>): Checked<HeaderRecord> {
  if (value.version !== 1) return { bad: 'the header has an unknown version' };
  if (!matches(value.session_id, SESSION_ID)) return { bad: 'the session id is not a session id' };
  if (!shortText(value.root) || !matches(value.created_at, TIMESTAMP)) return { bad: 'the header is damaged' };
  return {
    type: 'session',
    version: 1,
    session_id: value.session_id as string,
    root: value.root as string,
    created_at: value.created_at as string,
  };
}

function checkTurn(value: Record<string, unknown>): Checked<TurnRecord> {
  const { at, question, base, model, head, preamble_hash: hash, cost_usd: cost, partial, cache } = value;
  if (!(head === null || matches(head, OBJECT_ID))) return { bad: 'a head is not a commit id' };
  if (!matches(model, MODEL)) return { bad: 'a model name is not one' };
  if (!matches(at, TIMESTAMP) || typeof question !== 'string' || !matches(hash, PREAMBLE_HASH)) return { bad: 'a turn is damaged' };
  if (!count(base, MAX_MESSAGES) || !(cost === null || (typeof cost === 'number' && Number.isFinite(cost) && cost >= 0))) {
    return { bad: 'a turn is damaged' };
  }
  if (!(partial === undefined || typeof partial === 'boolean')) return { bad: 'a turn is damaged' };
  const messages = checkMessages(value.messages);
  if (isBad(messages)) return messages;
  const state = cache === undefined || cache === null ? cache : checkCache(cache);
  if (state !== undefined && state !== null && isBad(state)) return state;
  return {
    type: 'turn', at: at as string, question, base: base as number, messages, model: model as string, head: head as string | null,
    preamble_hash: hash as string, cost_usd: cost as number | null,
    ...(partial === undefined ? {} : { partial }),
    ...(state === undefined ? {} : { cache: state }),
  };
}

function checkMessages(value: unknown): Checked<Message[]> {
  if (!Array.isArray(value) || value.length > MAX_MESSAGES) return { bad: 'the messages are damaged' };
  const messages: Message[] = [];
  for (const message of value) {
    if (!isObject(message) || (message.role !== 'user' && message.role !== 'assistant') || !Array.isArray(message.content)) {
      return { bad: 'a message is damaged' };
    }
    const content: Block[] = [];
    for (const block of message.content) {
      const checked = checkBlock(block);
      if (checked === null) return { bad: 'a message block is damaged' };
      content.push(checked);
    }
    messages.push({ role: message.role, content });
  }
  return messages;
}

/**
 * The fields a stored block keeps, per type, beyond the ones checked below: what the API put on the wire and the live
 * conversation sent back (`caller` on tool_use, `citations` on text). A resumed request must send each block byte for
 * byte as the live one did, or the prompt cache misses from that block on; so a block keeps its stored key order.
 */
const WIRE_FIELDS: Record<string, readonly string[]> = {
  text: ['type', 'text', 'citations'],
  thinking: ['type', 'thinking', 'signature'],
  redacted_thinking: ['type', 'data'],
  tool_use: ['type', 'id', 'name', 'input', 'caller'],
  tool_result: ['type', 'tool_use_id', 'content', 'is_error'],
};

/**
 * A block checked and rebuilt with its known fields only, in the order they were stored (a cache_control marker is
 * the sender's, never stored state's).
 */
function checkBlock(block: unknown): Block | null {
  if (!isObject(block) || typeof block.type !== 'string' || !checkFields(block)) return null;
  const keep = WIRE_FIELDS[block.type] ?? [];
  return Object.fromEntries(Object.entries(block).filter(([key]) => keep.includes(key))) as Block;
}

/** The checks of each block type's fields (the optional wire fields: a shape the API gives them, or absent). */
function checkFields(block: Record<string, unknown>): boolean {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' && (block.citations === undefined || block.citations === null || Array.isArray(block.citations));
    case 'thinking':
      return typeof block.thinking === 'string' && typeof block.signature === 'string';
    case 'redacted_thinking':
      return typeof block.data === 'string';
    case 'tool_use':
      return matches(block.id, TOOL_USE_ID) && matches(block.name, TOOL_NAME) && isObject(block.input) && (block.caller === undefined || checkCaller(block.caller));
    case 'tool_result':
      return matches(block.tool_use_id, TOOL_USE_ID) && typeof block.content === 'string' && (block.is_error === undefined || typeof block.is_error === 'boolean');
    default:
      return false;
  }
}

/** A tool_use's `caller`: `{"type":"direct"}`, or a server tool's (`type` and a `tool_id`), short strings only. */
function checkCaller(value: unknown): boolean {
  return isObject(value) && Object.values(value).every(shortText) && typeof value.type === 'string';
}

function checkCache(value: unknown): Checked<CacheState> {
  if (!isObject(value) || !matches(value.model, MODEL) || !count(value.cachedTokens, Number.MAX_SAFE_INTEGER)) {
    return { bad: 'the cache state is damaged' };
  }
  const segments = value.segments;
  if (!Array.isArray(segments) || segments.length > MAX_SEGMENTS) return { bad: 'the cache state is damaged' };
  const checked = segments.map((s: unknown) =>
    isObject(s) && shortText(s.name) && shortText(s.hash) && count(s.bytes, Number.MAX_SAFE_INTEGER)
      ? { name: s.name as string, hash: s.hash as string, bytes: s.bytes as number }
      : null,
  );
  if (checked.some((s) => s === null)) return { bad: 'the cache state is damaged' };
  return { model: value.model as string, segments: checked as CacheState['segments'], cachedTokens: value.cachedTokens as number };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function matches(value: unknown, pattern: RegExp): boolean {
  return typeof value === 'string' && pattern.test(value);
}

function shortText(value: unknown): boolean {
  return typeof value === 'string' && value.length <= MAX_SHORT_CHARS;
}

function count(value: unknown, max: number): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= max;
}
