import { describe, expect, it } from 'vitest';
import { loadMarkdown } from '../../src/output/markdown.js';
import { citationUrl, osc8 } from '../../src/output/hyperlink.js';
import { createTextRenderer } from '../../src/output/text.js';
import { UsageLedger } from '../../src/output/usage.js';
import { linkCitations } from '../../src/run/ask.js';
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
