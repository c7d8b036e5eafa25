import { describe, expect, it } from 'vitest';
import { extractCitations } from '../../src/citations/extract.js';

/**
 * The edges of quotes.ts's ties, one row each side: a code span is a citation's quote only when the gap and the
 * parentheses say so. These rows were missing: dropping the closing-parenthesis check or widening the after-gap left
 * every other citation test green (hand mutants, issue 34).
 */
describe('a code span is tied to a citation only across a short, well-formed gap', () => {
  it.each<[string, string, string | null]>([
    ['in parentheses right after', 'See a.js:3 (`listen(port)`).', 'listen(port)'],
    ['in parentheses that go on past the span', 'See a.js:3 (`listen(port)` and the rest of the setup).', null],
    ['after a colon and three blanks', 'See a.js:3:   `listen(port)`.', 'listen(port)'],
    ['after three blanks', 'See a.js:3   `listen(port)`.', 'listen(port)'],
    ['after four blanks', 'See a.js:3    `listen(port)`.', null],
    ['after a dash', 'See a.js:3 — `listen(port)`.', 'listen(port)'],
    ['before, with the citation in parentheses', 'The call `listen(port)` (a.js:3) starts it.', 'listen(port)'],
    ['before, with words between', 'The call `listen(port)` is in (a.js:3).', null],
  ])('%s', (_name, answer, quoted) => {
    const [cite] = extractCitations(answer);
    expect(cite?.path).toBe('a.js');
    expect(cite?.quote?.text ?? null).toBe(quoted);
  });
});
