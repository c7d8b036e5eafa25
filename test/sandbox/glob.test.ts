import { describe, expect, it } from 'vitest';
import { compileSegment, expandGlob, globMatch, MAX_GLOB_MATCHES, MAX_GLOB_WILDCARDS } from '../../src/sandbox/policy/glob.js';
import { lex, type Word } from '../../src/sandbox/policy/lexer.js';
import { useRepo } from '../support/temp-repo.js';

const match = (pattern: string, name: string): boolean => globMatch(compileSegment(pattern), name);

describe('glob matching (bash patterns, one path segment)', () => {
  it.each<[string, string, boolean]>([
    ['*', 'anything', true],
    ['*', '', true],
    ['*.ts', 'a.ts', true],
    ['*.ts', 'a.tsx', false],
    ['*.ts', '.ts', true],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'aXbYc', true],
    ['a*b*c', 'aXbY', false],
    ['a*b*c', 'acb', false],
    ['*a*', 'bab', true],
    ['**', 'x', true],
    ['?', 'a', true],
    ['?', '', false],
    ['?', 'ab', false],
    ['??.md', 'ab.md', true],
    ['?', '日', true],
    ['?', '😀', true],
    ['[ab].ts', 'a.ts', true],
    ['[ab].ts', 'c.ts', false],
    ['[!a].ts', 'b.ts', true],
    ['[!a].ts', 'a.ts', false],
    ['[^a].ts', 'a.ts', false],
    ['[a-c]', 'b', true],
    ['[a-c]', 'd', false],
    ['[a-c]', 'a', true],
    ['[a-c]', 'c', true],
    ['[b-d]', 'a', false],
    ['[axz]', 'm', false],
    ['[-a]', '-', true],
    ['[a-]', '-', true],
    ['[]a]', ']', true],
    ['[!]a]', 'b', true],
    ['[', '[', true],
    ['[ab', '[ab', true],
    ['[a-', '[a-', true],
    ['x[', 'x[', true],
    ['*Z', 'aaaaZ', true],
    ['*Z', 'aaaa', false],
    ['a*a*a*a*b', 'aaaaaaaaaaaaaaaaaaaa', false],
    ['*?*?*', 'ab', true],
    ['*?*?*', 'a', false],
    // The glob mask is read per character after a class too: this star is still a wildcard.
    ['[ab]*', 'ab.ts', true],
  ])('%j matches %j: %s', (pattern, name, expected) => {
    expect(match(pattern, name)).toBe(expected);
  });

  it('treats quoted characters literally', () => {
    // `'*'.ts`: the star was quoted, so only a file literally named *.ts matches.
    const tokens = compileSegment('*.ts', [false, false, false, false]);
    expect(globMatch(tokens, '*.ts')).toBe(true);
    expect(globMatch(tokens, 'a.ts')).toBe(false);
  });

  it.each([
    ['a*', true],
    ['ab', false],
    ['a', false],
  ] as const)("[ab]'*' matches %j: %s (the quoted star after a class is literal)", (name, expected) => {
    // The class spans four characters of the mask, so the fifth (the quoted star) is the one looked up.
    expect(globMatch(compileSegment('[ab]*', [true, true, true, true, false]), name)).toBe(expected);
  });

  it('is linear, not exponential: 30 stars against long names that almost match', () => {
    // Each of these took 27-100 s with the RegExp the matcher replaced; a regression would hang this test.
    const tokens = compileSegment(`${'*'.repeat(30)}Z`);
    for (let i = 0; i < 200; i += 1) expect(globMatch(tokens, `${'a'.repeat(300)}${i}`)).toBe(false);
    expect(globMatch(compileSegment(`${'a*'.repeat(30)}b`), 'a'.repeat(5000))).toBe(false);
  });
});

// k1000 holds exactly MAX_GLOB_MATCHES entries: 999 files and sub/, whose nope/ holds two files.
const many = Object.fromEntries(Array.from({ length: MAX_GLOB_MATCHES - 1 }, (_, i) => [`k1000/f${String(i).padStart(3, '0')}`, '']));
const repo = useRepo({
  'README.md': '# r\n',
  'src/a.ts': '',
  'src/b.ts': '',
  'src/deep/c.ts': '',
  'order/a/z': '',
  'order/a-b/y': '',
  'order/a.c/x': '',
  ...many,
  'k1000/sub/z': '',
  'k1000/sub/nope/y1': '',
  'k1000/sub/nope/y2': '',
});

/** The word the lexer makes of `text` (quotes decide which characters are wildcards). */
function word(text: string): Word {
  const lexed = lex(text);
  if (!lexed.ok || lexed.words.length !== 1) throw new Error(`not one word: ${text}`);
  return lexed.words[0] as Word;
}

describe('glob expansion in a repository', () => {
  type Expected = { paths: string[]; matched: boolean } | { refused: string };
  it.each<[label: string, text: string, expected: Expected]>([
    ['a word without wildcards is not looked up', 'README.md', { paths: ['README.md'], matched: false }],
    ['a quoted star is no wildcard', "'src/*'", { paths: ['src/*'], matched: false }],
    ['files of one directory', 'src/*.ts', { paths: ['src/a.ts', 'src/b.ts'], matched: true }],
    ['a doubled slash is one slash', 'src//*.ts', { paths: ['src/a.ts', 'src/b.ts'], matched: true }],
    ['a trailing slash matches directories only', 'src/*/', { paths: ['src/deep/'], matched: true }],
    ['a doubled trailing slash too', 'src/*//', { paths: ['src/deep/'], matched: true }],
    ['a literal part after a glob must exist', 'src/*/missing.txt', { paths: ['src/*/missing.txt'], matched: false }],
    ['a literal part after a glob that exists', 'src/*/c.ts', { paths: ['src/deep/c.ts'], matched: true }],
    ['sorted bytewise over the whole path, not per directory', 'order/*/*', { paths: ['order/a-b/y', 'order/a.c/x', 'order/a/z'], matched: true }],
    // Listing below a file is no error: the file has no entries, so the word stays literal.
    ['below a file', 'README.md/*', { paths: ['README.md/*'], matched: false }],
    ['below a path through a file', 'README.md/x/*', { paths: ['README.md/x/*'], matched: false }],
    ['below a missing directory', 'nope/*', { paths: ['nope/*'], matched: false }],
    [`exactly ${MAX_GLOB_MATCHES} matches`, 'k1000/*', { paths: [...Object.keys(many), 'k1000/sub'], matched: true }],
    // 999 of the 1000 candidates are files: they add nothing, so the limit is not reached.
    ['a glob below many files', 'k1000/*/*', { paths: ['k1000/sub/nope', 'k1000/sub/z'], matched: true }],
    ['a literal below many files', 'k1000/*/nope/*', { paths: ['k1000/sub/nope/y1', 'k1000/sub/nope/y2'], matched: true }],
    [`more than ${MAX_GLOB_MATCHES} matches`, '*/*', { refused: `matches more than ${MAX_GLOB_MATCHES} paths; narrow it` }],
    [`${MAX_GLOB_WILDCARDS} wildcards`, `src/${'*'.repeat(MAX_GLOB_WILDCARDS - 2)}?.t?`, { paths: ['src/a.ts', 'src/b.ts'], matched: true }],
    [`${MAX_GLOB_WILDCARDS + 1} wildcards`, `src/${'*'.repeat(MAX_GLOB_WILDCARDS - 1)}?.t?`, { refused: `has ${MAX_GLOB_WILDCARDS + 1} wildcard characters` }],
    ['a glob in /etc', '/etc/*', { refused: 'reaches outside the repository root' }],
    ['a glob in /proc', '/proc/*', { refused: 'reaches outside the repository root' }],
    ['a glob in /dev', '/dev/std*', { refused: 'reaches outside the repository root' }],
  ])('%s: %s', async (_label, text, expected) => {
    const got = await expandGlob(repo.root, word(text));
    if ('refused' in expected) {
      expect(got.ok).toBe(false);
      if (!got.ok) expect(got.reason).toContain(expected.refused);
      return;
    }
    expect(got).toEqual({ ok: true, ...expected });
  });

  it.each(['{root}/src/*.ts', '/{root}/src/*.ts', '{root}//src/*.ts'])('expands an absolute glob inside the root to absolute paths: %s', async (text) => {
    const got = await expandGlob(repo.root, word(text.replace('{root}', repo.root)));
    expect(got).toEqual({ ok: true, paths: [`${repo.root}/src/a.ts`, `${repo.root}/src/b.ts`], matched: true });
  });
});
