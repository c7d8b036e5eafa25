import { describe, expect, it } from 'vitest';
import { citedFiles, extractCitations, type Citation } from '../../src/citations/extract.js';

/** [path, start, end] of every citation found, in order. */
type Found = [string, number | null, number | null];
const found = (text: string): Found[] => extractCitations(text).map((c) => [c.path, c.startLine, c.endLine]);
const only = (text: string): Citation => {
  const all = extractCitations(text);
  expect(all).toHaveLength(1);
  return all[0]!;
};

const CODE = '```js\nconst value = compute(input);\n```';
const P398 = `src/${'a'.repeat(391)}.js`;

/**
 * The forms and their edges, one row each, written against what the citation check's mutation run found that no test
 * told apart (docs/development.md): what a path is, where a line suffix ends, which fences hide or quote, how far a
 * token may reach. The truth of each row is what a careful reader takes the text to cite.
 */
const FORMS: Array<[string, string, Found[]]> = [
  // Extension-less file names that are files, and the extensions that make a word a file name.
  ...['Makefile', 'Dockerfile', 'LICENSE', 'README', 'CHANGELOG', 'Gemfile', 'Rakefile', 'Procfile', 'Jenkinsfile', 'Vagrantfile', 'CODEOWNERS', 'AUTHORS', 'HISTORY'].map(
    (name): [string, string, Found[]] => [`bare name ${name}`, `the rule is in ${name}:2`, [[name, 2, 2]]],
  ),
  ['an extension-less word that is not a known name', 'the rule is in Notes:2', []],
  ['a Ruby file', 'in app/models/user.rb:3 and user.rb:4', [['app/models/user.rb', 3, 3], ['user.rb', 4, 4]]],
  ['a GraphQL schema', 'see schema.graphql:12', [['schema.graphql', 12, 12]]],
  ['an env file', 'set in defaults.env:2', [['defaults.env', 2, 2]]],
  ['a file name with an unknown last extension', 'see `notes.js.bak`', []],
  ['a file name with a character files do not use', 'see `a#b.js`', []],
  // Host names and media types are not directories; their look-alikes are.
  ['a web address without its scheme', 'at github.com/expressjs/express/lib/router.js:3', []],
  ['a subdomain', 'at docs.example.com/guide/a.js:3', []],
  ['a protocol-relative address', 'see //github.com/a/b.js:3', []],
  ['a first segment that only ends like a host', 'in example.community/x.js:3', [['example.community/x.js', 3, 3]]],
  ['a first segment with a character hosts do not use', 'in a+b.com/x.js:3', [['a+b.com/x.js', 3, 3]]],
  ['a media type', 'the body is text/plain:3 here', []],
  ['a directory that starts like a media type', 'see context/handler:12', [['context/handler', 12, 12]]],
  ['a directory that begins with a media type word', 'see textual/handler:12', [['textual/handler', 12, 12]]],
  ['three segments under a media type word', 'in text/html/render:3', [['text/html/render', 3, 3]]],
  ['a media-type pair whose second part has a file extension', 'in text/notes.txt:3', [['text/notes.txt', 3, 3]]],
  ['a media-type pair ending in a dotted version', 'text/v.1:3', []],
  ['a media-type pair ending in a dotted word with a dash', 'text/a.b-c:3', []],
  ['a directory holding www.', 'in src/www.app.js:3', [['src/www.app.js', 3, 3]]],
  // What a path may start with.
  ['an option', 'pass `-x/a.js`', []],
  ['a scoped package name', 'install `@a.js`', []],
  ['a file inside a scoped package', 'see `@scope/pkg/index.js`', [['@scope/pkg/index.js', null, null]]],
  ['an absolute directory', 'at /opt:3', [['/opt', 3, 3]]],
  ['digits and slashes only', 'a ratio of 12/34:5', []],
  ['a colon inside the path', 'see src/C:/a.js:3', []],
  // Prose tokens: what is trimmed around them, and how long they may be.
  ['emphasis before the path and a line suffix after it', 'in _src/a.js line 3', [['src/a.js', 3, 3]]],
  ['two leading underscores', 'see __src/a.js:3', [['src/a.js', 3, 3]]],
  ['an ellipsis after the line', 'in src/a.js:3...', [['src/a.js', 3, 3]]],
  ['repeated ./ before the path', 'in ././src/a.js:3', [['src/a.js', 3, 3]]],
  ['a 400-character citation in a code span', `see \`${P398}:3\``, [[P398, 3, 3]]],
  ['a 401-character token in prose', `see ${P398}x:3`, []],
  // Lines: the largest there is, and the first past it.
  ['the largest line number', 'src/a.js:10000000', [['src/a.js', 10_000_000, 10_000_000]]],
  ['one line past the largest', 'src/a.js:10000001', []],
  ['a range to the largest line', 'src/a.js:1-10000000', [['src/a.js', 1, 10_000_000]]],
  ['a range one past it', 'src/a.js:1-10000001', []],
  ['a backwards range in a code span', 'see `src/a.js:5-3`', []],
  ['a GitHub range without the second L in prose', 'in src/a.js#L3-5', [['src/a.js', 3, 5]]],
  // Line suffixes after a path.
  ['a line suffix does not replace the lines a citation has', 'src/a.js:3 line 9', [['src/a.js', 3, 3]]],
  ['a line named later in the sentence is not the span\'s', '`src/a.js` has it near line 9', [['src/a.js', null, null]]],
  ['a comma before the line suffix', '`src/a.js`, line 9', [['src/a.js', 9, 9]]],
  ['two spaces and a parenthesis', '`src/a.js`  (line 9)', [['src/a.js', 9, 9]]],
  ['L with no space', '`src/a.js` (L9)', [['src/a.js', 9, 9]]],
  ['a spaced dash in a range suffix', '`src/a.js` lines 3 - 5', [['src/a.js', 3, 5]]],
  ['a backwards range suffix leaves the span without lines', '`src/a.js` lines 5-3', [['src/a.js', null, null]]],
  ['a padded code span', 'see ` src/a.js:3 `', [['src/a.js', 3, 3]]],
  // Link targets.
  ['a link target with a hash before the path', '[x](docs#src/a.js#L3)', []],
  ['a link target whose line anchor has more after it', '[x](src/a.js#L3x)', [['src/a.js', null, null]]],
  ['a link range without the second L', '[x](src/a.js#L3-5)', [['src/a.js', 3, 5]]],
  ['a link to a heading of a file', '[x](src/a.js#intro)', [['src/a.js', null, null]]],
  // Commits.
  ['a hex run inside a word is not a commit', 'see xyz1234567:src/a.js:3', []],
  ['a commit with nothing citable after it', 'at abc1234:zz', []],
  // Fences: which lines open and close one, and Cursor's citing fence.
  ['backticks inside a line open no fence', 'inline ``` marks\nsee src/a.js:3', [['src/a.js', 3, 3]]],
  ['an indented fence hides its lines', '   ```\nsrc/a.js:3\n   ```', []],
  ['a fence line with an info string does not close a fence', '```\ncode\n```js\nsrc/a.js:3\n```\nafter src/b.js:4', [['src/b.js', 4, 4]]],
  ['a closing fence with trailing spaces closes it', '```\ncode\n```  \nsrc/a.js:3', [['src/a.js', 3, 3]]],
  ['the lines before a fence stay lines', 'src/a.js:3\nsrc/b.js:4\n```\ncode\n```', [['src/a.js', 3, 3], ['src/b.js', 4, 4]]],
  ["Cursor's fence with a title after the path is a plain fence", '```1:2:src/a.js title\ncode\n```', []],
  ["Cursor's form after a language is a plain fence", '```js 1:2:src/a.js\ncode\n```', []],
  ["Cursor's fence with trailing spaces", '```1:2:src/a.js  \ncode\n```', [['src/a.js', 1, 2]]],
  ["Cursor's fence that names no path", '```3:4:-x\ncode\n```', []],
  ["Cursor's fence with a backwards range", '```20:12:src/a.js\ncode\n```', []],
];

describe('extractCitations: every form and its edges', () => {
  it.each(FORMS)('%s', (_name, text, expected) => {
    expect(found(text)).toEqual(expected);
  });
});

describe('extractCitations: what a citation carries', () => {
  it('a bare file name in a code span is weak; with a line suffix it is not', () => {
    expect(only('see `Makefile`')).toMatchObject({ path: 'Makefile', startLine: null, weak: true });
    expect(only('see `index.js` line 3')).toMatchObject({ path: 'index.js', startLine: 3, weak: false });
  });

  it("a commit's citation of a bare name is not weak, and keeps the commit", () => {
    expect(only('see `abc1234:index.js`')).toMatchObject({ path: 'index.js', commit: 'abc1234', weak: false });
  });

  it("Cursor's fence: lines, raw form, the block as its quote, never weak", () => {
    expect(only('```12:13:src/a.js\nconst value = compute(input);\n```')).toEqual({
      path: 'src/a.js',
      startLine: 12,
      endLine: 13,
      quote: { text: 'const value = compute(input);', name: null },
      weak: false,
      raw: '12:13:src/a.js',
    });
  });

  it.each<[string, string, boolean]>([
    ['the fence on the next line', `see src/a.js:3:\n${CODE}`, true],
    ['a blank line between', `see src/a.js:3:\n\n${CODE}`, true],
    ['a line of prose before the citation', `An introduction.\nsee src/a.js:3:\n${CODE}`, true],
    ['a link citation after a long first line', `a long introductory line of prose here\n[h](src/a.js#L3):\n${CODE}`, true],
    ['80 characters between the citation and the fence', `src/a.js:3 ${'x'.repeat(79)}\n${CODE}`, true],
    ['81 characters between', `src/a.js:3 ${'x'.repeat(80)}\n${CODE}`, false],
    ['prose on a line between', `see src/a.js:3\nand more words\n${CODE}`, false],
    ['an unclosed fence at the end', 'see src/a.js:3:\n```js\nconst value = compute(input);', true],
  ])("a fence after the paragraph's last citation is its quote: %s", (_name, text, quoted) => {
    const cite = extractCitations(text).at(-1)!;
    expect(cite.path).toBe('src/a.js');
    expect(cite.quote).toEqual(quoted ? { text: 'const value = compute(input);', name: null } : null);
  });
});

describe('citedFiles', () => {
  it('trims every trailing slash of a directory cited with a line', () => {
    expect(citedFiles('see src/lib//:3 and src/lib/:4')).toEqual(['src/lib']);
  });
});
