import { createHash } from 'node:crypto';

/** How far back (in prefix blocks) a breakpoint looks for an entry an earlier request wrote, as the API does. */
export const LOOKBACK_BLOCKS = 20;

export type Ttl = '5m' | '1h';

/** The usage numbers the mock reports for one request (the API's field names). */
export interface MockUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  output_tokens: number;
}

export type PromptUsage = Omit<MockUsage, 'output_tokens'>;

/** One unit of the prompt prefix in API order: a tool definition, a system block or a message content block. */
interface PrefixBlock {
  tokens: number;
  /** Hash of the whole prefix up to and including this block (model included: caches are per model). */
  hash: string;
  breakpoint: Ttl | undefined;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The mock's deterministic token estimate: a quarter of the characters of the value's JSON, rounded up. */
export function tokensOf(value: unknown): number {
  return Math.ceil((JSON.stringify(value) ?? '').length / 4);
}

/** Output tokens of generated content: text, thinking and tool input characters / 4 (at least 1, as the API never reports 0). */
export function outputTokensOf(content: ReadonlyArray<Json>): number {
  const chars = content.reduce((sum, block) => {
    if (block['type'] === 'text') return sum + String(block['text']).length;
    if (block['type'] === 'thinking') return sum + String(block['thinking']).length;
    return sum + (JSON.stringify(block['input']) ?? '').length;
  }, 0);
  return Math.max(1, Math.ceil(chars / 4));
}

/** Total prompt tokens of a body (tools + system + messages), used by count_tokens and as the accounting total. */
export function promptTokens(body: Json): number {
  return prefixUnits(body).reduce((sum, unit) => sum + tokensOf(unit.block), 0);
}

/**
 * Simulates prompt caching for one request against the server's cache map, updating the map with what this
 * request writes. Reads land only on entries an earlier request wrote, within the lookback window of one of this
 * request's breakpoints; each breakpoint beyond the read writes, unless its prefix is under the minimum size.
 */
export function accountCache(body: Json, cache: Set<string>, minTokens: number): PromptUsage {
  const blocks = prefixBlocks(body);
  const cumulative: number[] = [];
  blocks.reduce((sum, block, i) => (cumulative[i] = sum + block.tokens), 0);
  const total = cumulative.at(-1) ?? 0;
  const breakpoints = blocks.flatMap((block, i) => (block.breakpoint ? [i] : []));

  const readEnd = Math.max(-1, ...breakpoints.map((p) => nearestEntry(blocks, cache, p)));
  const read = readEnd >= 0 ? (cumulative[readEnd] ?? 0) : 0;

  const written = { '5m': 0, '1h': 0 };
  let writtenUpTo = read;
  for (const p of breakpoints) {
    const upTo = cumulative[p] ?? 0;
    const block = blocks[p];
    if (p <= readEnd || upTo < minTokens || !block?.breakpoint) continue;
    written[block.breakpoint] += upTo - writtenUpTo;
    writtenUpTo = upTo;
    cache.add(block.hash);
  }
  const creation = written['5m'] + written['1h'];
  return {
    input_tokens: total - read - creation,
    cache_creation_input_tokens: creation,
    cache_read_input_tokens: read,
    cache_creation: { ephemeral_5m_input_tokens: written['5m'], ephemeral_1h_input_tokens: written['1h'] },
  };
}

/** The latest position at or before breakpoint `p`, at most LOOKBACK_BLOCKS back, holding a cache entry; -1 if none. */
function nearestEntry(blocks: PrefixBlock[], cache: Set<string>, p: number): number {
  for (let q = p; q >= 0 && p - q <= LOOKBACK_BLOCKS; q--) {
    const block = blocks[q];
    if (block && cache.has(block.hash)) return q;
  }
  return -1;
}

function prefixBlocks(body: Json): PrefixBlock[] {
  let hash = sha256(`model:${String(body['model'])}`);
  return prefixUnits(body).map(({ scope, block }) => {
    // cache_control is not part of the cached content: moving a breakpoint must not change the prefix.
    const plain = withoutCacheControl(block);
    hash = sha256(`${hash}\n${scope}\n${JSON.stringify(plain)}`);
    return { tokens: tokensOf(plain), hash, breakpoint: breakpointOf(block) };
  });
}

function prefixUnits(body: Json): Array<{ scope: string; block: unknown }> {
  const units: Array<{ scope: string; block: unknown }> = [];
  for (const tool of asArray(body['tools'])) units.push({ scope: 'tool', block: tool });
  const system = body['system'];
  const systemBlocks = typeof system === 'string' ? [{ type: 'text', text: system }] : asArray(system);
  for (const block of systemBlocks) units.push({ scope: 'system', block });
  for (const message of asArray(body['messages'])) {
    if (!isObj(message)) continue;
    const content = message['content'];
    const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : asArray(content);
    for (const block of blocks) units.push({ scope: String(message['role']), block });
  }
  return units;
}

function breakpointOf(block: unknown): Ttl | undefined {
  if (!isObj(block) || !isObj(block['cache_control'])) return undefined;
  return block['cache_control']['ttl'] === '1h' ? '1h' : '5m';
}

function withoutCacheControl(block: unknown): unknown {
  if (!isObj(block)) return block;
  const { cache_control: _ignored, ...rest } = block;
  return rest;
}

const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');
