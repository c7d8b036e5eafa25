import { createHash } from 'node:crypto';
import { estimateCostUsd } from './pricing.js';
import type { Usage } from './events.js';
import type { ModelRequest } from './model.js';

/** Names of the system blocks, in order (src/preamble/system-prompt.ts builds them in this order). */
const SYSTEM_LABELS = ['rules', 'environment', 'project instructions', 'listing'];

/** One piece of the cached prefix, in prefix order: the model, each tool, each system block, each message. */
export interface Segment {
  name: string;
  hash: string;
  bytes: number;
}

/** What the previous request left in the cache: its prefix pieces and how many tokens were cached after it. */
export interface CacheState {
  model: string;
  segments: Segment[];
  cachedTokens: number;
}

/** A request that read less from the cache than the previous one had cached, and why (as far as spelunk can tell). */
export interface CacheMiss {
  /** e.g. `AGENTS.md changed (+214 bytes)`, `the model changed (a → b)`, `message 3 (user) changed (-1,200 bytes)`. */
  changed: string;
  /** Tokens that were cached and had to be written (or sent) again. */
  tokens: number;
  /** What the miss cost over a cache read (write price − read price); null when the model has no known price. */
  costUsd: number | null;
  /** The API's own reason (`diagnostics.cache_miss_reason.type`), when it gave one. */
  apiReason: string | null;
}

/**
 * Keeps the fingerprint of the previous request of one conversation and explains a drop in cache reads. Prefix
 * order is the API's (tools → system → messages), so the first piece that differs is the one that broke the cache.
 */
export class CacheWatch {
  #previous: CacheState | null;

  constructor(seed: CacheState | null = null) {
    this.#previous = seed;
  }

  /** Continues from a saved state (a resumed session), so its first request can be explained. */
  seed(state: CacheState | null): void {
    this.#previous = state;
  }

  /** Forgets the previous request (a new conversation is expected to start cold). */
  reset(): void {
    this.#previous = null;
  }

  /** The state to save with a session, so a resumed run can explain its first request. */
  state(): CacheState | null {
    return this.#previous;
  }

  /** Records this request; returns the miss when it read less than the previous request had cached. */
  observe(request: ModelRequest, usage: Usage, apiReason: string | null = null): CacheMiss | null {
    const segments = segmentsOf(request);
    const previous = this.#previous;
    this.#previous = { model: request.model, segments, cachedTokens: usage.cache_read_input_tokens + usage.cache_creation_input_tokens };
    if (!previous || usage.cache_read_input_tokens >= previous.cachedTokens) return null;
    const tokens = previous.cachedTokens - usage.cache_read_input_tokens;
    return {
      changed: describeChange(previous, { model: request.model, segments }),
      tokens,
      costUsd: missCost(request.model, tokens),
      apiReason,
    };
  }
}

/** The prefix pieces of a request, hashed without cache_control (moving a breakpoint changes no cached byte). */
export function segmentsOf(request: ModelRequest): Segment[] {
  const out: Segment[] = [piece('thinking', request.thinking ?? null)];
  for (const tool of request.tools) out.push(piece(`tool ${tool.name}`, withoutMarker(tool)));
  request.system.forEach((block, i) => out.push(...systemPieces(block, i)));
  request.messages.forEach((message, i) =>
    out.push(piece(`message ${i + 1} (${message.role})`, { role: message.role, content: message.content.map(withoutMarker) })),
  );
  return out;
}

/** The first piece, in prefix order, that differs; or why none does. */
export function describeChange(before: Omit<CacheState, 'cachedTokens'>, after: Omit<CacheState, 'cachedTokens'>): string {
  if (before.model !== after.model) return `the model changed (${before.model} → ${after.model})`;
  const now = new Map(after.segments.map((s) => [s.name, s]));
  const was = new Set(before.segments.map((s) => s.name));
  for (const [i, old] of before.segments.entries()) {
    const cur = after.segments[i];
    if (cur && cur.name === old.name && cur.hash === old.hash) continue;
    if (cur && cur.name === old.name) return `${old.name} changed (${signed(cur.bytes - old.bytes)} bytes)`;
    if (!now.has(old.name)) return `${old.name} removed`;
    if (cur && !was.has(cur.name)) return `${cur.name} added`;
    return `${old.name} moved`;
  }
  // Everything the previous request sent is still there, unchanged: the entry itself is gone.
  return 'nothing in the prompt changed (the cache entry expired: more than 5 minutes since the previous request, or evicted)';
}

/** `cache miss: AGENTS.md changed (+214 bytes), ~12,340 tokens re-written ≈ $0.05 (API: system_changed)` */
export function cacheMissLine(miss: CacheMiss): string {
  const cost = miss.costUsd === null ? '' : ` ≈ $${miss.costUsd < 0.01 ? miss.costUsd.toFixed(4) : miss.costUsd.toFixed(2)}`;
  const api = miss.apiReason ? ` (API: ${miss.apiReason})` : '';
  return `cache miss: ${miss.changed}, ~${grouped(miss.tokens)} tokens re-written${cost}${api}`;
}

function missCost(model: string, tokens: number): number | null {
  const zero: Usage = { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 };
  const written = estimateCostUsd(model, { ...zero, cache_creation_input_tokens: tokens });
  const read = estimateCostUsd(model, { ...zero, cache_read_input_tokens: tokens });
  return written === null || read === null ? null : written - read;
}

/** One instructions file in the project-instructions block (system-prompt.ts fileBlock; the tag may carry a suffix). */
const FILE_ELEMENT = /<(repository-file(?:-\d+)?) path="([^"\n]{1,100})"[^>\n]*>[\s\S]*?<\/\1>/g;

/**
 * A system block as prefix pieces. The project-instructions block is split into one piece per file, named by its
 * path as a person would say it (`AGENTS.md`, `../CLAUDE.md`), then the rest of the block: so a miss names the file
 * that changed, or the one that appeared or went.
 */
function systemPieces(block: ModelRequest['system'][number], index: number): Segment[] {
  const label = SYSTEM_LABELS[index] ?? `system block ${index + 1}`;
  if (label !== 'project instructions') return [piece(label, withoutMarker(block))];
  const files = [...block.text.matchAll(FILE_ELEMENT)].map((m) => piece(m[2]!, m[0]));
  return [...files, piece(label, block.text.replace(FILE_ELEMENT, ''))];
}

function piece(name: string, value: unknown): Segment {
  const json = JSON.stringify(value) ?? 'null';
  return { name, hash: createHash('sha256').update(json).digest('hex').slice(0, 16), bytes: Buffer.byteLength(json) };
}

function withoutMarker<T extends object>(value: T): Omit<T, 'cache_control'> {
  const { cache_control: _ignored, ...rest } = value as T & { cache_control?: unknown };
  return rest;
}

function signed(n: number): string {
  return `${n >= 0 ? '+' : '-'}${grouped(Math.abs(n))}`;
}

/** Thousands separators without Intl (no ICU set-up, no locale). */
function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+$)/g, ',');
}
