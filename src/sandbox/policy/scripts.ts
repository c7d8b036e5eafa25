/**
 * Checks for the two programs whose first operand is a program of its own: a sed script and a jq filter. Each returns
 * null when the text is accepted, or the reason (written for the model) when it is not.
 */

/** A sed line address: a number, `first~step`, `$`, or a regex ended at the first unescaped `/` (GNU sed's match_slash). */
const SED_ADDRESS = String.raw`(?:\d+(?:~\d+)?|\$|/(?:[^/\\]|\\.)*/[IM]*)`;
/** The second address of a range: also `+N` (N more lines) and `~N` (up to a multiple of N). */
const SED_END = String.raw`(?:\d+|\$|[+~]\d+|/(?:[^/\\]|\\.)*/[IM]*)`;
/** One command: an optional address or range, then p (print), = (line number) or q (quit, no exit code). */
const SED_PART = String.raw`\s*(?:${SED_ADDRESS}\s*(?:,\s*${SED_END}\s*)?)?[pq=]\s*`;
const SED_SCRIPT = new RegExp(String.raw`^${SED_PART}(?:;${SED_PART})*;?$`);

/**
 * sed runs as a line printer only: every command is p, = or q after an address, so no w (write), r (read a file),
 * e (execute), s///w or y can appear; GNU sed's --sandbox is forced as well.
 */
export function checkSedScript(script: string): string | null {
  if (SED_SCRIPT.test(script)) return null;
  return `the script ${JSON.stringify(script)} is not accepted: sed runs here only as a line printer, sed -n 'N,Mp' FILE ` +
    "(also '$p', '/regex/p', 'N,+Kp', '$='); to search use rg -n 'pattern' FILE, to extract text rg -o";
}

/**
 * jq names refused in a filter: the environment (`env`, `$ENV`), jq's internal variables (`$__loc__`, `$__prog_args`:
 * nothing a question needs), modules loaded from search paths outside the root (`import`, `include`, `modulemeta`,
 * `get_search_list`, the origins), and the host's time zone, read from /etc/localtime (`localtime`, `strflocaltime`).
 * `input`, `inputs` and `input_filename` stay: they read only the files given, which are confined like any operand.
 */
const JQ_REFUSED_NAMES = new Set(['env', 'import', 'include', 'modulemeta', 'get_search_list', 'get_jq_origin', 'get_prog_origin',
  'localtime', 'strflocaltime', '$ENV']);

/**
 * A jq filter may compute anything from its inputs, but not read the environment, jq's internals, modules or the host's
 * time zone. The filter is scanned as jq's lexer reads it: string contents are not code (their `\(…)` interpolations
 * are), a comment runs from `#` to the end of the line, and `$` may be followed by blanks and comments before its name
 * (jq 1.6 reads `$ ENV` as `$ENV`). A name right after `.` is a field (`.env`), not a call.
 */
export function checkJqFilter(filter: string): string | null {
  for (const name of jqNames(filter)) {
    if (JQ_REFUSED_NAMES.has(name) || name.startsWith('$__')) {
      return `the filter uses ${name}, which reads the environment or files outside the inputs (or jq's internals, or the host's time zone); use only the JSON given as input`;
    }
  }
  return null;
}

/** Every name in the code of a jq filter (calls, keywords, `$variables`), fields excepted. */
function jqNames(filter: string): string[] {
  const names: string[] = [];
  /** For each open string interpolation, the parenthesis depth at which it returns to its string. */
  const interpolations: number[] = [];
  let depth = 0;
  let i = 0;
  const skipBlanksAndComments = (): void => {
    for (;;) {
      while (i < filter.length && /\s/.test(filter[i] as string)) i += 1;
      if (filter[i] !== '#') return;
      while (i < filter.length && filter[i] !== '\n') i += 1;
    }
  };
  const readString = (): void => {
    // At the character after an opening quote (or after an interpolation's closing parenthesis).
    while (i < filter.length) {
      const ch = filter[i] as string;
      if (ch === '"') {
        i += 1;
        return;
      }
      if (ch === '\\' && filter[i + 1] === '(') {
        i += 2;
        depth += 1;
        interpolations.push(depth);
        return;
      }
      i += ch === '\\' ? 2 : 1;
    }
  };
  while (i < filter.length) {
    const ch = filter[i] as string;
    if (ch === '#') {
      skipBlanksAndComments();
      continue;
    }
    if (ch === '"') {
      i += 1;
      readString();
      continue;
    }
    if (ch === '(') depth += 1;
    if (ch === ')') {
      if (interpolations.at(-1) === depth) {
        interpolations.pop();
        depth -= 1;
        i += 1;
        readString();
        continue;
      }
      depth -= 1;
    }
    if (ch === '$') {
      i += 1;
      skipBlanksAndComments();
      const name = /^[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*/.exec(filter.slice(i))?.[0] ?? '';
      names.push(`$${name}`);
      i += name.length;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*/.exec(filter.slice(i))?.[0];
    if (name !== undefined) {
      // `.env` is a field; `..env` is `..` followed by a call of env.
      const field = filter[i - 1] === '.' && filter[i - 2] !== '.';
      if (!field) names.push(name);
      i += name.length;
      continue;
    }
    i += 1;
  }
  return names;
}
