import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import { blockSplitter, loadMarkdown } from '../../src/output/markdown.js';
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
