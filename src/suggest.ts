/** Edit distance counting an adjacent swap as one edit (optimal string alignment), for "did you mean" hints. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** Up to `count` candidates nearest to `word` (ties keep the candidates' order), optionally within `maxDistance`. */
export function closest(word: string, candidates: readonly string[], count: number, maxDistance = Number.POSITIVE_INFINITY): string[] {
  return candidates
    .map((candidate, index) => ({ candidate, index, distance: editDistance(word.toLowerCase(), candidate.toLowerCase()) }))
    .filter((c) => c.distance <= maxDistance)
    .sort((x, y) => x.distance - y.distance || x.index - y.index)
    .slice(0, count)
    .map((c) => c.candidate);
}
