import { describe, expect, it } from 'vitest';
import { loadMarkdown } from '../../src/output/markdown.js';
import { citationUrl, osc8 } from '../../src/output/hyperlink.js';
import { createTextRenderer } from '../../src/output/text.js';
import { UsageLedger } from '../../src/output/usage.js';
import { linkCitations } from '../../src/output/citation-links.js';
import type { VerifiedCitation } from '../../src/citations/verify.js';
import { CITATION_FILES } from '../citations/citation-repo.js';
import { useRepo } from '../support/temp-repo.js';

const repo = useRepo(CITATION_FILES);

/** Blocks in the shapes answers use, most with citations the renderer verifies before it draws them. */
function blocks(count: number): string[] {
  const shapes = [
    (i: number) => `The router dispatches in \`lib/router/index.js:${42 + (i % 3)}\` and falls through to lib/router/index.js:136 (block ${i}).\n\n`,
    (i: number) => `- \`lib/application.js:10\` registers middleware\n- lib/express.js:5 creates the app (block ${i})\n\n`,
    (i: number) => `Here is lib/application.js:10:\n\n\`\`\`js\napp.use = function use(fn) {\n  var offset = 0;\n\`\`\`\n\n`,
    (i: number) => `| file | role |\n|---|---|\n| lib/express.js:5 | factory ${i} |\n\n`,
    (i: number) => `## Section ${i}\n\n`,
  ];
  return Array.from({ length: count }, (_, i) => shapes[i % shapes.length]!(i));
}

/** Splits a block into model-sized deltas (a few characters each), the block's terminating blank line last. */
function tokens(block: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < block.length; i += 6) out.push(block.slice(i, i + 6));
  return out;
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('render latency (issue 9: ≤ 16 ms p95 from a block\'s last token to its rendered line; measured, not asserted)', () => {
  it('draws every block of a scripted stream, in order, each after its last token', async () => {
    const writes: Array<{ at: number; text: string }> = [];
    const stdout = { isTTY: true, columns: 100, write: (t: string) => writes.push({ at: performance.now(), text: t }) > 0 };
    const link = (c: { abs: string | null; path: string; start_line: number | null }, label: string) =>
      osc8(citationUrl(c.abs!, c.path, c.start_line, null)!, label);
    // Loaded before the stream starts, as in a real run where the first request takes far longer than the load.
    const render = await loadMarkdown().then((make) => make({ width: 100, color: true }).render);
    const renderer = createTextRenderer({
      stdout,
      stderr: { isTTY: true, write: () => true },
      color: true,
      verbose: false,
      showThinking: false,
      spinner: false,
      ledger: new UsageLedger(),
      render: Promise.resolve(render),
      decorate: (block, rendered) => linkCitations(repo.root, block, rendered, link),
    });
    const latencies: number[] = [];
    for (const block of blocks(100)) {
      const parts = tokens(block);
      for (const part of parts.slice(0, -1)) {
        renderer.handle({ type: 'text', text: part });
        await tick();
      }
      const before = writes.length;
      const lastToken = performance.now();
      renderer.handle({ type: 'text', text: parts.at(-1)! });
      for (let i = 0; writes.length === before; i += 1) {
        if (i > 10_000) throw new Error(`no rendered write after the last token of ${JSON.stringify(block)}`);
        await tick();
      }
      latencies.push(writes.at(-1)!.at - lastToken);
    }
    await renderer.settled();
    expect(latencies).toHaveLength(100);
    expect(writes.map((w) => w.text).join('')).toContain('\x1b]8;;file://');
    const sorted = [...latencies].sort((a, b) => a - b);
    const p95 = sorted[Math.ceil(sorted.length * 0.95) - 1]!;
    const p50 = sorted[Math.floor(sorted.length / 2)]!;
    const slowest = latencies.map((ms, i) => [ms, i % 5] as const).sort((a, b) => b[0] - a[0]).slice(0, 8).map(([ms, shape]) => `${ms.toFixed(1)}@${shape}`);
    console.info(`slowest (ms@shape): ${slowest.join(" ")}`);
    console.info(`render latency over ${sorted.length} blocks: p50 ${p50.toFixed(2)} ms, p95 ${p95.toFixed(2)} ms, max ${sorted.at(-1)!.toFixed(2)} ms`);
  });
});

describe('linkCitations: only the places the answer cites are linked (the rendered block, as marked draws it)', () => {
  /** A visible stand-in for OSC 8: ⟨label→path:line⟩. */
  const mark = (c: VerifiedCitation, label: string) => `⟨${label}→${c.path}${c.start_line === null ? '' : `:${c.start_line}`}⟩`;
  const SGR = /\x1b\[[0-9;]*m/g;

  it.each([
    ['the issue\'s example: a label that is part of other words', 'See [here](src/a.ts#L2), where there is more.', 'See ⟨here→src/a.ts:2⟩ (src/a.ts#L2), where there is more.'],
    ['a label that is a whole word elsewhere, before its link', 'Look here: the handler is [here](src/a.ts#L2).', 'Look here: the handler is ⟨here→src/a.ts:2⟩ (src/a.ts#L2).'],
    ['one label on two links, each to its own target', 'Compare [here](src/a.ts#L2) and [here](lib/express.js#L5).', 'Compare ⟨here→src/a.ts:2⟩ (src/a.ts#L2) and ⟨here→lib/express.js:5⟩ (lib/express.js#L5).'],
    ['a path:line that is the prefix of a bad one', 'lib/express.js:5 calls lib/express.js:50.', '⟨lib/express.js:5→lib/express.js:5⟩ calls lib/express.js:50.'],
    ['a bare path that is the prefix of a longer path', '`src/a.ts` is not src/a.tsx:3.', '⟨src/a.ts→src/a.ts⟩ is not src/a.tsx:3.'],
    ['a path:line inside a longer path', 'See lib/express.js:5, not vendor/lib/express.js:5.', 'See ⟨lib/express.js:5→lib/express.js:5⟩, not vendor/lib/express.js:5.'],
    ['the same citation twice, both linked', 'src/a.ts:10 and again src/a.ts:10.', '⟨src/a.ts:10→src/a.ts:10⟩ and again ⟨src/a.ts:10→src/a.ts:10⟩.'],
    ['a label of several words, also said in prose', 'When the router starts, [the router](src/a.ts#L2) reads x.', 'When the router starts, ⟨the router→src/a.ts:2⟩ (src/a.ts#L2) reads x.'],
    ['a link whose text is its target', '[src/a.ts:10](src/a.ts:10) sets x.', '⟨src/a.ts:10→src/a.ts:10⟩ sets x.'],
  ])('%s', async (_name, block, expected) => {
    const make = await loadMarkdown();
    for (const color of [false, true]) {
      const rendered = make({ width: 200, color }).render(`${block}\n\n`);
      const linked = await linkCitations(repo.root, `${block}\n\n`, rendered, mark);
      expect(linked.replace(SGR, '').trim(), `color ${color}`).toBe(expected);
    }
  });
});
