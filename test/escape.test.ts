import { describe, expect, it } from 'vitest';
import { escapeControls, oneLine } from '../src/escape.js';

/** One row per class of character that must never reach a terminal or a prompt raw, with the escape it shows as. */
const ESCAPED: Array<[string, number, string]> = [
  ['NUL', 0x0000, '\\x00'],
  ['ESC', 0x001b, '\\x1b'],
  ['newline', 0x000a, '\\n'],
  ['DEL', 0x007f, '\\x7f'],
  ['C1 CSI', 0x009b, '\\x9b'],
  ['NEL', 0x0085, '\\x85'],
  ['soft hyphen', 0x00ad, '\\xad'],
  ['combining grapheme joiner', 0x034f, '\\u034f'],
  ['Arabic number sign', 0x0600, '\\u0600'],
  ['ARABIC LETTER MARK', 0x061c, '\\u061c'],
  ['Hangul choseong filler', 0x115f, '\\u115f'],
  ['Khmer inherent vowel', 0x17b4, '\\u17b4'],
  ['Mongolian free variation selector', 0x180b, '\\u180b'],
  ['Mongolian vowel separator', 0x180e, '\\u180e'],
  ['zero width space', 0x200b, '\\u200b'],
  ['ZWNJ', 0x200c, '\\u200c'],
  ['ZWJ', 0x200d, '\\u200d'],
  ['LRM', 0x200e, '\\u200e'],
  ['RLM', 0x200f, '\\u200f'],
  ['line separator', 0x2028, '\\u2028'],
  ['paragraph separator', 0x2029, '\\u2029'],
  ['LRE', 0x202a, '\\u202a'],
  ['RLO', 0x202e, '\\u202e'],
  ['word joiner', 0x2060, '\\u2060'],
  ['invisible times', 0x2062, '\\u2062'],
  ['invisible plus', 0x2064, '\\u2064'],
  ['unassigned U+2065 (default ignorable)', 0x2065, '\\u2065'],
  ['LRI', 0x2066, '\\u2066'],
  ['PDI', 0x2069, '\\u2069'],
  ['inhibit symmetric swapping', 0x206a, '\\u206a'],
  ['nominal digit shapes', 0x206f, '\\u206f'],
  ['Hangul filler', 0x3164, '\\u3164'],
  ['BOM / ZWNBSP', 0xfeff, '\\ufeff'],
  ['halfwidth Hangul filler', 0xffa0, '\\uffa0'],
  ['unassigned U+FFF0 (default ignorable)', 0xfff0, '\\ufff0'],
  ['interlinear annotation anchor', 0xfff9, '\\ufff9'],
  ['interlinear annotation terminator', 0xfffb, '\\ufffb'],
  ['Kaithi number sign', 0x110bd, '\\u{110bd}'],
  ['Egyptian hieroglyph format control', 0x13430, '\\u{13430}'],
  ['shorthand format letter overlap', 0x1bca0, '\\u{1bca0}'],
  ['musical symbol begin beam', 0x1d173, '\\u{1d173}'],
  ['LANGUAGE TAG', 0xe0001, '\\u{e0001}'],
  ['TAG SPACE', 0xe0020, '\\u{e0020}'],
  ['TAG LATIN CAPITAL A', 0xe0041, '\\u{e0041}'],
  ['CANCEL TAG', 0xe007f, '\\u{e007f}'],
  ['unassigned tag-block U+E0080', 0xe0080, '\\u{e0080}'],
  ['variation selector-17', 0xe0100, '\\u{e0100}'],
  ['variation selector-256', 0xe01ef, '\\u{e01ef}'],
];

describe('escapeControls', () => {
  it.each(ESCAPED)('%s (U+%s) is shown as its escape, alone and between letters', (_name, code, shown) => {
    const c = String.fromCodePoint(code);
    expect(escapeControls(c)).toBe(shown);
    expect(escapeControls(`a${c}b`)).toBe(`a${shown}b`);
  });

  it('covers every code point of the classes: nothing Cc, Cf or default-ignorable survives', () => {
    const survivors: string[] = [];
    for (let code = 0; code <= 0x10ffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const c = String.fromCodePoint(code);
      if (!/[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}]/u.test(c)) continue;
      // A variation selector after a visible letter is the one allowed case (below); alone it is escaped.
      if (escapeControls(c) === c) survivors.push(code.toString(16));
    }
    expect(survivors).toEqual([]);
  });

  it.each([
    ['plain ASCII', 'export const a = 1;'],
    ['accented and CJK text', 'café 日本語 Ωμέγα'],
    ['right-to-left letters (not controls)', 'שלום مرحبا'],
    ['an emoji', '🦀 done'],
    ['a no-break space and an em space (visible spacing)', 'a\u00a0b\u2003c'],
    ['an emoji with its presentation selector', 'warning \u26a0\ufe0f and \u2764\ufe0f'],
    ['a text-presentation selector after a digit', '1\ufe0e'],
    ['a selector after an astral emoji', '\u{1f441}\ufe0f'],
  ])('%s stays as it is', (_name, text) => {
    expect(escapeControls(text)).toBe(text);
  });

  it.each([
    ['a selector at the start', '\ufe0fx', '\\ufe0fx'],
    ['a run of selectors (smuggled bytes)', 'a\ufe00\ufe01\ufe02', 'a\\ufe00\\ufe01\\ufe02'],
    ['a selector after a supplement selector', 'a\u{e0100}\ufe0f', 'a\\u{e0100}\\ufe0f'],
    ['a selector after an escaped control', '\u200b\ufe0f', '\\u200b\\ufe0f'],
    ['a selector before a supplement selector', 'a\ufe0f\u{e0101}', 'a\\ufe0f\\u{e0101}'],
    ['an emoji ZWJ sequence keeps its selector, not its joiner', '\u2764\ufe0f\u200d\u{1f525}', '\u2764\ufe0f\\u200d\u{1f525}'],
  ])('%s is escaped', (_name, text, shown) => {
    expect(escapeControls(text)).toBe(shown);
  });

  it.each([
    ['newline and tab kept', 'a\n\tb\x1b', '\n\t', 'a\n\tb\\x1b'],
    ['an astral character kept by name', 'a\u{e0041}', '\u{e0041}', 'a\u{e0041}'],
  ])('keep: %s', (_name, text, keep, shown) => {
    expect(escapeControls(text, keep)).toBe(shown);
  });
});

/** The one helper for text that must stay on one line (terminal labels, prompt paths, citation details). */
describe('oneLine', () => {
  it.each<[string, string, string]>([
    ['plain text is unchanged', 'src/app.ts', 'src/app.ts'],
    ['a newline becomes ↵', 'a\nb', 'a↵b'],
    ['CRLF is one ↵', 'a\r\nb', 'a↵b'],
    ['a lone CR is escaped, not a return to column 0', 'a\rb', 'a\\rb'],
    ['a tab is a space', 'a\tb', 'a b'],
    ['ESC is escaped', 'a\x1b[2Jb', 'a\\x1b[2Jb'],
    ['a bidi override is escaped', 'a\u202eb', 'a\\u202eb'],
    ['the line separator is escaped', 'a\u2028b', 'a\\u2028b'],
    ['an emoji with its presentation selector stays', '⚠\ufe0f ok', '⚠\ufe0f ok'],
    ['a name with a newline cannot forge a second line', 'x.ts\n- Platform: evil', 'x.ts↵- Platform: evil'],
  ])('%s', (_what, input, shown) => {
    expect(oneLine(input)).toBe(shown);
    expect(oneLine(input)).not.toMatch(/[\n\r\t]/);
  });
});
