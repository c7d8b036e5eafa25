/**
 * The parse budget of workspace declarations. The YAML and TOML parsers are slow on hostile input (seconds of start-up
 * for a megabyte of nested flow sequences; docs/bench-log.md), while the part the map needs (a `packages:` list, a
 * `[workspace]` table) is a few hundred bytes. So only that part is handed to the
 * parser, and only when it is small and shallow; past the budget the file is skipped and the map says so. The bounds
 * are sizes and depths, never clocks, so the map stays the same bytes for the same tree.
 */

/** What a parser may be handed: bytes, bracket nesting and items (`,`, `[`, `{` and block `-` entries). */
export interface ParseBudget {
  bytes: number;
  nesting: number;
  items: number;
}

/**
 * YAML: the parser's cost grows with flow items, so the budget is in items; pnpm's own packages list has 5, and 256
 * stay well under a plain start (docs/bench-log.md).
 */
export const YAML_BUDGET: ParseBudget = { bytes: 16 * 1024, nesting: 4, items: 256 };
/** TOML: a real `[workspace]` table is a few KB (bevy's: 1.4 KB of a 160 KB Cargo.toml). */
export const TOML_BUDGET: ParseBudget = { bytes: 64 * 1024, nesting: 8, items: 4_096 };
/** JSON is parsed natively (fast) and only needs a bound on its nesting. */
export const JSON_BUDGET: ParseBudget = { bytes: 1024 * 1024, nesting: 64, items: Infinity };

/** Why a declaration was left to the budget, in the map's words; null when it is within it. Linear. */
export function overBudget(text: string, budget: ParseBudget): string | null {
  if (Buffer.byteLength(text, 'utf8') > budget.bytes) return `over the parse budget (more than ${budget.bytes / 1024} KiB to parse)`;
  if (nesting(text) > budget.nesting) return `over the parse budget (brackets nested more than ${budget.nesting} levels)`;
  if (items(text) > budget.items) return `over the parse budget (more than ${budget.items} items)`;
  return null;
}

/** Items a parser builds nodes for, over-estimated: separators, openings and block-list entries. */
export function items(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2c || c === 0x5b || c === 0x7b || (c === 0x2d && (i === 0 || /\s/.test(text[i - 1]!)))) count++;
  }
  return count;
}

/**
 * The deepest bracket nesting in `text`, counting `[` and `{` anywhere (quoted ones too: an over-estimate is only
 * stricter). Linear.
 */
export function nesting(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > max) max = depth;
    } else if ((c === 0x5d || c === 0x7d) && depth > 0) {
      depth--;
    }
  }
  return max;
}

/**
 * The top-level YAML mapping entry `key:` with its value: the key's line and every following line that is indented,
 * blank, a comment, a `-` item or a closing bracket (a flow list may close at column 0). '' when the key is absent.
 * Anything the cut leaves out (an anchor defined elsewhere) makes the parser fail, which is reported like any error.
 */
export function yamlEntry(text: string, key: string): string {
  const lines = text.split('\n');
  const head = new RegExp(`^${key}\\s*:`);
  const start = lines.findIndex((line) => head.test(line));
  if (start === -1) return '';
  let end = start + 1;
  while (end < lines.length && /^(?:[\s\-#\]}]|$)/.test(lines[end]!)) end++;
  return lines.slice(start, end).join('\n');
}

/**
 * The TOML table `[name]` (a dotted name such as `tool.uv.workspace`): its header and its lines up to the next table
 * header, or '' when the file has no such header. The parser then sees a one-table document.
 */
export function tomlTable(text: string, name: string): string {
  const lines = text.split('\n');
  const parts = name.split('.').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const head = new RegExp(`^\\s*\\[\\s*${parts.join('\\s*\\.\\s*')}\\s*\\]\\s*(?:#.*)?$`);
  const start = lines.findIndex((line) => head.test(line.replace(/\r$/, '')));
  if (start === -1) return '';
  let end = start + 1;
  while (end < lines.length && !/^\s*\[/.test(lines[end]!)) end++;
  return lines.slice(start, end).join('\n');
}
