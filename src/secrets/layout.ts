import { isCredentialFile } from './credential-files.js';

/** Where a text that may hold secrets came from: a tool call (its output is parsed for places), or a file's text. */
export type SecretSource =
  | { kind: 'tool'; name: string; input: unknown }
  /** Text of one file (or of stdin, the question), its first line numbered `firstLine` (default 1). */
  | { kind: 'text'; path: string; firstLine?: number };

/** One line of a text: offsets into it, where its content starts after a prefix (`12\t`, `+`, `src/a.js:3:`), its place. */
export interface LaidLine {
  start: number;
  /** Offset where the line's own text starts (after read_file's number, a diff's +/-, a search's path:line:). */
  body: number;
  end: number;
  /** Repository-relative path the line comes from, when known. */
  path: string | null;
  line: number | null;
  /** A line of history rather than of the work tree: `in commit abc1234`, `removed in commit abc1234`. */
  note: string | null;
  /** The credential file (by name, see credential-files.ts) the line comes from, or may come from; else null. */
  credential: string | null;
}

const READ_FILE_LINE = /^(\d+)\t/;
/** `path:12:` or `path-12-` (a search's match and context lines), the path made of plain path characters. */
const SEARCH_LINE = /^([\w.@+\-/]+?)([:-])(\d+)\2/;
/** `git grep -n x REV`: `REV:path:12:`. */
const REV_SEARCH_LINE = /^([\w.~^@{}\/-]+):([\w.@+\-/]+?):(\d+):/;
/** `path:` with a path whose name is a credential file (a search without line numbers). */
const SEARCH_PATH = /^([\w.@+\-/]+):/;
/** `12:` or `12-`: a search's line in one named file (rg and grep print no path then). */
const BARE_NUMBER = /^(\d+)[:-]/;
const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;
const COMMIT = /^commit ([0-9a-f]{7,64})\b/;

/** Splits `text` into lines and says, for each, where it comes from as far as the output's form tells. */
export function layOut(text: string, source: SecretSource): LaidLine[] {
  const spans = lineSpans(text);
  if (source.kind === 'text') {
    const first = source.firstLine ?? 1;
    const credential = isCredentialFile(source.path) ? source.path : null;
    return spans.map(([start, end], i) => ({ start, body: start, end, path: source.path, line: first + i, note: null, credential }));
  }
  if (source.name === 'read_file') return readFileLines(text, spans, pathOf(source.input));
  return commandLines(text, spans, commandOf(source.input), source.name === 'git');
}

function readFileLines(text: string, spans: Array<[number, number]>, path: string | null): LaidLine[] {
  const credential = path !== null && isCredentialFile(path) ? path : null;
  return spans.map(([start, end]) => {
    const m = READ_FILE_LINE.exec(text.slice(start, Math.min(end, start + 24)));
    if (!m) return { start, body: start, end, path: null, line: null, note: null, credential: null };
    return { start, body: start + m[0].length, end, path, line: Number(m[1]), note: null, credential };
  });
}

/** A diff's state while walking a `git log -p` / `git show` / `git diff` output. */
interface DiffState {
  commit: string | null;
  oldPath: string | null;
  newPath: string | null;
  oldLine: number;
  newLine: number;
  inHunk: boolean;
}

/**
 * Lines of a command's output (bash or git): diffs are followed hunk by hunk (path and line of every +, - and
 * context line, and the commit it belongs to); search output gives its path:line prefixes; the output of a command
 * that names one file (`cat .env`, `head -n 20 .env`, `rg -n x .env`) is that file's. Any credential file named in the
 * command makes every line whose file is not known a credential file's line: `cat a .env` cannot be told apart.
 */
function commandLines(text: string, spans: Array<[number, number]>, command: string, git: boolean): LaidLine[] {
  const named = namedFiles(command, git);
  const single = named.files.length === 1 ? named.files[0]! : null;
  const anyCredential = named.files.find(isCredentialFile) ?? named.credentialWord;
  const diff: DiffState = { commit: null, oldPath: null, newPath: null, oldLine: 0, newLine: 0, inHunk: false };
  const out: LaidLine[] = [];
  spans.forEach(([start, end], index) => {
    const line = text.slice(start, end);
    const inDiff = diffLine(line, diff);
    if (inDiff !== null) {
      const path = inDiff.path;
      out.push({ start, body: start + inDiff.prefix, end, path, line: inDiff.line, note: inDiff.note, credential: credentialOr(path) });
      return;
    }
    const revision = git ? REV_SEARCH_LINE.exec(line) : null;
    if (revision) {
      const path = revision[2]!;
      const note = `at ${revision[1]}`;
      out.push({ start, body: start + revision[0].length, end, path, line: Number(revision[3]), note, credential: credentialOr(path) });
      return;
    }
    const search = SEARCH_LINE.exec(line);
    if (search && !/^\d+$/.test(search[1]!)) {
      const path = search[1]!;
      out.push({ start, body: start + search[0].length, end, path, line: Number(search[3]), note: null, credential: credentialOr(path) });
      return;
    }
    const bare = single !== null ? BARE_NUMBER.exec(line) : null;
    if (bare && named.search) {
      out.push({ start, body: start + bare[0].length, end, path: single, line: Number(bare[1]), note: null, credential: credentialOr(single) });
      return;
    }
    const byName = SEARCH_PATH.exec(line);
    if (byName && isCredentialFile(byName[1]!)) {
      out.push({ start, body: start + byName[0].length, end, path: byName[1]!, line: null, note: null, credential: byName[1]! });
      return;
    }
    const own = single !== null && !named.search ? single : null;
    const lineNo = own !== null && named.firstLine !== null ? named.firstLine + index : null;
    out.push({ start, body: start, end, path: own, line: lineNo, note: null, credential: anyCredential });
  });
  return out;
}

/** The place of a diff line, with the length of its prefix; null for a line that is not in a diff hunk. */
function diffLine(line: string, d: DiffState): { path: string | null; line: number | null; prefix: number; note: string | null } | null {
  const commit = COMMIT.exec(line);
  if (commit) {
    d.commit = commit[1]!.slice(0, 12);
    d.inHunk = false;
    return null;
  }
  if (line.startsWith('diff --git ')) {
    d.inHunk = false;
    return null;
  }
  if (line.startsWith('--- ') && !d.inHunk) {
    d.oldPath = diffPath(line.slice(4));
    return null;
  }
  if (line.startsWith('+++ ') && !d.inHunk) {
    d.newPath = diffPath(line.slice(4));
    return null;
  }
  const hunk = HUNK.exec(line);
  if (hunk) {
    d.oldLine = Number(hunk[1]);
    d.newLine = Number(hunk[2]);
    d.inHunk = true;
    return null;
  }
  if (!d.inHunk) return null;
  const mark = line[0];
  const at = d.commit;
  if (mark === '+') return { path: d.newPath, line: d.newLine++, prefix: 1, note: at === null ? null : `added in commit ${at}` };
  if (mark === '-') {
    return { path: d.oldPath ?? d.newPath, line: d.oldLine++, prefix: 1, note: at === null ? 'removed line' : `removed in commit ${at}` };
  }
  if (mark === ' ') {
    d.oldLine++;
    return { path: d.newPath ?? d.oldPath, line: d.newLine++, prefix: 1, note: at === null ? null : `at commit ${at}` };
  }
  if (mark === '\\') return { path: d.newPath, line: null, prefix: line.length, note: null };
  d.inHunk = false;
  return null;
}

function diffPath(raw: string): string | null {
  const name = raw.replace(/\t.*$/, '').replace(/^"|"$/g, '');
  if (name === '/dev/null') return null;
  return name.replace(/^[ab]\//, '');
}

/**
 * The files a command line names, as far as its words tell (no shell runs here; the policy already parsed it for
 * real): operands that are not flags, a sed script or a search pattern; `REV:path` of `git show`. `search` is set for
 * rg and grep (their `12:` prefixes), `firstLine` for a command whose output starts at a known line of its one file.
 */
function namedFiles(command: string, git: boolean): { files: string[]; search: boolean; firstLine: number | null; credentialWord: string | null } {
  const words = command.split(/\s+/).filter(Boolean).map((w) => w.replace(/^['"]|['"]$/g, ''));
  const program = git ? 'git' : (words[0] ?? '');
  const rest = git ? words.filter((w, i) => !(i === 0 && w === 'git')) : words.slice(1);
  const operands = rest.filter((w) => !w.startsWith('-') && w !== '|' && !/^\d+$/.test(w));
  const credentialWord = words.map((w) => w.replace(/^[^:/]*:/, '')).find(isCredentialFile) ?? null;
  if (program === 'git') {
    const blobs = rest.filter((w) => /^[^-][^:]*:[^:]+$/.test(w)).map((w) => w.slice(w.indexOf(':') + 1));
    return { files: blobs, search: false, firstLine: blobs.length === 1 && rest[0] === 'show' ? 1 : null, credentialWord };
  }
  if (program === 'rg' || program === 'grep') {
    return { files: operands.slice(1), search: true, firstLine: null, credentialWord: credentialWord ?? blindSearch(program, rest) };
  }
  if (program === 'sed') {
    const script = operands[0] ?? '';
    const from = /^(\d+)(?:,\d+)?p$/.exec(script);
    return { files: operands.slice(1), search: false, firstLine: from ? Number(from[1]) : null, credentialWord };
  }
  const fromStart = program === 'cat' || program === 'head' || program === 'nl';
  return { files: operands, search: false, firstLine: fromStart ? 1 : null, credentialWord };
}

/**
 * A search whose output does not name the file of each line (`-I`, `-h`, `--no-filename`, `--json`, NUL separators)
 * and that can reach dot files and ignored files (`rg --hidden`/`-u`/`--no-ignore`, `grep -r`): a line of it may come
 * from a `.env`, so every line it prints is treated as a credential file's (values left out). Null otherwise.
 */
function blindSearch(program: string, words: readonly string[]): string | null {
  const shorts = words.filter((w) => /^-[A-Za-z0-9]+$/.test(w)).join('');
  const blind = words.some((w) => /^--(no-filename|json|null|vimgrep)$/.test(w)) || /[hI0Z]/.test(shorts);
  const reaches =
    program === 'grep'
      ? /[rR]/.test(shorts) || words.some((w) => /^--(recursive|dereference-recursive)$/.test(w))
      : /u/.test(shorts) || words.some((w) => /^--(hidden|no-ignore.*|unrestricted)$/.test(w));
  return blind && reaches ? 'a search that does not name its files' : null;
}

function credentialOr(path: string | null): string | null {
  return path !== null && isCredentialFile(path) ? path : null;
}

function lineSpans(text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let start = 0;
  while (start <= text.length) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl;
    spans.push([start, end]);
    if (nl < 0) break;
    start = nl + 1;
  }
  return spans;
}

function pathOf(input: unknown): string | null {
  const path = (input as { path?: unknown } | null)?.path;
  return typeof path === 'string' ? path.replace(/^\.\//, '') : null;
}

function commandOf(input: unknown): string {
  const command = (input as { command?: unknown } | null)?.command;
  return typeof command === 'string' ? command : '';
}
