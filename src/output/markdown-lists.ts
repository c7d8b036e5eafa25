import type { MarkedExtension, Tokens } from 'marked';

/** Indent of a list under its paragraph, and of a nested list under its item (marked-terminal's `tab: 2`). */
const INDENT = '  ';
/** Below this many columns an item's text is not wrapped narrower (a deep list on a narrow terminal). */
const MIN_TEXT_WIDTH = 20;
const SGR = /\x1b\[[0-9;]*m/g;
/**
 * marked-terminal's codespan renderer replaces every `:` with this placeholder and restores colons only in its own
 * paragraph and text renderers; text that spelunk draws itself (list items, table cells) must undo it.
 */
const COLON_PLACEHOLDER = /\*#COLON\|\*/g;

/** Rendered inline text with marked-terminal's colon placeholder turned back into colons. */
export function undoColons(rendered: string): string {
  return rendered.replace(COLON_PLACEHOLDER, ':');
}

/** The slice of marked's parser a list renderer uses. */
interface Parser {
  parse(tokens: Tokens.Generic[]): string;
  parseInline(tokens: Tokens.Generic[]): string;
}

/**
 * Lists drawn by spelunk rather than by marked-terminal, whose list code predates marked's current tokens: it printed
 * an item's inline markdown raw (`` `code` `` with its backticks, `**bold**` with its stars) and never wrapped an
 * item. Here each item's inline tokens are rendered like a paragraph's (so code spans and emphasis are styled) and
 * wrapped to the width with a hanging indent under the marker; nested lists and other blocks in an item follow,
 * indented under its text.
 */
export function terminalLists(width: number): MarkedExtension {
  // The text width the list being drawn may use; a nested list narrows it while its items are drawn.
  let room = width;
  return {
    renderer: {
      list(this: { parser: Parser }, token: Tokens.List): string {
        const outer = room;
        const lines: string[] = [];
        const start = typeof token.start === 'number' ? token.start : 1;
        token.items.forEach((item, i) => {
          const marker = token.ordered ? `${start + i}. ` : '* ';
          const pad = ' '.repeat(marker.length);
          room = Math.max(MIN_TEXT_WIDTH, outer - INDENT.length - marker.length);
          const body = itemLines(this.parser, item, room);
          if (token.loose && i > 0) lines.push('');
          body.forEach((line, n) => lines.push(line === '' ? '' : `${n === 0 ? marker : pad}${line}`));
        });
        room = outer;
        return `${lines.map((line) => (line === '' ? '' : `${INDENT}${line}`)).join('\n')}\n\n`;
      },
    },
  };
}

/**
 * Block quotes drawn by spelunk: marked-terminal reflows a quote's text to the full width and then indents it, so every
 * full line came out two columns wider than the terminal. Here paragraphs wrap to the width less the indent; other
 * blocks in a quote keep their lines (any still too long are wrapped).
 */
export function terminalQuotes(width: number, style: (s: string) => string): MarkedExtension {
  return {
    renderer: {
      blockquote(this: { parser: Parser }, token: Tokens.Blockquote): string {
        const room = Math.max(MIN_TEXT_WIDTH, width - INDENT.length);
        const lines: string[] = [];
        for (const child of token.tokens) {
          if (child.type === 'space') continue;
          if (lines.length > 0) lines.push('');
          if (child.type === 'paragraph' && 'tokens' in child && child.tokens) {
            lines.push(...wrap(undoColons(this.parser.parseInline(child.tokens)), room));
            continue;
          }
          const block = undoColons(this.parser.parse([child])).replace(/\n+$/, '').split('\n');
          lines.push(...block.flatMap((line) => (visible(line) > room ? wrap(line, room) : [line])));
        }
        return `${lines.map((line) => (line === '' ? '' : `${INDENT}${style(line)}`)).join('\n')}\n\n`;
      },
    },
  };
}

/** One item's lines: its text wrapped to `width`, then its nested blocks as they render. */
function itemLines(parser: Parser, item: Tokens.ListItem, width: number): string[] {
  const lines: string[] = [];
  let prefix = '';
  for (const child of item.tokens) {
    if (child.type === 'checkbox') {
      prefix = child.checked ? '[x] ' : '[ ] ';
      continue;
    }
    if (child.type === 'space') continue;
    if (child.type === 'text' || child.type === 'paragraph') {
      const inline = undoColons('tokens' in child && child.tokens ? parser.parseInline(child.tokens) : String(child.text ?? ''));
      if (lines.length > 0 && item.loose) lines.push('');
      lines.push(...wrap(`${prefix}${inline}`, width));
      prefix = '';
      continue;
    }
    const block = undoColons(parser.parse([child])).replace(/\n+$/, '').split('\n');
    // A nested list comes back indented for the top level; under an item it lines up with the item's text instead.
    lines.push(...(child.type === 'list' ? block.map((line) => line.replace(/^ {2}/, '')) : block));
  }
  if (prefix !== '') lines.unshift(prefix.trimEnd());
  return lines;
}

/** Words joined into lines of at most `width` visible columns (styling escapes take none); a longer word stays whole. */
export function wrap(text: string, width: number): string[] {
  const words = text.replace(/\s*\n\s*/g, ' ').split(' ').filter((w) => w !== '');
  const lines: string[] = [];
  let line = '';
  let used = 0;
  for (const word of words) {
    const size = visible(word);
    if (used > 0 && used + 1 + size > width) {
      lines.push(line);
      line = '';
      used = 0;
    }
    line = used === 0 ? word : `${line} ${word}`;
    used += (used === 0 ? 0 : 1) + size;
  }
  if (line !== '' || lines.length === 0) lines.push(line);
  return lines;
}

function visible(s: string): number {
  return [...s.replace(SGR, '')].length;
}
