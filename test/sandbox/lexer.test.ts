import { describe, expect, it } from 'vitest';
import { lex, MAX_COMMAND_BYTES, MAX_WORDS } from '../../src/sandbox/policy/lexer.js';

/**
 * The lexer on its own: the words bash would pass after quote removal, or the one-line refusal the model is given.
 * policy.test.ts checks whole verdicts; these rows pin what only the lexer decides (which of its own reasons wins
 * when shell-quote's cross-check would also refuse, where single quotes begin and end, the exact limits).
 */
const words = (command: string): string[] => {
  const lexed = lex(command);
  if (!lexed.ok) throw new Error(`refused: ${lexed.reason}`);
  return lexed.words.map((word) => word.text);
};

const reason = (command: string): string => {
  const lexed = lex(command);
  if (lexed.ok) throw new Error(`allowed: ${JSON.stringify(lexed.words.map((word) => word.text))}`);
  return lexed.reason;
};

describe('lex: words after quote removal', () => {
  it.each<[string, string[]]>([
    // Inside double quotes a backslash is removed only before $ " \ and `; before anything else both characters stay.
    ['rg "a\\b"', ['rg', 'a\\b']],
    ['rg "a\\"b"', ['rg', 'a"b']],
    ['rg "a\\\\b"', ['rg', 'a\\b']],
    // A full-width parenthesis is text once a single quote opens after a double-quoted word has closed.
    ["rg \"a\" '（'", ['rg', 'a', '（']],
    // Inside single quotes a space character that NFKC keeps (Ogham space mark) is text to search for.
    ["rg 'a\u1680b'", ['rg', 'a\u1680b']],
    // A compatibility character that normalises to ordinary letters (the ligature ﬁ) is only text, even unquoted.
    ['rg ﬁle', ['rg', 'ﬁle']],
  ])('%j becomes %j', (command, expected) => {
    expect(words(command)).toEqual(expected);
  });
});

describe('lex: refusals', () => {
  it.each<[string, string]>([
    // Where single quotes are decides where a look-alike is text: each row ends with an unquoted full-width "(".
    ["rg 'a' （", 'looks like the shell character "("'],
    ["rg \\' （", 'looks like the shell character "("'],
    ['rg "\'" （', 'looks like the shell character "("'],
    ['rg "a\'" （', 'looks like the shell character "("'],
    // A look-alike is refused when any character it normalises to is a shell character (⑴ → "(1)").
    ['rg ⑴', 'looks like the shell character "(1)"'],
    // Control characters: DEL and the whole C1 block, both ends.
    ['rg x\u007f', 'control character U+007F'],
    ['rg x\u009f', 'control character U+009F'],
    // A line separator is whitespace to bash's neighbours, and refused inside single quotes too.
    ["rg 'a\u2028b'", 'non-ASCII whitespace U+2028'],
    // The lexer names the first problem itself: an operator before the expansion that follows it.
    ['rg x > $HOME/out', 'redirection (>)'],
    ['rg x ;& ls', 'command chaining (;&)'],
    ['rg x)', 'subshells and grouping with ( )'],
    ['rg x # note', 'if # is part of a pattern, put the argument in single quotes'],
    // Either brace alone is refused, not only a complete {a,b}.
    ['rg x{', 'brace expansion'],
    ['rg x}', 'brace expansion'],
    // Unquoted, an expansion's reason says neither "inside double quotes" nor leaves out what to do instead.
    ['rg $HOME', 'variable expansion ($) is not supported: the environment is not available'],
    ['rg ${PATH}', 'is not supported; put patterns containing $ in single quotes'],
    ['rg "$HOME"', 'is not supported (it expands inside double quotes too): the environment is not available'],
  ])('%j is refused (%s)', (command, fragment) => {
    expect(reason(command)).toContain(fragment);
  });
});

describe('lex: limits', () => {
  const atWords = `rg${' x'.repeat(MAX_WORDS - 1)}`;
  const atBytes = `rg ${'a'.repeat(MAX_COMMAND_BYTES - 3)}`;
  it.each<[string, string, string | null]>([
    ['MAX_WORDS words', atWords, null],
    ['one word more', `${atWords} x`, `has ${MAX_WORDS + 1} arguments; the limit is ${MAX_WORDS}`],
    ['MAX_COMMAND_BYTES bytes', atBytes, null],
    ['one byte more', `${atBytes}a`, `is ${MAX_COMMAND_BYTES + 1} bytes; the limit is ${MAX_COMMAND_BYTES}`],
    // Bytes, not characters: 4095 two-byte letters are 8193 bytes in 4098 characters.
    ['UTF-8 bytes, not characters', `rg ${'é'.repeat(4095)}`, `is ${MAX_COMMAND_BYTES + 1} bytes`],
  ])('%s: %#', (_label, command, fragment) => {
    if (fragment === null) expect(lex(command).ok).toBe(true);
    else expect(reason(command)).toContain(fragment);
  });
});
