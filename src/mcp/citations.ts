import { citationRecord, verifyCitations, type VerifiedCitation } from '../citations/verify.js';

/** One citation of an answer as the MCP tools return it: the json result's shape (`citations[]`). */
export type Citation = ReturnType<typeof citationRecord>;

/** The citations of an answer, each verified against `root` with read_file's containment rules. */
export async function citationsOf(answer: string, root: string): Promise<Citation[]> {
  const verified: VerifiedCitation[] = await verifyCitations(root, answer);
  return verified.map(citationRecord);
}
