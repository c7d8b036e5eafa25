/**
 * Copy trees: a directory most of whose files have a namesake in its parent (`pydantic/v1/` beside `pydantic/`, a
 * `deprecated/` or `compat/` layer, generated `helpers/esm/` beside `helpers/`, type tests mirroring the sources) holds
 * an older or derived copy of the code beside it. Both hold the question's words; the answer is in the original unless
 * the question names the copy (`v1: …`). Pure: computed from the file listing alone.
 */

/** Namesakes needed for a copy: 4 of 3–4 measured; fewer would take any directory sharing `utils.py` and `errors.py`. */
const MIN_TWINS = 4;
/** And at least this share of the directory's own files (those with names every directory has do not count). */
const MIN_SHARE = 0.5;
/**
 * A file in a copy tree scores this much: of 0.3–0.7 on the tuning sets, 0.5 and 0.3 ranked the same, 0.7 lost two
 * questions on pydantic.
 */
export const COPY_FACTOR = 0.5;
/** File names that most directories have, so sharing them says nothing about being a copy. */
const GENERIC_NAME = /^(index\.[a-z]+|__init__\.py|mod\.rs|lib\.rs|readme(\.[a-z]+)?|package\.json|license(\.[a-z]+)?)$/i;

/** The copy directories of a listing (relative paths), each with its own name lower-cased. */
export function copyDirs(files: readonly string[]): Map<string, string> {
  const byDir = new Map<string, string[]>();
  for (const file of files) {
    const slash = file.lastIndexOf('/');
    const dir = slash < 0 ? '' : file.slice(0, slash);
    const names = byDir.get(dir);
    if (names) names.push(file.slice(slash + 1));
    else byDir.set(dir, [file.slice(slash + 1)]);
  }
  // A parent's names as a set, built once however many subdirectories it has (27k paths: ~10 ms, not ~50).
  const sets = new Map<string, ReadonlySet<string>>();
  const namesIn = (dir: string): ReadonlySet<string> => {
    let set = sets.get(dir);
    if (!set) sets.set(dir, (set = new Set(byDir.get(dir) ?? [])));
    return set;
  };
  const copies = new Map<string, string>();
  for (const [dir, names] of byDir) {
    // Fewer files than MIN_TWINS cannot hold MIN_TWINS namesakes.
    if (dir === '' || names.length < MIN_TWINS) continue;
    const slash = dir.lastIndexOf('/');
    const parent = namesIn(slash < 0 ? '' : dir.slice(0, slash));
    const own = names.filter((n) => !GENERIC_NAME.test(n));
    const twins = own.filter((n) => parent.has(n)).length;
    if (twins >= MIN_TWINS && twins >= own.length * MIN_SHARE) copies.set(dir, dir.slice(slash + 1).toLowerCase());
  }
  return copies;
}

/**
 * COPY_FACTOR for a file inside a copy directory whose name the question does not say (as a word of it, so `v1`
 * counts though it is too short to be a search term), else 1.
 */
export function copyFactor(rel: string, copies: ReadonlyMap<string, string>, questionWords: ReadonlySet<string>): number {
  if (copies.size === 0) return 1;
  const parts = rel.split('/');
  for (let i = 1; i < parts.length; i++) {
    const name = copies.get(parts.slice(0, i).join('/'));
    if (name !== undefined && !questionWords.has(name)) return COPY_FACTOR;
  }
  return 1;
}

/** The question's words as copyFactor compares them: lower-cased runs of letters, digits, `_` and `-`. */
export function wordsOf(question: string): Set<string> {
  return new Set(question.toLowerCase().split(/[^a-z0-9_-]+/).filter((w) => w !== ''));
}
