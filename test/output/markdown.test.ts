import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import { blockSplitter, loadMarkdown } from '../../src/output/markdown.js';
import { columnWidths, fitCell } from '../../src/output/markdown-tables.js';
import { REAL_ANSWERS } from '../support/real-answers.js';
import { createTextRenderer } from '../../src/output/text.js';
import { UsageLedger } from '../../src/output/usage.js';
import { hasAnsi } from '../support/ansi.js';

const ANSWER = [
  '## Routing',
  '',
  'The **router** is in `lib/router/index.js:42`; see [the guide](https://expressjs.com/guide).',
  '',
  '- one',
  '- two',
  '',
  '```js',
  'const x = 1;',
  '',
  'const y = 2;',
  '```',
  '',
  '| file | role |',
  '|---|---|',
  '| a.js | app |',
  '',
  'Evil \x1b]0;title\x07 and \x1b[2J here',
  '',
].join('\n');

describe('blockSplitter: a block is complete at a blank line outside a fence, or when its fence closes', () => {
  it.each([
    [['Para one.\n', '\nPara two'], ['', 'Para one.\n\n'], 'Para two'],
    [['# T', 'itle\n\nx'], ['', '# Title\n\n'], 'x'],
    [['```js\na\n\nb\n', '```\nafter'], ['', '```js\na\n\nb\n```\n'], 'after'],
    [['| a |\n|---|\n| 1 |\n'], [''], '| a |\n|---|\n| 1 |\n'],
    [['one\n\ntwo\n\nthree'], ['one\n\ntwo\n\n'], 'three'],
    [['~~~\nx\n\n~~~\n'], ['~~~\nx\n\n~~~\n'], ''],
  ])('%j', (chunks, blocks, rest) => {
    const split = blockSplitter();
    expect(chunks.map((c) => split.push(c))).toEqual(blocks);
    expect(split.end()).toBe(rest);
  });
});

describe('loadMarkdown: marked + marked-terminal for a terminal', () => {
  it('renders headings, emphasis, lists, code blocks and tables without their markdown syntax, wrapped to the width', async () => {
    const view = (await loadMarkdown())({ width: 40, color: false });
    const out = view.render(ANSWER);
    expect(out).toContain('Routing');
    expect(out).not.toContain('## ');
    expect(out).not.toContain('**');
    expect(out).toMatch(/\* one\n\s+\* two/);
    expect(out).toContain('const x = 1;');
    expect(out).not.toContain('```');
    expect(out).toMatch(/│ a\.js\s*│ app\s*│/);
    for (const line of out.split('\n')) expect(line.length).toBeLessThanOrEqual(40);
  });

  it('styles with colour on and writes no escape sequence at all with colour off', async () => {
    const make = await loadMarkdown();
    expect(make({ width: 80, color: true }).render('# Title\n\n**bold** `code`\n')).toMatch(/\x1b\[1m/);
    expect(hasAnsi(make({ width: 80, color: false }).render(ANSWER))).toBe(false);
  });

  it('neutralises escape sequences from the model, and never makes a model-written URL a hyperlink', async () => {
    const out = (await loadMarkdown())({ width: 200, color: true }).render(ANSWER);
    expect(out).toContain('Evil \\x1b]0;title\\x07 and \\x1b[2J here');
    expect(out).not.toContain('\x1b]');
    expect(out).not.toContain('\x07');
    expect(out).toContain('the guide (https://expressjs.com/guide)');
  });
});

describe('lists on a terminal (issue 24): inline markdown rendered, items wrapped under their marker', () => {
  const LIST = [
    'Where it happens:',
    '',
    '- `app.listen()` in **lib/application.js** starts the server',
    '- a long item that explains, in more words than fit on one line of a forty-column terminal, what `handle` does',
    '  1. nested `route.dispatch` item',
    '  2. second nested item that is also long enough to need wrapping here',
    '- [x] a task item with `code`',
    '',
    '3. ordered from three',
    '4. and four',
    '',
  ].join('\n');

  it('no raw backticks or stars; every line within the width; wrapped lines hang under the text', async () => {
    const out = (await loadMarkdown())({ width: 40, color: false }).render(LIST);
    expect(out).not.toContain('`');
    expect(out).not.toContain('**');
    expect(out).toContain('  * app.listen() in lib/application.js\n    starts the server\n');
    for (const line of out.split('\n')) expect(line.length).toBeLessThanOrEqual(40);
    expect(out).toMatch(/^ {2}\* a long item that explains, in more\n {4}words/m);
    expect(out).toMatch(/^ {4}1\. nested route\.dispatch item\n {4}2\. second nested item that is also\n {7}long/m);
    expect(out).toContain('  * [x] a task item with code\n');
    expect(out).toMatch(/^ {2}3\. ordered from three\n {2}4\. and four\n/m);
  });

  it('a code span in an item is styled like one in a paragraph', async () => {
    const make = await loadMarkdown();
    const inItem = make({ width: 80, color: true }).render('- see `x()` here\n');
    const inParagraph = make({ width: 80, color: true }).render('see `x()` here\n');
    const styled = /\x1b\[33mx\(\)\x1b\[39m/;
    expect(inParagraph).toMatch(styled);
    expect(inItem).toMatch(styled);
  });
});

function tty() {
  const writes: Array<{ at: number; text: string }> = [];
  return {
    isTTY: true,
    columns: 80,
    writes,
    write(chunk: string) {
      writes.push({ at: performance.now(), text: chunk });
      return true;
    },
  };
}

describe('the text renderer on a terminal renders block by block as the answer streams', () => {
  it('draws a completed block before the rest of the answer has arrived', async () => {
    const stdout = tty();
    const renderer = createTextRenderer({
      stdout,
      stderr: tty(),
      color: false,
      verbose: false,
      showThinking: false,
      spinner: false,
      ledger: new UsageLedger(),
      render: loadMarkdown().then((make) => make({ width: 80, color: false }).render),
    });
    renderer.handle({ type: 'text', text: '## First\n\nstill ' });
    await renderer.settled();
    const early = stdout.writes.map((w) => w.text).join('');
    expect(early).toContain('First');
    expect(early).not.toContain('still');
    renderer.handle({ type: 'text', text: 'typing.' });
    renderer.handle({ type: 'done', stop: 'end_turn', text: '## First\n\nstill typing.', turns: 1 } satisfies AgentEvent);
    await renderer.settled();
    expect(stdout.writes.map((w) => w.text).join('')).toMatch(/First[\s\S]*still typing\./);
  });
});

describe('inline code with any punctuation renders exactly, and tables fit the terminal (issue 33)', () => {
  const SGR_RE = /\x1b\[[0-9;]*m/g;
  it.each(REAL_ANSWERS.flatMap((a) => [60, 80, 100, 200].map((width) => [a.language, width, a] as const)))(
    '%s answer at %i columns: every code span exact, no placeholder, no line wider than the terminal',
    async (_language, width, answer) => {
      for (const color of [false, true]) {
        const out = (await loadMarkdown())({ width, color }).render(answer.markdown);
        const plain = out.replace(SGR_RE, '');
        expect(plain).not.toContain('#COLON');
        // Where nothing needs to wrap, each code span shows as written (a narrow table wraps cells across lines).
        const flat = plain.replace(/\s+/g, ' ');
        if (width >= 200) for (const code of answer.exact) expect(flat).toContain(code.replace(/\s+/g, ' '));
        for (const line of plain.split('\n')) expect([...line].length).toBeLessThanOrEqual(width);
      }
    },
  );

  it('a table of long cells wraps them inside shrunk columns (a 4-column table drew 170 columns on 80 before)', async () => {
    const long = 'a cell that keeps going and going well past the width of any sensible column';
    const md = `| A | B | C | D |\n|---|---|---|---|\n| ${long} | ${long} | \`Foo::bar\` | ${long} |\n`;
    for (const width of [60, 80, 100, 200]) {
      const lines = (await loadMarkdown())({ width, color: false }).render(md).split('\n').filter((l) => l !== '');
      expect(Math.max(...lines.map((l) => [...l].length))).toBeLessThanOrEqual(width);
      expect(lines[0]!.startsWith('┌')).toBe(true);
    }
    expect((await loadMarkdown())({ width: 80, color: false }).render(md)).toContain('│ Foo::bar │');
  });
});

describe('columnWidths and fitCell', () => {
  it.each<[string, string[][], number, number[]]>([
    ['natural widths when they fit', [['a', 'bb'], ['ccc', 'd']], 40, [3, 2]],
    ['the longest column shrinks first', [['short', 'x'.repeat(100)]], 40, [5, 28]],
    ['every longest word kept when they all fit, the rest shared', [['alpha beta', 'gamma delta epsilon zeta eta theta']], 24, [7, 10]],
    ['narrow: the short column whole, the long ones share the rest', [['a', 'b'.repeat(50), 'c'.repeat(50)]], 20, [1, 4, 5]],
  ])('%s', (_name, cells, width, expected) => {
    expect(columnWidths(cells, width)).toEqual(expected);
  });

  it('wraps on spaces and cuts a word longer than the column', () => {
    expect(fitCell('aa bb cc', 5)).toBe('aa bb\ncc');
    expect(fitCell('abcdefghij', 4)).toBe('abcd\nefgh\nij');
  });
});
