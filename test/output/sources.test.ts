import { describe, expect, it } from 'vitest';
import type { VerifiedCitation } from '../../src/citations/verify.js';
import { citationUrl, hyperlinksEnabled, osc8 } from '../../src/output/hyperlink.js';
import { formatSources } from '../../src/output/sources.js';

const cite = (over: Partial<VerifiedCitation>): VerifiedCitation => ({
  path: 'src/a.ts',
  start_line: 3,
  end_line: 3,
  status: 'ok',
  excerpt: 'const a = 1;',
  detail: null,
  abs: '/repo/src/a.ts',
  raws: ['src/a.ts:3'],
  ...over,
});

describe('formatSources', () => {
  it('is empty without citations', () => {
    expect(formatSources([], { color: false, width: 80 })).toBe('');
  });

  it('fits each ✓ line to the width and drops the excerpt when there is no room', () => {
    const long = cite({ excerpt: 'x'.repeat(200) });
    const [, line] = formatSources([long], { color: false, width: 60 }).split('\n');
    expect(line).toHaveLength(60);
    expect(line!.endsWith('…')).toBe(true);
    expect(formatSources([long], { color: false, width: 20 })).toBe('Sources\n  ✓ src/a.ts:3\n');
  });

  it.each([40, 60, 80, 100])('every line fits %i columns: a long ✓ label is cut, a ✗ line\'s problem is cut or dropped', (width) => {
    const deep = `crates/ide-completion/src/render/${'very_long_module_name/'.repeat(5)}function.rs`;
    const out = formatSources(
      [
        cite({ path: deep, excerpt: 'pub(crate) fn render_fn(ctx: RenderContext<\'_>) -> Builder {' }),
        cite({ path: deep, status: 'line_out_of_range', detail: 'the file has 120 lines, and the citation asked for line 999 of it', start_line: 999, end_line: 999 }),
        cite({ status: 'line_out_of_range', detail: 'the file has 2 lines; the model cited a line far past the end of it', start_line: 999, end_line: 999 }),
      ],
      { color: false, width },
    );
    for (const line of out.split('\n')) expect([...line].length).toBeLessThanOrEqual(width);
    expect(out).toContain('✗ src/a.ts:999');
  });

  it('neutralises control characters from the repository (excerpt) and the model (path)', () => {
    const out = formatSources(
      [cite({ excerpt: 'evil \x1b]0;pwned\x07 \u202e' }), cite({ path: 'a\x1b[2J.ts', status: 'missing_file', detail: 'no such file', abs: null })],
      { color: false, width: 200 },
    );
    expect(out).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f\u202e]/);
    expect(out).toContain('evil \\x1b]0;pwned\\x07 \\u202e');
    expect(out).toContain('✗ a\\x1b[2J.ts:3  missing file (no such file)');
  });
});

describe('hyperlinks', () => {
  it.each([
    ['/repo/src/a.ts', 'src/a.ts', 12, null, 'file:///repo/src/a.ts'],
    ['/repo/my dir/a#b?.ts', 'my dir/a#b?.ts', 1, null, 'file:///repo/my%20dir/a%23b%3F.ts'],
    ['/repo/src/a.ts', 'src/a.ts', 12, 'vscode://file/{abs}:{line}', 'vscode://file//repo/src/a.ts:12'],
    ['/repo/src/a.ts', 'src/a.ts', null, 'idea://open?file={abs}&line={line}', 'idea://open?file=/repo/src/a.ts&line=1'],
    ['/repo/src/a.ts', 'src/a.ts', 3, 'https://example.test/{path}#L{line}', 'https://example.test/src/a.ts#L3'],
    ['/repo/src/ü.ts', 'src/ü.ts', 3, null, 'file:///repo/src/%C3%BC.ts'],
    ['/repo/a.ts', 'a.ts', 3, 'x://{abs}\x07', null],
    ['/repo/a.ts', 'a.ts', 3, 'x://{abs} {line}', null],
  ])('%s with %j → %s', (abs, rel, line, template, expected) => {
    expect(citationUrl(abs, rel, line, template)).toBe(expected);
  });

  it('wraps text in OSC 8 only for a safe URL', () => {
    expect(osc8('file:///a', 'a')).toBe('\x1b]8;;file:///a\x1b\\a\x1b]8;;\x1b\\');
    expect(osc8('file:///a\x1b\\evil', 'a')).toBe('a');
  });

  it.each([
    [false, {}, true, false],
    [false, { FORCE_HYPERLINK: '1' }, true, false],
    [true, { FORCE_HYPERLINK: '1' }, false, true],
    [true, { FORCE_HYPERLINK: '0' }, true, false],
    [true, {}, true, true],
    [true, {}, false, false],
  ])('tty %s, env %j, detector says %s → %s', (isTTY, env, detected, expected) => {
    expect(hyperlinksEnabled({ isTTY, write: () => true }, env, () => detected)).toBe(expected);
  });
});
