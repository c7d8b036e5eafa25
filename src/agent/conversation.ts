import type { CacheState } from './budget.js';
import { CacheWatch } from './cache-watch.js';
import type { Usage } from './events.js';
import type { Effort } from './effort.js';
import type { Block, Message, ModelRequest, SystemBlock, ToolDefinition } from './model.js';

/** Tool results older than the newest few are replaced by this once the prompt nears the context window. */
const ELIDED_RESULT = '[earlier tool output removed to keep the conversation within the context window; run the tool again if you need it]';
/** Tool-result messages (from the end) that compaction never touches. */
const KEEP_RECENT_RESULT_MESSAGES = 2;
/** Results shorter than this are not worth eliding. */
const ELIDE_MIN_CHARS = 400;

/** Where a cache breakpoint sat in the previous request: message index and block index. */
interface Position {
  message: number;
  block: number;
}

/**
 * The messages of one REPL session (or one-shot question). It keeps the API's invariants: the first message is the
 * user's, every tool_use is answered in the next message, and roles alternate (a new question after a user message
 * is merged into it rather than sent as a second user turn).
 */
export class Conversation {
  readonly messages: Message[] = [];
  /** Prompt tokens of the latest request (input + cache write + cache read), for compaction and the budget. */
  lastPromptTokens = 0;
  /** What the prompt cache holds of this conversation after the latest response; null: nothing known (new, resumed). */
  cache: CacheState | null = null;
  /** The most output tokens one response of this conversation used (the budget's output reserve). */
  largestOutputTokens = 0;
  /** The id of the latest response, for the API's cache diagnostics (which compare with that request). */
  lastMessageId: string | null = null;
  /** Explains a request that read less from the cache than the previous one of this conversation had cached. */
  readonly cacheWatch = new CacheWatch();
  #previousBreakpoint: Position | null = null;

  /** Adds a question; returns a mark to roll the conversation back to its state before it. */
  addQuestion(text: string): RollbackMark {
    const mark = this.#mark();
    const block: Block = { type: 'text', text };
    const last = this.messages.at(-1);
    if (last?.role === 'user') last.content.push(block);
    else this.messages.push({ role: 'user', content: [block] });
    return mark;
  }

  /**
   * Appends spelunk's own note (the last-request notice) to the newest user message, after any tool results. It is
   * kept, so the next request repeats the bytes this one sent and its cache entry is read; the system prompt and the
   * earlier messages, the cached prefix, are untouched.
   */
  addNote(text: string): void {
    this.addQuestion(text);
  }

  addAssistant(content: Block[]): void {
    const kept = content.filter((b) => b.type !== 'text' || b.text.trim() !== '');
    if (kept.length > 0) this.messages.push({ role: 'assistant', content: kept });
  }

  /** Tool results go first in the next user message, as the API requires. */
  addToolResults(results: Block[]): void {
    this.messages.push({ role: 'user', content: results });
  }

  /** A user-side nudge after `pause_turn`, so the conversation never ends on an assistant message. */
  addContinue(): void {
    this.messages.push({ role: 'user', content: [{ type: 'text', text: 'Continue.' }] });
  }

  rollback(mark: RollbackMark): void {
    this.messages.length = mark.messages;
    const last = this.messages.at(-1);
    if (last && mark.lastContent !== null) last.content.length = mark.lastContent;
    this.#previousBreakpoint = null;
    // The entry the latest request wrote ends in what was just removed.
    this.cache = null;
  }

  /**
   * Records a response's usage: its prompt size, the prefix now in the cache (what it read plus what it wrote, both
   * refreshed `at`), and its output for the budget's reserve.
   */
  settled(usage: Usage, at: number): void {
    this.lastPromptTokens = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;
    const cached = usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
    this.cache = cached > 0 ? { tokens: cached, at } : null;
    this.largestOutputTokens = Math.max(this.largestOutputTokens, usage.output_tokens);
  }

  clear(): void {
    this.messages.length = 0;
    this.lastPromptTokens = 0;
    this.cache = null;
    this.largestOutputTokens = 0;
    this.lastMessageId = null;
    this.cacheWatch.reset();
    this.#previousBreakpoint = null;
  }

  /**
   * Builds the request with cache breakpoints: the caller's system blocks carry one (tools + system); here the
   * last block of the newest user message gets one (rolling), and the block that carried it in the previous
   * request keeps one, so a turn that adds more than 20 blocks still finds the earlier entry (the lookback rule).
   * Never more than 3 in all, below the API's limit of 4. Markers go on copies: stored messages stay unmarked.
   */
  request(base: RequestBase): ModelRequest {
    const { request, breakpoint } = this.#build(base, this.messages);
    this.#previousBreakpoint = breakpoint;
    return request;
  }

  /**
   * The request `request()` would build if `note` were added first (the budget check prices it), without adding
   * the note or moving the breakpoints.
   */
  draft(base: RequestBase, note: string | null): ModelRequest {
    const messages = note === null ? this.messages : withNote(this.messages, note);
    return this.#build(base, messages).request;
  }

  #build(base: RequestBase, stored: readonly Message[]): { request: ModelRequest; breakpoint: Position | null } {
    const messages = stored.map((m) => ({ role: m.role, content: [...m.content] }));
    const lastIndex = messages.length - 1;
    const last = messages[lastIndex];
    const marks: Position[] = [];
    if (last && last.role === 'user' && last.content.length > 0) marks.push({ message: lastIndex, block: last.content.length - 1 });
    const prev = this.#previousBreakpoint;
    if (prev && !(prev.message === marks[0]?.message && prev.block === marks[0]?.block) && messages[prev.message]?.content[prev.block]) {
      marks.push(prev);
    }
    for (const mark of marks) {
      const message = messages[mark.message]!;
      message.content[mark.block] = { ...message.content[mark.block]!, cache_control: { type: 'ephemeral' } } as Block;
    }
    const request: ModelRequest = {
      model: base.model,
      max_tokens: base.maxTokens,
      system: base.system,
      tools: base.tools,
      messages,
      ...(base.thinking ? { thinking: { type: 'adaptive' as const } } : {}),
      ...(base.effort ? { output_config: { effort: base.effort } } : {}),
    };
    return { request, breakpoint: marks[0] ?? null };
  }

  /** Replaces old, large tool results with a placeholder; structure (ids, order, is_error) is kept. Returns how many. */
  compact(): number {
    const resultMessages = this.messages
      .map((m, i) => ({ m, i }))
      .filter(({ m }) => m.role === 'user' && m.content.some((b) => b.type === 'tool_result'));
    const old = resultMessages.slice(0, Math.max(0, resultMessages.length - KEEP_RECENT_RESULT_MESSAGES));
    let elided = 0;
    for (const { m } of old) {
      m.content = m.content.map((b) => {
        if (b.type !== 'tool_result' || b.content.length < ELIDE_MIN_CHARS) return b;
        elided++;
        return { ...b, content: ELIDED_RESULT };
      });
    }
    // The cached prefix ran through what was just replaced: the next request writes it anew.
    if (elided > 0) this.cache = null;
    return elided;
  }

  #mark(): RollbackMark {
    const last = this.messages.at(-1);
    return { messages: this.messages.length, lastContent: last ? last.content.length : null };
  }
}

/** What a request needs besides the messages. */
export interface RequestBase {
  model: string;
  maxTokens: number;
  system: SystemBlock[];
  tools: ToolDefinition[];
  thinking: boolean;
  /** Sent as output_config.effort; absent or null: the model's default. */
  effort?: Effort | null;
}

/** A copy of `messages` with `note` appended as addNote would (to the last user message, or as a new one). */
function withNote(messages: readonly Message[], note: string): Message[] {
  const copy = messages.map((m) => ({ role: m.role, content: [...m.content] }));
  const block: Block = { type: 'text', text: note };
  const last = copy.at(-1);
  if (last?.role === 'user') last.content.push(block);
  else copy.push({ role: 'user', content: [block] });
  return copy;
}

interface RollbackMark {
  messages: number;
  lastContent: number | null;
}
