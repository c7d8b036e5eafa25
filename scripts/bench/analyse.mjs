// Reads what the server received: the listing block of the system prompt, and cache ratios from recorded usage.

/** The heading src/preamble/system-prompt.ts puts before the listing (the last system block). */
const LISTING_HEADING = '# Repository listing\n\n';
/** A "… (N more)" line: a marker, not an entry. */
const MORE_MARKER = /^\s*… \(\d+ more\)$/;

/** Listing text, entry count and token estimate (chars / 4) of a recorded request's system prompt. */
export function listingOf(request) {
  const system = request.body.system;
  const blocks = typeof system === 'string' ? [{ text: system }] : (system ?? []);
  const block = blocks.find((b) => typeof b.text === 'string' && b.text.startsWith(LISTING_HEADING));
  if (!block) throw new Error('no "# Repository listing" block in the system prompt');
  const text = block.text.slice(LISTING_HEADING.length);
  // The header sentence, the "Key files" line and the workspace member block are not tree entries.
  const [, ...all] = text.split('\n');
  let inMembers = false;
  const lines = all.filter((line) => {
    if (line.startsWith('Workspace members (')) inMembers = true;
    const skip = inMembers || line.startsWith('Key files: ');
    if (line === 'Directories:') inMembers = false;
    return !skip;
  });
  const entries = lines.filter((line) => line.trim() !== '' && !MORE_MARKER.test(line)).length;
  const markers = lines.filter((line) => MORE_MARKER.test(line)).length;
  const topLevel = lines.filter((line) => !line.startsWith(' ') && !MORE_MARKER.test(line)).length;
  return { text, entries, markers, topLevel, chars: text.length, tokens: Math.ceil(text.length / 4) };
}

/** prompt = input + cache write + cache read, the whole prompt of one request. */
export const promptOf = (usage) =>
  usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;

/** Σ_{i≥2} cache_read_i / Σ_{i≥2} prompt_{i-1}: how much of what was already sent is read back from cache. */
export function cacheEfficiency(requests) {
  const usages = requests.map((r) => r.usage);
  if (usages.some((u) => u === undefined)) throw new Error('a request has no recorded usage');
  let read = 0;
  let previous = 0;
  for (let i = 1; i < usages.length; i++) {
    read += usages[i].cache_read_input_tokens;
    previous += promptOf(usages[i - 1]);
  }
  return { read, previous, ratio: previous === 0 ? 0 : read / previous };
}

/** Tokens of the tools + system prefix, estimated exactly as the mock does (cache_control is not content). */
export function prefixTokens(body, tokensOf) {
  const plain = (block) => {
    const { cache_control: _ignored, ...rest } = block;
    return rest;
  };
  const system = typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : (body.system ?? []);
  return [...(body.tools ?? []), ...system].reduce((sum, block) => sum + tokensOf(plain(block)), 0);
}

/** tool_result blocks of a request's last user message that came back as errors. */
export function toolErrors(request) {
  const last = request.body.messages?.at(-1);
  if (!last || typeof last.content === 'string') return [];
  return last.content.filter((b) => b.type === 'tool_result' && b.is_error === true);
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
