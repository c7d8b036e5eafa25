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

/** jq builtins that read the environment or load modules from search paths outside the root. */
const JQ_REFUSED = /(?<![.\w$])(?:env|import|include|modulemeta|get_search_list|get_jq_origin|get_prog_origin)\b|\$ENV\b|\$__/;

/** A jq filter may compute anything from its inputs, but not read the environment or modules (`env`, `$ENV`, `import`). */
export function checkJqFilter(filter: string): string | null {
  const match = JQ_REFUSED.exec(filter);
  if (match === null) return null;
  return `the filter uses ${match[0]}, which reads the environment or files outside the inputs; use only the JSON given as input`;
}
