import { SymbolIndex, type SymbolTag } from '../symbols/index.js';
import type { Term } from './query.js';
import type { Scored } from './score.js';
import type { FileHits } from './hits.js';

/**
 * Files parsed for reference sites per question, over all defined terms: bounded in work (files parsed), never in
 * wall time, so the ranking does not depend on the machine's load.
 */
export const REFERENCE_FILES = 24;
/** A reference site of a defined term, beside a content match of the same term (a definition adds SYMBOL_EXACT). */
export const REFERENCE_EVIDENCE = 0.6;

/**
 * The terms the question names as definitions: an identifier it wrote (not a compound locate made of two words) that
 * some re-ranked candidate defines under exactly that name (its symbol evidence is set).
 */
export function definedTerms(terms: readonly Term[], reranked: readonly Scored[]): number[] {
  return terms.flatMap((term, i) =>
    term.kind === 'identifier' && term.parts === undefined && reranked.some((s) => (s.symbolEvidence?.[i] ?? 0) > 0) ? [i] : [],
  );
}

/**
 * Adds reference evidence: for each defined term, the best-ranked files holding it in their content that do not define
 * it are parsed (REFERENCE_FILES in all, shared round-robin between the terms), and a file where the term stands at a
 * call, `new`, type or import site gains REFERENCE_EVIDENCE on that term. `rescore` turns evidence into a score.
 * Returns the ranking with those files rescored; the rest unchanged.
 */
export async function withReferences(
  root: string,
  ranked: readonly Scored[],
  terms: readonly Term[],
  defined: readonly number[],
  hits: ReadonlyMap<string, FileHits>,
  symbols: SymbolIndex,
  rescore: (s: Scored, evidence: number[]) => Scored,
): Promise<Scored[]> {
  if (defined.length === 0) return [...ranked];
  const queues = defined.map((i) =>
    ranked.filter((s) => (s.symbolEvidence?.[i] ?? 0) === 0 && (hits.get(s.path)?.count(i) ?? 0) > 0 && SymbolIndex.supports(s.path)),
  );
  const gained = new Map<string, Set<number>>();
  const parsed = new Map<string, readonly SymbolTag[] | null>();
  let budget = REFERENCE_FILES;
  for (let round = 0; budget > 0 && queues.some((q) => q.length > round); round++) {
    for (const [q, i] of defined.entries()) {
      const candidate = queues[q]![round];
      if (candidate === undefined || budget <= 0) continue;
      let references = parsed.get(candidate.path);
      if (references === undefined) {
        budget -= 1;
        const symbolsOf = await symbols.symbolsOf(root, candidate.path, 'all');
        references = symbolsOf.ok ? symbolsOf.references : null;
        parsed.set(candidate.path, references);
      }
      if (references?.some((tag) => referenceNames(tag, terms[i]!))) {
        if (!gained.has(candidate.path)) gained.set(candidate.path, new Set());
        gained.get(candidate.path)!.add(i);
      }
    }
  }
  return ranked.map((s) => {
    const which = gained.get(s.path);
    if (!which) return s;
    const reference = terms.map((_t, i) => (which.has(i) ? REFERENCE_EVIDENCE : 0));
    return { ...rescore(s, s.evidence.map((value, i) => value + reference[i]!)), referenceEvidence: reference };
  });
}

/** A reference tag named the term (or the last part of a dotted term), case aside. */
function referenceNames(tag: SymbolTag, term: Term): boolean {
  const name = tag.name.toLowerCase();
  return name === term.text || name === term.text.replace(/[^a-z0-9_$]/g, '') || term.text.endsWith(`.${name}`);
}
