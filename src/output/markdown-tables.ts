import Table from 'cli-table3';
import type { MarkedExtension, Tokens } from 'marked';
import { createPalette } from './color.js';
import { undoColons } from './markdown-lists.js';

/** A column is never narrowed below this many text columns (a narrow terminal with many columns overflows instead). */
const MIN_COLUMN = 4;
const SGR = /\x1b\[[0-9;]*m/g;

interface Parser {
  parseInline(tokens: Tokens.Generic[]): string;
}

/**
 * Tables drawn by spelunk: marked-terminal sizes every column to its longest cell, so a table of long cells drew 170
 * columns on an 80-column terminal. Here the columns share the width: each gets its natural width when it fits, the
 * widest ones shrink to fair shares of what is left, and cells wrap inside them (a word longer than its column is
 * cut across lines). Cell text is rendered like a paragraph's (code spans, emphasis), colons restored.
 */
export function terminalTables(width: number, color: boolean): MarkedExtension {
  return {
    renderer: {
      table(this: { parser: Parser }, token: Tokens.Table): string {
        const cell = (c: Tokens.TableCell): string => undoColons(this.parser.parseInline(c.tokens));
        const head = token.header.map(cell);
        const rows = token.rows.map((row) => row.map(cell));
        const widths = columnWidths([head, ...rows], width);
        const table = new Table({
          head: head.map((h, i) => fitCell(h, widths[i]!)).map(createPalette(color).bold),
          colWidths: widths.map((w) => w + 2),
          // Never styled by cli-table3 itself: its colour library decides on its own whether a terminal is attached.
          style: { head: [], border: [] },
        });
        for (const row of rows) table.push(widths.map((w, i) => fitCell(row[i] ?? '', w)));
        return `${table.toString()}\n\n`;
      },
    },
  };
}

/**
 * Text widths of the columns of `cells` (rows of rendered cells) in a table at most `width` columns wide: borders take
 * one column each plus one, padding two per column. First every column gets room for its longest word (so no word is
 * cut) when all of those fit, else the shortest of them first; the rest of the width then goes to the columns that
 * want more, smallest wants first (water-filling: each takes what it wants up to a fair share of what is left).
 */
export function columnWidths(cells: readonly (readonly string[])[], width: number): number[] {
  const count = Math.max(...cells.map((row) => row.length));
  const column = (i: number): string[] => cells.map((row) => row[i] ?? '');
  const natural = Array.from({ length: count }, (_, i) => Math.max(1, ...column(i).map(longestLine)));
  const words = Array.from({ length: count }, (_, i) => Math.min(natural[i]!, Math.max(MIN_COLUMN, ...column(i).map(longestWord))));
  const room = width - (count + 1) - 2 * count;
  // Where not every longest word fits, the shortest ones still do and the longest words are cut.
  const base = words.reduce((a, b) => a + b, 0) <= room ? words : fill(words, room);
  const extra = fill(natural.map((n, i) => n - base[i]!), room - base.reduce((a, b) => a + b, 0));
  return base.map((b, i) => Math.max(b + extra[i]!, Math.min(natural[i]!, MIN_COLUMN)));
}

/** Shares `room` among `wants`: the smallest wants are met first while each is within a fair share of what is left. */
function fill(wants: readonly number[], room: number): number[] {
  const given = new Array<number>(wants.length).fill(0);
  let left = room;
  const order = wants.map((w, i) => [w, i] as const).sort((a, b) => a[0] - b[0]);
  order.forEach(([want, i], k) => {
    const share = Math.max(0, Math.floor(left / (wants.length - k)));
    given[i] = Math.min(want, share);
    left -= given[i]!;
  });
  return given;
}

/** A cell's text wrapped to `width` columns: on spaces, and a longer word cut into pieces of `width`. */
export function fitCell(text: string, width: number): string {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    let used = 0;
    for (const word of paragraph.split(' ').filter((w) => w !== '')) {
      for (const piece of pieces(word, width)) {
        const size = visible(piece);
        if (used > 0 && used + 1 + size > width) {
          lines.push(line);
          line = '';
          used = 0;
        }
        line = used === 0 ? piece : `${line} ${piece}`;
        used += (used === 0 ? 0 : 1) + size;
      }
    }
    lines.push(line);
  }
  return lines.join('\n');
}

/** `word` cut every `width` visible columns (styling escapes stay with the character after them). */
function pieces(word: string, width: number): string[] {
  if (visible(word) <= width) return [word];
  const out: string[] = [];
  let piece = '';
  let used = 0;
  for (const part of word.split(/(\x1b\[[0-9;]*m)/)) {
    if (part.startsWith('\x1b[')) {
      piece += part;
      continue;
    }
    for (const ch of part) {
      if (used === width) {
        out.push(piece);
        piece = '';
        used = 0;
      }
      piece += ch;
      used++;
    }
  }
  out.push(piece);
  return out;
}

function longestWord(text: string): number {
  return Math.max(0, ...text.split(/\s+/).map(visible));
}

function longestLine(text: string): number {
  return Math.max(...text.split('\n').map(visible));
}

function visible(s: string): number {
  return [...s.replace(SGR, '')].length;
}
