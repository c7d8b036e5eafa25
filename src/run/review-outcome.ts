import type { Config } from '../config.js';
import { EXIT } from '../exit-codes.js';
import type { Io } from '../io.js';
import { exitCodeFor, type ResultObject } from '../output/result.js';
import { sarifCategory } from '../output/sarif.js';
import { anchorFingerprints, fileLineReader } from '../audit/fingerprint.js';
import type { DiffScope } from '../audit/diff.js';
import { reviewCommit, writeReview, type ReviewPlan } from '../audit/review-files.js';
import { buildReview } from '../audit/review.js';

/**
 * `--review-output`: fails closed like SARIF. The review is written only for a verdict (exit 0 or 4), since an empty
 * COMMENT review of a run that reached none would read as a clean change; otherwise stderr says why (and that a stale
 * file was removed when the run started). A write that fails makes the run fail, with the cause.
 */
export async function reviewOutcome(
  plan: ReviewPlan,
  config: Config,
  question: string,
  io: Io,
  result: ResultObject,
  change: DiffScope,
): Promise<ResultObject> {
  const audit = config.audit;
  const exit = exitCodeFor(result, audit?.failOn);
  if (!audit?.diff || result.audit === undefined || (exit !== EXIT.ok && exit !== EXIT.auditFailed)) {
    const stale = plan.staleRemoved ? '; a stale file there was removed' : '';
    io.stderr.write(
      `spelunk: no review written to ${plan.file}: the audit reached no verdict (${exit === EXIT.auditInconclusive ? 'inconclusive' : result.subtype})${stale}\n`,
    );
    return result;
  }
  const fingerprints = anchorFingerprints(result.audit.findings, fileLineReader(config.root));
  const review = buildReview({
    report: result.audit,
    files: change.files,
    fingerprints,
    posted: plan.posted,
    failed: exit === EXIT.auditFailed,
    failOn: audit.failOn,
    question,
    category: sarifCategory(question, audit.sarifCategory),
    commitId: await reviewCommit(config.root, audit.diff, result.repo.git_commit),
  });
  try {
    await writeReview({ plan, root: config.root, review });
    return result;
  } catch (error) {
    return {
      ...result,
      subtype: 'error_during_execution',
      is_error: true,
      error: { message: `could not write --review-output ${plan.file}: ${(error as Error).message}` },
    };
  }
}
