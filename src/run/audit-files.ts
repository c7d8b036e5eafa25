import type { Config } from '../config.js';
import type { Io } from '../io.js';
import { EXIT } from '../exit-codes.js';
import { UsageError } from '../errors.js';
import { VERSION } from '../version.js';
import { exitCodeFor, withError, type ResultObject } from '../output/result.js';
import { sarifCategory, sarifProvenance, toSarif, toSarifFailure, writeSarif, type SarifLog } from '../output/sarif.js';
import { anchorFingerprints, fileLineReader, findingFingerprints } from '../audit/fingerprint.js';
import { applyScope, writeBaseline } from '../audit/scope.js';
import type { AuditReport } from '../audit/report.js';
import type { DiffScope } from '../audit/diff.js';
import { planReview, reviewCommit, writeReview, type ReviewPlan } from '../audit/review-files.js';
import { buildReview } from '../audit/review.js';
import { OutputPathRefused, removeOutputFile } from '../sandbox/safe-write.js';

/** The files an audit writes (--sarif, --review-output), as prepared before the first request. */
export interface AuditFiles {
  /** A file an earlier run left at the --sarif path was removed. */
  staleSarif: boolean;
  review: ReviewPlan | null;
}

/** What writing the files did to the result (a failed write fails the run), and one line per file not written. */
interface WrittenFiles {
  result: ResultObject;
  notes: string[];
}

/**
 * Before the snapshot and the first request: removes what earlier runs left at the --sarif and --review-output paths
 * (a run killed from here on leaves no file that is not its own, and the removal is no change the proof sees) and
 * reads the pull request's earlier comments. A path that cannot be kept honest is a usage error: the run does not start.
 */
export async function prepareAuditFiles(config: Config): Promise<AuditFiles> {
  const audit = config.audit;
  const staleSarif = audit?.sarif ? await removeStaleSarif(audit.sarif, config.root) : false;
  const review = audit?.reviewOutput ? await planReview(audit.reviewOutput, audit.previousReview ?? null, config.root) : null;
  return { staleSarif, review };
}

/**
 * After the read-only proof (so writing never counts as a change to the repository): the SARIF log, then the review,
 * each written only for a verdict (exit 0 or 4). `env` gives the SARIF log its provenance (the CI's variables).
 */
export async function writeAuditFiles(
  files: AuditFiles,
  config: Config,
  question: string,
  env: Io['env'],
  built: ResultObject,
  change: DiffScope | null,
): Promise<WrittenFiles> {
  const notes: string[] = [];
  let result = built;
  if (config.audit?.sarif) result = await sarifFile(config.audit.sarif, config, question, env, result, files.staleSarif, notes);
  if (files.review && change) result = await reviewFile(files.review, config, question, result, change, notes);
  return { result, notes };
}

/**
 * Fails closed: a SARIF file is written (atomically) only for a verdict, exit 0 or 4. Any other end (an API failure, a
 * limit, an interruption, an inconclusive audit, a failed read-only check) leaves no file at that path — one an
 * earlier run left there was removed before the first request, because a code-scanning upload of it — or of an empty
 * result — would read as a clean scan; with --sarif-on-error=notification a log that reports the failure is written
 * instead.
 */
async function sarifFile(
  file: string,
  config: Config,
  question: string,
  env: Io['env'],
  result: ResultObject,
  staleRemoved: boolean,
  notes: string[],
): Promise<ResultObject> {
  const exit = exitCodeFor(result, config.audit?.failOn);
  const provenance = sarifProvenance(env, result.repo.git_commit);
  const common = { root: config.root, toolVersion: VERSION, automationId: sarifCategory(question, config.audit?.sarifCategory ?? null), ...(provenance ? { provenance } : {}) };
  const verdict = (exit === EXIT.ok || exit === EXIT.auditFailed) && result.audit !== undefined;
  // An inconclusive audit ends as a "success" run; name it by what went wrong for the reader of the file.
  const reason = exit === EXIT.auditInconclusive ? 'inconclusive' : result.subtype;
  if (!verdict && config.audit?.sarifOnError !== 'notification') {
    const stale = staleRemoved ? '; a stale file there was removed' : '';
    notes.push(`no SARIF written to ${file}: the audit reached no verdict (${reason})${stale}`);
    return result;
  }
  const summary = result.audit?.summary ? `: ${result.audit.summary}` : '';
  const message = result.error?.message ?? `the audit reached no verdict (${reason})${summary}`;
  const log: SarifLog = verdict
    ? toSarif({ ...common, question, report: result.audit!, readLines: fileLineReader(config.root) })
    : toSarifFailure({ ...common, reason, message });
  try {
    await writeSarif(file, log, config.root);
    if (!verdict) notes.push(`the audit reached no verdict (${reason}); ${file} reports the failure (executionSuccessful: false)`);
    return result;
  } catch (error) {
    return withError(result, `could not write --sarif ${file}: ${(error as Error).message}`);
  }
}

/**
 * `--review-output`: fails closed like SARIF. The review is written only for a verdict (exit 0 or 4), since an empty
 * COMMENT review of a run that reached none would read as a clean change; otherwise a note says why (and that a stale
 * file was removed when the run started). A write that fails makes the run fail, with the cause.
 */
async function reviewFile(
  plan: ReviewPlan,
  config: Config,
  question: string,
  result: ResultObject,
  change: DiffScope,
  notes: string[],
): Promise<ResultObject> {
  const audit = config.audit;
  const exit = exitCodeFor(result, audit?.failOn);
  if (!audit?.diff || result.audit === undefined || (exit !== EXIT.ok && exit !== EXIT.auditFailed)) {
    const stale = plan.staleRemoved ? '; a stale file there was removed' : '';
    const reason = exit === EXIT.auditInconclusive ? 'inconclusive' : result.subtype;
    notes.push(`no review written to ${plan.file}: the audit reached no verdict (${reason})${stale}`);
    return result;
  }
  const review = buildReview({
    report: result.audit,
    files: change.files,
    fingerprints: anchorFingerprints(result.audit.findings, fileLineReader(config.root)),
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
    return withError(result, `could not write --review-output ${plan.file}: ${(error as Error).message}`);
  }
}

/**
 * Classifies each finding against the change and the operator's baseline (kept, marked, counted: never dropped);
 * with --update-baseline, writes this run's findings as the new baseline and treats them as accepted.
 */
export async function scopedOutcome(
  config: Config,
  result: ResultObject,
  change: DiffScope | null,
  baseline: Set<string> | null,
): Promise<ResultObject> {
  const audit = config.audit;
  if (!result.audit || !audit || (change === null && baseline === null)) return result;
  const readLines = fileLineReader(config.root);
  const accepted = audit.updateBaseline ? new Set(findingFingerprints(result.audit.findings, readLines)) : baseline;
  const report = applyScope(result.audit, {
    ...(change ? { files: change.files, scope: audit.scope } : {}),
    ...(accepted ? { baseline: accepted } : {}),
    readLines,
  });
  if (!audit.updateBaseline || audit.baseline === null || result.stop_reason !== 'end_turn') return { ...result, audit: report };
  try {
    await writeBaseline(audit.baseline, report, readLines, config.root);
    return { ...result, audit: report };
  } catch (error) {
    return withError({ ...result, audit: report }, `could not write --baseline ${audit.baseline}: ${(error as Error).message}`);
  }
}

/**
 * An audit whose evidence moved: a file the tools read was changed by another program during the run, so the
 * verdict cannot stand on what the model saw. The report becomes inconclusive (findings kept), with a warning.
 */
export function movedEvidence(report: AuditReport | null, readChanged: readonly string[], warnings: string[]): AuditReport | null {
  if (report === null || readChanged.length === 0) return report;
  const files = readChanged.slice(0, 5).join(', ') + (readChanged.length > 5 ? ` and ${readChanged.length - 5} more` : '');
  warnings.push(`audit inconclusive: files it read changed during the run (${files}); its ${report.verdict} verdict stood on what they held before`);
  return { ...report, verdict: 'inconclusive' };
}

/**
 * Removes a file an earlier run left at the --sarif path; true when there was one. A file that cannot be removed (a
 * directory, no permission) is a usage error: the run could not keep the path honest, so it does not start.
 */
async function removeStaleSarif(file: string, root: string): Promise<boolean> {
  try {
    return await removeOutputFile(file, root);
  } catch (error) {
    if (error instanceof OutputPathRefused && error.code === undefined) throw new UsageError(`--sarif ${file}: ${error.message}`);
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      `--sarif ${file}: cannot remove what is there before the audit (${code ?? (error as Error).message}); remove it or pick another path`,
    );
  }
}
