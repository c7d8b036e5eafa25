import type { HistoryContribution } from './history.js';
import type { Term } from './query.js';
import { placeFactor, scopeFactor, sideFactor, type Idfs, type Scored } from './score.js';

/** One term's share of a result's score, before the factors: content hits, path match, a definition named like it. */
interface TermContribution {
  term: string;
  /** The term's kind; `compound` for two adjacent words run together. */
  kind: Term['kind'] | 'compound';
  /** Set when the term comes from the question's leading scope (`hmr: …`). */
  scope?: true;
  content: number;
  path: number;
  definition: number;
  /** A reference site (call, `new`, type, import) of a definition the question names. */
  references: number;
}

/**
 * Why a result scored what it did (`--explain`): the sum of its terms' contributions times each factor, plus what
 * history added, is its score (to rounding). Factors are 1 for ordinary source.
 */
export interface Explanation {
  terms: TermContribution[];
  /** Added by git history (src/locate/history.ts): similar past commits touched it, or it changed with the best results. */
  history?: HistoryContribution;
  factors: {
    /** Tests, fixtures, docs, generated or vendored trees, prose and data, build files, declarations. */
    place: number;
    /** The leading scope named by some path but not by this one. */
    scope: number;
    /** Inside a copy directory (src/locate/copies.ts) the question does not name. */
    copy: number;
    /** A `Code generated … DO NOT EDIT` or `@generated` header (looked for in the re-ranked candidates). */
    generated: number;
  };
}

/** The explanation of one scored file; `applied` are the copy and generated factors locate applied to it. */
export function explain(
  hit: Scored,
  terms: readonly Term[],
  idfs: Idfs,
  applied: { copy: number; generated: number },
  history?: HistoryContribution,
): Explanation {
  const contributions: TermContribution[] = [];
  terms.forEach((term, i) => {
    const symbol = hit.symbolEvidence?.[i] ?? 0;
    const reference = hit.referenceEvidence?.[i] ?? 0;
    const content = term.weight * (idfs.content[i] ?? 0) * ((hit.evidence[i] ?? 0) - symbol - reference);
    const definition = term.weight * (idfs.content[i] ?? 0) * symbol;
    const references = term.weight * (idfs.content[i] ?? 0) * reference;
    const path = term.weight * (idfs.path[i] ?? 0) * (hit.pathEvidence[i] ?? 0);
    if (content === 0 && path === 0 && definition === 0 && references === 0) return;
    contributions.push({
      term: term.text,
      kind: term.parts ? 'compound' : term.kind,
      ...(term.scope ? { scope: true as const } : {}),
      content: round(content),
      path: round(path),
      definition: round(definition),
      references: round(references),
    });
  });
  const total = (c: TermContribution): number => c.content + c.path + c.definition + c.references;
  contributions.sort((a, b) => total(b) - total(a) || (a.term < b.term ? -1 : 1));
  const factors = {
    place: round(placeFactor(hit.path, sideFactor(terms))),
    scope: scopeFactor(terms, idfs, hit.pathEvidence),
    ...applied,
  };
  const past = history ? { history: { messages: round(history.messages), cochange: round(history.cochange) } } : {};
  return { terms: contributions, ...past, factors };
}

/** The explanation as indented text lines under a result. */
export function explainLines(explanation: Explanation): string[] {
  const lines = explanation.terms.map((c) => {
    const parts = (['content', 'path', 'definition', 'references'] as const).filter((f) => c[f] !== 0).map((f) => `${f} ${c[f].toFixed(3)}`);
    const label = `${c.kind}${c.scope ? ', scope' : ''}`;
    return `   + ${(c.content + c.path + c.definition + c.references).toFixed(3)}  "${c.term}" (${label}): ${parts.join(', ')}`;
  });
  const factors = Object.entries(explanation.factors).filter(([, v]) => v !== 1);
  if (factors.length > 0) lines.push(`   × ${factors.map(([name, v]) => `${name} ${v}`).join(' · ')}`);
  const past = explanation.history;
  if (past) {
    const parts = [`similar commits ${past.messages.toFixed(3)}`, `changed with the top results ${past.cochange.toFixed(3)}`];
    lines.push(`   + ${(past.messages + past.cochange).toFixed(3)}  history: ${parts.filter((_p, i) => [past.messages, past.cochange][i] !== 0).join(', ')}`);
  }
  return lines;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
