import type { MarkedExtension, Tokens } from 'marked';
import { escapeControls } from '../escape.js';
import { createPalette } from './color.js';
import { terminalLists, terminalQuotes } from './markdown-lists.js';
import { terminalTables } from './markdown-tables.js';

/** Renders an answer's markdown for a terminal as it streams: a block is drawn as soon as it is complete. */
export interface MarkdownView {
  /** Adds streamed text; returns the markdown of the blocks it completed ('' while a block is still open). */
  push(text: string): string;
  /** Everything still held (the end of a turn). */
  end(): string;
  /** One block of markdown as terminal text (ANSI styling, wrapped to the width). */
  render(markdown: string): string;
}

/** SGR sequences (the renderer's own styling); removed when colour is off, so layout stays and colour goes. */
const SGR = /\x1b\[[0-9;]*m/g;

/**
 * Loads marked + marked-terminal (a separate chunk: a one-shot run whose stdout is not a terminal never loads it) and
 * returns a factory of streaming views. Model text is passed through the one escaper before marked sees it, so the
 * only escape sequences in the output are the renderer's own styling.
 */
export async function loadMarkdown(): Promise<(opts: { width: number; color: boolean }) => MarkdownView> {
  const [{ Marked }, { markedTerminal }] = await Promise.all([import('marked'), import('marked-terminal')]);
  return ({ width, color }) => {
    const marked = new Marked(
      markedTerminal({ width, reflowText: true, tab: 2, emoji: false, showSectionPrefix: false, ...styles(color) }),
      plainLinks(),
      terminalLists(width),
      terminalTables(width, color),
      terminalQuotes(width, createPalette(color).dim),
    );
    const render = (markdown: string): string => {
      const safe = escapeControls(markdown.replace(/\r/g, ''), '\n\t');
      const out = marked.parse(safe, { async: false }) as string;
      return color ? out : out.replace(SGR, '');
    };
    return { ...blockSplitter(), render };
  };
}

/** The renderer's styles from spelunk's palette, so --no-color and NO_COLOR decide colour here as everywhere. */
function styles(color: boolean): Record<string, (s: string) => string> {
  const p = createPalette(color);
  const italic = (s: string): string => (color && s !== '' ? `\x1b[3m${s}\x1b[23m` : s);
  return {
    firstHeading: (s) => p.bold(p.cyan(s)),
    heading: (s) => p.bold(p.green(s)),
    strong: p.bold,
    em: italic,
    codespan: p.yellow,
    blockquote: p.dim,
    del: p.dim,
    link: p.cyan,
    href: p.cyan,
  };
}

/**
 * Links are shown as `text (url)`: marked-terminal would make every model-written URL a clickable OSC 8 link; only
 * verified citations get one (added by the caller, which knows what was verified).
 */
function plainLinks(): MarkedExtension {
  return {
    renderer: {
      link(token: Tokens.Link): string {
        const text = this.parser.parseInline(token.tokens);
        return text === token.href ? token.href : `${text} (${token.href})`;
      },
    },
  };
}

/**
 * Splits streamed markdown into complete blocks: a block ends at a blank line outside a fenced block, or at the line
 * that closes a fence. Only complete lines are looked at, each once.
 */
export function blockSplitter(): Pick<MarkdownView, 'push' | 'end'> {
  let held = '';
  let scanned = 0;
  let fence: string | null = null;
  return {
    push(text) {
      held += text;
      let cut = -1;
      for (let nl = held.indexOf('\n', scanned); nl !== -1; nl = held.indexOf('\n', scanned)) {
        const line = held.slice(scanned, nl);
        scanned = nl + 1;
        const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
        if (fence !== null) {
          if (marker !== undefined && marker.startsWith(fence) && line.trim() === marker) {
            fence = null;
            cut = scanned;
          }
          continue;
        }
        if (marker !== undefined) fence = marker;
        else if (line.trim() === '') cut = scanned;
      }
      if (cut < 0) return '';
      const done = held.slice(0, cut);
      held = held.slice(cut);
      scanned -= cut;
      return done;
    },
    end() {
      const rest = held;
      held = '';
      scanned = 0;
      fence = null;
      return rest;
    },
  };
}
