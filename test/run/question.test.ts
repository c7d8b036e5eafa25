import { describe, expect, it } from 'vitest';
import { LARGE_QUESTION_BYTES, largeGate, largeQuestion } from '../../src/run/question.js';

const BIG = 'b'.repeat(LARGE_QUESTION_BYTES + 1);
const model = 'claude-sonnet-5-5';

describe('largeQuestion: the stated size is the limit', () => {
  it.each([
    ['x'.repeat(LARGE_QUESTION_BYTES), false],
    ['x'.repeat(LARGE_QUESTION_BYTES + 1), true],
    // Bytes, not characters: 125,001 two-byte characters are over 250 KB.
    ['é'.repeat(LARGE_QUESTION_BYTES / 2 + 1), true],
  ])('%#', (text, large) => {
    expect(largeQuestion(text, model) !== null).toBe(large);
  });
});

describe('largeGate: a pasted question in the REPL', () => {
  const terminal = { model, terminal: true, allowed: false };
  it.each<[string, string | null, typeof terminal, ReturnType<typeof largeGate>]>([
    ['small?', null, terminal, { question: 'small?', held: null }],
    [BIG, null, terminal, { question: null, held: BIG, say: expect.stringMatching(/^the question is 250 KB .*\. Send it\? Type y to send it, anything else to drop it$/) }],
    ['y', BIG, terminal, { question: BIG, held: null }],
    ['YES', BIG, terminal, { question: BIG, held: null }],
    ['no', BIG, terminal, { question: null, held: null, say: 'not sent' }],
    ['small?', BIG, terminal, { question: null, held: null, say: 'not sent' }],
    [BIG, null, { ...terminal, terminal: false }, { question: null, held: null, say: expect.stringMatching(/^not sent: the question is 250 KB .*; --allow-large-question sends it$/) }],
    [BIG, null, { ...terminal, allowed: true }, { question: BIG, held: null }],
    [`/resume ${BIG}`, null, terminal, { question: `/resume ${BIG}`, held: null }],
  ])('%#', (line, held, opts, expected) => {
    expect(largeGate(line, held, opts)).toEqual(expected);
  });
});
