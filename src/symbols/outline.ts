/** An outline as read_file returns it (a ToolOutcome's shape; symbols/ sits below tools/ and names no tool type). */
interface OutlineOutcome {
  content: string;
  summary: string;
  isError: boolean;
}
import { SymbolIndex } from './index.js';

/** Definitions listed by read_file's outline mode; past this the trailer says how many were left out. */
export const MAX_OUTLINE_ENTRIES = 400;

/**
 * read_file's `outline: true`: the file's definitions as `path:line<TAB>kind name`, in line order, so the model can
 * read just the range it needs and cite any line as it is shown. A file the symbol layer skips (no grammar, huge,
 * minified, too slow) is an error that says to read it as text instead.
 */
export async function outlineOutcome(root: string, rel: string, symbols: SymbolIndex = new SymbolIndex()): Promise<OutlineOutcome> {
  const outline = await symbols.outline(root, rel);
  if (!outline.ok) {
    return {
      content: `No outline: ${outline.note}. Read the file without outline (read_file with start_line/end_line).`,
      summary: 'no outline',
      isError: true,
    };
  }
  const defs = outline.definitions;
  if (defs.length === 0) {
    return { content: `(${rel} has no definitions the tags queries recognise; read it as text)`, summary: '0 definitions', isError: false };
  }
  const shown = defs.slice(0, MAX_OUTLINE_ENTRIES).map((d) => `${rel}:${d.line}\t${d.kind} ${d.name}`);
  const more = defs.length - shown.length;
  const trailer =
    more > 0 ? `\n[${more} more definitions after line ${defs[MAX_OUTLINE_ENTRIES - 1]!.line}; read the rest of the file in ranges]` : '';
  return { content: `${shown.join('\n')}${trailer}`, summary: `${defs.length} definition${defs.length === 1 ? '' : 's'}`, isError: false };
}
