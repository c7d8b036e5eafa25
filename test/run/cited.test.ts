import { describe, expect, it } from 'vitest';
import { verifyCitations } from '../../src/citations/verify.js';
import { fixRequest } from '../../src/run/cited.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

// The fix turn of --verify-citations fix (issue 24): it must name the citation, as written, and the suspect quote, so a
// model whose lines were right can see that only the quote was doubted.
const repo = useRepo(APP_FILES);

async function request(answer: string): Promise<string> {
  return fixRequest((await verifyCitations(repo.root, answer)).filter((c) => c.status !== 'ok'));
}

describe('fixRequest', () => {
  it.each([
    [
      'a quote that is not near the lines: the citation, the quote, and what the line holds',
      'The handler is `function route(req)` (src/router.js:3).',
      '- src/router.js:3: quote_mismatch (the quoted code `function route(req)` is not within 3 lines of the cited range); line 3 reads `function handle(req, res) {`',
    ],
    [
      'an identifier whose name is not there: the name looked for',
      '`routes.delete` (src/router.js:3)',
      '- src/router.js:3: quote_mismatch (the name `delete` (of `routes.delete`) does not occur within 3 lines of the cited range); line 3 reads `function handle(req, res) {`',
    ],
    ['a line out of range', 'See src/router.js:99.', '- src/router.js:99: line_out_of_range (the file has 9 lines)\n'],
    ['a form other than path:line is named as written', 'See [the handler](src/router.js#L99).', '- src/router.js:99: line_out_of_range (the file has 9 lines) (written as "the handler")'],
  ])('%s', async (_name, answer, line) => {
    expect(await request(answer)).toContain(line);
  });

  it('lists only the occurrence that is wrong when the same citation is also quoted right', async () => {
    const text = await request('First `function handle(req, res)` (src/router.js:3), then `function route(req)` (src/router.js:3).');
    expect(text.match(/^- /gm)).toHaveLength(1);
    expect(text).toContain('`function route(req)`');
  });
});
