import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { explainLines } from '../../src/locate/explain.js';
import { locate } from '../../src/locate/locate.js';
import { termsOf } from '../../src/locate/query.js';
import { definedTerms, REFERENCE_FILES } from '../../src/locate/references.js';
import type { Scored } from '../../src/locate/score.js';
import { makeRepo } from '../support/temp-repo.js';

// `retryPolicy` is defined in src/util/backoff.ts and imported and called in src/net/client.ts; src/notes.ts only mentions it in comments,
// on four lines, so on content alone it outranks the caller.
const FILES: Record<string, string> = {
  'src/util/backoff.ts': 'export function retryPolicy(attempts: number) {\n  return { attempts };\n}\n',
  'src/net/client.ts': "import { retryPolicy } from '../util/backoff';\nexport function send() {\n  return retryPolicy(3);\n}\n",
  'src/notes.ts': '// retryPolicy was renamed\n// see retryPolicy above\n// retryPolicy again\n// and retryPolicy\nexport const notes = 1;\n',
  // Names a word nobody defines: no definition, so no reference evidence.
  'src/other.ts': 'export function other() {\n  return backoffTable(2);\n}\nfunction mention() {\n  // backoffTable backoffTable\n}\n',
  ...Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`src/misc/part${i}.ts`, `export const part${i} = ${i};\n`])),
};

let root = '';
let cleanup: () => Promise<void> = async () => undefined;
beforeAll(async () => {
  const made = await makeRepo(FILES);
  root = made.root;
  cleanup = made.cleanup;
});
afterAll(async () => cleanup());

const ask = (question: string, references = true) => locate(root, question, { timeoutMs: 20_000, explain: true, history: false, references });
const rank = (paths: readonly string[], rel: string): number => paths.indexOf(rel);

describe('the references signal', () => {
  it('a file that calls a definition the question names outranks one that only mentions it, and --explain says why', async () => {
    const withRefs = await ask('retryPolicy is not applied');
    const without = await ask('retryPolicy is not applied', false);
    const paths = withRefs.results.map((r) => r.path);
    const before = without.results.map((r) => r.path);
    expect(paths[0]).toBe('src/util/backoff.ts');
    expect(rank(paths, 'src/net/client.ts')).toBeLessThan(rank(paths, 'src/notes.ts'));
    // Without the signal the comments win: the row fails if references stop counting.
    expect(rank(before, 'src/notes.ts')).toBeLessThan(rank(before, 'src/net/client.ts'));
    const client = withRefs.results.find((r) => r.path === 'src/net/client.ts')!.explain!;
    expect(client.terms.find((t) => t.term === 'retrypolicy')?.references).toBeGreaterThan(0);
    expect(explainLines(client).join('\n')).toMatch(/"retrypolicy" \(identifier\): content [0-9.]+, references [0-9.]+/);
    // The definer and the file that only mentions it gain nothing from references.
    for (const rel of ['src/util/backoff.ts', 'src/notes.ts']) {
      expect(withRefs.results.find((r) => r.path === rel)!.explain!.terms.every((t) => t.references === 0)).toBe(true);
    }
  });

  it('is off unless asked for (LocateOptions.references): the default ranking is the one without it', async () => {
    const plain = await locate(root, 'retryPolicy is not applied', { timeoutMs: 20_000, explain: true, history: false });
    const off = await ask('retryPolicy is not applied', false);
    expect(plain.results.map((r) => [r.path, r.score])).toEqual(off.results.map((r) => [r.path, r.score]));
    expect(plain.results.every((r) => r.explain!.terms.every((t) => t.references === 0))).toBe(true);
  });

  it('an identifier nothing defines lends no reference evidence', async () => {
    const result = await ask('backoffTable lookup');
    expect(result.results.length).toBeGreaterThan(0);
    expect(result.results.every((r) => r.explain!.terms.every((t) => t.references === 0))).toBe(true);
  });
});

describe('definedTerms', () => {
  const scored = (symbolEvidence: number[]): Scored => ({ path: 'a.ts', score: 1, evidence: symbolEvidence, pathEvidence: symbolEvidence, symbolEvidence });
  it.each([
    // [question, symbol evidence per term of some candidate, the defined terms' texts]
    ['retryPolicy is not applied', [2.2, 0], ['retrypolicy']],
    ['retryPolicy is not applied', [0, 0], []],
    // A plain word defined somewhere is not a named definition: too common to follow its callers.
    ['applied retryPolicy', [2.2, 2.2], ['retrypolicy']],
  ] as const)('%s with %j → %j', (question, evidence, expected) => {
    const terms = termsOf(question);
    const padded = terms.map((t) => evidence[terms.indexOf(t)] ?? 0);
    expect(definedTerms(terms, [scored(padded)]).map((i) => terms[i]!.text)).toEqual(expected);
  });

  it('parses a bounded number of files', () => {
    expect(REFERENCE_FILES).toBeGreaterThan(0);
    expect(REFERENCE_FILES).toBeLessThanOrEqual(50);
  });
});
