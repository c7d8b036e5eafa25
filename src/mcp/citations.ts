/** One `path:line` reference of an answer and what checking it against the repository found. */
export interface Citation {
  path: string;
  line?: number;
  /** e.g. verified, missing_file, line_out_of_range (the vocabulary of the citation checker, issue 9). */
  status: string;
}

/**
 * The citations of an answer, verified against `root`. Empty until the citation checker (issue 9) lands: this is the
 * one place to wire it, so `ask`, `ask_followup` and every later consumer get verified citations at once.
 */
export async function citationsOf(answer: string, root: string): Promise<Citation[]> {
  void answer;
  void root;
  return [];
}
