import { describe, expect, it } from 'vitest';
import { citedFiles } from '../../src/citations/extract.js';

// Saved sessions name the cited files that changed since the session's commit (run/saved.ts); they take the files from
// the citation extractor, so a resume and the Sources block agree on what an answer cited (issue 22). The rows the
// regex saved.ts used before got wrong are marked "was".
describe('citedFiles', () => {
  it.each<[string, string, string[]]>([
    ['path:line', 'See src/router.js:5.', ['src/router.js']],
    ['a range and a column', 'src/a.ts:3-9 and src/b.ts:4:2', ['src/a.ts', 'src/b.ts']],
    ['each file once, in order', 'src/b.ts:1, src/a.ts:2, src/b.ts:3', ['src/b.ts', 'src/a.ts']],
    ['a leading ./ dropped', './src/a.ts:3', ['src/a.ts']],
    ['was missed: a GitHub-style anchor', 'src/a.ts#L3-L9', ['src/a.ts']],
    ['was missed: a markdown link', 'the [handler](src/router.js#L3)', ['src/router.js']],
    ['was missed: lines in words', '`src/router.js` lines 3-5', ['src/router.js']],
    ['was missed: a file without an extension', 'the target at Makefile:2', ['Makefile']],
    ['was missed: a Cursor fence', '```3:5:src/router.js\nfunction handle(req, res) {\n```', ['src/router.js']],
    ['was wrong: a URL is not a file', 'https://github.com/x/y/blob/main/src/a.js:3', []],
    ['was wrong: a version is not a file', 'Node 20.19:1 and 1.2:3', []],
    ['was wrong: code in a fence is not a claim', '```\nconst s = "lib/nope.js:3";\n```', []],
    ['a citation at a commit: its file is fixed by the commit', '1a2b3c4:src/a.ts:3', []],
    ['a path outside the root names no file of the repository', '../x.js:1 and /etc/passwd:1 and lib/../../y.js:2', []],
    ['a file named without lines is not a line citation', 'see `src/router.js`', []],
  ])('%s', (_name, answer, files) => {
    expect(citedFiles(answer)).toEqual(files);
  });
});
