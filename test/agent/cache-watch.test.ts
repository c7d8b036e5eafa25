import { describe, expect, it } from 'vitest';
import { CacheWatch, cacheMissLine, describeChange, segmentsOf } from '../../src/agent/cache-watch.js';
import type { Usage } from '../../src/agent/events.js';
import type { ModelRequest } from '../../src/agent/model.js';

/** Two instructions files, outermost first, as system-prompt.ts lays them out. */
const two = (outer: string, inner: string) =>
  `# Project instructions\n\n<repository-file path="../CLAUDE.md" bytes="${outer.length}">\n${outer}\n</repository-file>\n\n<repository-file path="AGENTS.md" bytes="${inner.length}">\n${inner}\n</repository-file>`;
const agents = (rule: string) => `# Project instructions\n\n<repository-file path="AGENTS.md" bytes="9">\n${rule}\n</repository-file>`;

function request(over: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'claude-sonnet-5-5',
    max_tokens: 100,
    tools: [
      { name: 'read_file', description: 'reads a file', input_schema: {} },
      { name: 'bash', description: 'runs rg', input_schema: {} },
    ],
    system: [
      { type: 'text', text: 'rules' },
      { type: 'text', text: 'env' },
      { type: 'text', text: agents('Use npm.') },
      { type: 'text', text: 'listing', cache_control: { type: 'ephemeral' } },
    ],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'q1' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'a1' }] },
      { role: 'user', content: [{ type: 'text', text: 'q2', cache_control: { type: 'ephemeral' } }] },
    ],
    ...over,
  };
}
const usage = (read: number, write: number): Usage => ({ input_tokens: 10, cache_creation_input_tokens: write, cache_read_input_tokens: read, output_tokens: 5 });
const base = request();

describe('what changed in the cached prefix', () => {
  it.each([
    ['the model', request({ model: 'claude-opus-5-5' }), 'the model changed (claude-sonnet-5-5 → claude-opus-5-5)'],
    ['a tool description', request({ tools: [base.tools[0]!, { ...base.tools[1]!, description: 'runs rg and grep' }] }), 'tool bash changed (+9 bytes)'],
    ['a removed tool', request({ tools: [base.tools[0]!] }), 'tool bash removed'],
    ['reordered tools', request({ tools: [base.tools[1]!, base.tools[0]!] }), 'tool read_file moved'],
    ['AGENTS.md', request({ system: [base.system[0]!, base.system[1]!, { type: 'text', text: agents('Use npm. Run lint.') }, base.system[3]!] }), 'AGENTS.md changed (+10 bytes)'],
    ['an instructions file among several', request({ system: [base.system[0]!, base.system[1]!, { type: 'text', text: two('Use npm.', 'Hi there') }, base.system[3]!] }), 'AGENTS.md changed (+6 bytes)', two('Use npm.', 'Hi')],
    ['an ancestor instructions file appears', request({ system: [base.system[0]!, base.system[1]!, { type: 'text', text: two('Use npm.', 'Use npm.') }, base.system[3]!] }), '../CLAUDE.md added'],
    ['the instructions file goes', request({ system: [base.system[0]!, base.system[1]!, { type: 'text', text: '# Project instructions\n\nNone.' }, base.system[3]!] }), 'AGENTS.md removed'],
    ['the listing (the map)', request({ system: [...base.system.slice(0, 3), { type: 'text', text: 'listing\nnew.ts' }] }), 'listing changed (+8 bytes)'],
    ['an old message', request({ messages: [base.messages[0]!, { role: 'assistant', content: [{ type: 'text', text: '[removed]' }] }, base.messages[2]!] }), 'message 2 (assistant) changed (+7 bytes)'],
    ['thinking switched on', request({ thinking: { type: 'adaptive' } }), 'thinking changed (+15 bytes)'],
    ['nothing (an expired entry)', request(), 'nothing in the prompt changed (the cache entry expired: more than 5 minutes since the previous request, or evicted)'],
  ])('%s', (_name, after, expected, instructionsBefore?: string) => {
    const before = instructionsBefore === undefined ? base : request({ system: [base.system[0]!, base.system[1]!, { type: 'text', text: instructionsBefore }, base.system[3]!] });
    expect(describeChange({ model: before.model, segments: segmentsOf(before) }, { model: after.model, segments: segmentsOf(after) })).toBe(expected);
  });

  it('moving a cache breakpoint changes nothing', () => {
    const moved = request({ messages: base.messages.map((m) => ({ ...m, content: m.content.map(({ cache_control: _c, ...b }) => b) })) as ModelRequest['messages'] });
    expect(segmentsOf(moved)).toEqual(segmentsOf(base));
  });
});

describe('CacheWatch', () => {
  it('reports a request that reads less than the previous one had cached, with the re-written tokens and their cost', () => {
    const watch = new CacheWatch();
    expect(watch.observe(base, usage(0, 5_000))).toBeNull();
    expect(watch.observe(base, usage(5_000, 300))).toBeNull();
    const changed = request({ system: [base.system[0]!, base.system[1]!, { type: 'text', text: agents('Use pnpm.') }, base.system[3]!] });
    const miss = watch.observe(changed, usage(1_000, 4_400), 'system_changed')!;
    // 5,300 cached before, 1,000 read now; sonnet-5-5 writes at $2.50/M and reads at $0.20/M.
    expect(miss).toEqual({ changed: 'AGENTS.md changed (+1 bytes)', tokens: 4_300, costUsd: expect.closeTo(4_300 * 2.3e-6, 10), apiReason: 'system_changed' });
    expect(cacheMissLine(miss)).toBe('cache miss: AGENTS.md changed (+1 bytes), ~4,300 tokens re-written ≈ $0.0099 (API: system_changed)');
  });

  it('says nothing after a reset (a new conversation starts cold), and continues from a seeded state', () => {
    const watch = new CacheWatch();
    watch.observe(base, usage(0, 5_000));
    watch.reset();
    expect(watch.observe(base, usage(0, 5_000))).toBeNull();
    const resumed = new CacheWatch();
    resumed.seed(watch.state());
    expect(resumed.observe(request({ model: 'claude-haiku-4-5' }), usage(0, 5_000))?.changed).toBe('the model changed (claude-sonnet-5-5 → claude-haiku-4-5)');
  });

  it('an unknown price leaves the cost out', () => {
    const watch = new CacheWatch();
    watch.observe(request({ model: 'my-model' }), usage(0, 100));
    const miss = watch.observe(request({ model: 'my-model' }), usage(0, 100))!;
    expect(miss.costUsd).toBeNull();
    expect(cacheMissLine(miss)).toBe('cache miss: nothing in the prompt changed (the cache entry expired: more than 5 minutes since the previous request, or evicted), ~100 tokens re-written');
  });
});
