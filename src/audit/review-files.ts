import { promises as fs } from 'node:fs';
import { UsageError } from '../errors.js';
import { escapeControls } from '../escape.js';
import { OutputPathRefused, removeOutputFile, resolveOutputPath, writeOutputFile } from '../sandbox/safe-write.js';
import { execGit } from '../sandbox/git.js';
import { locateRepository } from '../sandbox/git-repo.js';
import type { DiffSource } from './diff.js';
import { FINGERPRINT_MARKER, type ReviewBody } from './review.js';

/** Largest --previous-review file read, in bytes (GitHub lists at most a few thousand comments on a pull request). */
export const MAX_PREVIOUS_REVIEW_BYTES = 16 * 1024 * 1024;
/** Entries past this many are ignored, with a warning. */
const MAX_PREVIOUS_COMMENTS = 20_000;
/** GitHub's own limit on a comment body. */
const MAX_COMMENT_BODY_CHARS = 65_536;
const MAX_PATH_CHARS = 4_096;
const REV_PARSE_TIMEOUT_MS = 10_000;

/** What a run knows before it starts about the review it will write. */
export interface ReviewPlan {
  file: string;
  /** Fingerprints already posted on the pull request. */
  posted: Set<string>;
  /** One line about a bad --previous-review file (it was then ignored, in part or whole). */
  warning: string | null;
  /** A review file an earlier run left at the path was removed. */
  staleRemoved: boolean;
}

/**
 * Before the first request: removes a review file an earlier run left (a review is written only for a verdict, so a
 * killed run must not leave one that reads as clean) and reads the pull request's earlier comments. A path that goes
 * through a link planted in the repository, a missing file or a previous-review file inside the repository is a usage
 * error; a file whose content is bad is a warning.
 */
export async function planReview(file: string, previous: string | null, root: string): Promise<ReviewPlan> {
  let staleRemoved: boolean;
  try {
    staleRemoved = await removeOutputFile(file, root);
  } catch (error) {
    const why = error instanceof OutputPathRefused ? error.message : `cannot remove what is there (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
    throw new UsageError(`--review-output ${file}: ${why}`);
  }
  const read = previous === null ? { posted: new Set<string>(), warning: null } : await readPreviousReview(previous, root);
  return { file, ...read, staleRemoved };
}

/**
 * `--previous-review FILE`: the pull request's review comments as GitHub's API lists them (a JSON array of objects with
 * `body`, `path`, `line`), and so untrusted input: bounded in size, checked field by field, and only a marker that ends
 * a body in spelunk's exact form counts. Bad entries are skipped and a bad file is ignored, each with one warning line.
 * The file must lie outside the repository: the change under audit could otherwise silence its own comments.
 */
export async function readPreviousReview(file: string, root: string): Promise<{ posted: Set<string>; warning: string | null }> {
  const where = await resolveOutputPath(file, root).catch((error: Error) => {
    throw new UsageError(`--previous-review ${file}: ${error.message}`);
  });
  if (where.inside) throw new UsageError(`--previous-review ${file} is inside the repository, where the change being audited could edit it; write it elsewhere (e.g. $RUNNER_TEMP)`);
  if (!where.exists) throw new UsageError(`--previous-review ${file}: no such file; write the pull request's comments there (gh api repos/O/R/pulls/N/comments --paginate)`);
  const ignored = (why: string) => ({
    posted: new Set<string>(),
    warning: `--previous-review ${escapeControls(file)}: ${why}; ignored, so earlier comments may be posted again`,
  });
  const handle = await fs.open(`${where.dir}/${where.name}`, 'r');
  let text: string;
  try {
    const size = (await handle.stat()).size;
    if (size > MAX_PREVIOUS_REVIEW_BYTES) return ignored(`${size} bytes is more than ${MAX_PREVIOUS_REVIEW_BYTES}`);
    text = await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return ignored('not JSON');
  }
  // `gh api --paginate` without --slurp concatenates pages as [..][..]: not one JSON value, so not accepted above.
  if (!Array.isArray(parsed)) return ignored('not a JSON array of review comments');
  const posted = new Set<string>();
  let bad = 0;
  for (const entry of parsed.slice(0, MAX_PREVIOUS_COMMENTS)) {
    const fingerprint = commentFingerprint(entry);
    if (fingerprint === undefined) bad++;
    else if (fingerprint !== null) posted.add(fingerprint);
  }
  const over = parsed.length > MAX_PREVIOUS_COMMENTS ? `; entries past ${MAX_PREVIOUS_COMMENTS} ignored` : '';
  const warning = bad > 0 || over !== '' ? `--previous-review ${escapeControls(file)}: ${bad} entr${bad === 1 ? 'y' : 'ies'} without the shape {body, path, line} skipped${over}` : null;
  return { posted, warning };
}

/** The fingerprint a comment carries, null for a valid comment without one (someone else's), undefined when malformed. */
function commentFingerprint(entry: unknown): string | null | undefined {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return undefined;
  const { body, path, line } = entry as Record<string, unknown>;
  if (typeof body !== 'string' || body.length > MAX_COMMENT_BODY_CHARS) return undefined;
  if (path !== undefined && path !== null && (typeof path !== 'string' || path.length > MAX_PATH_CHARS || path.includes('\0'))) {
    return undefined;
  }
  // GitHub lists an outdated comment with `line: null`; its finding was still posted.
  if (line !== undefined && line !== null && !(Number.isInteger(line) && (line as number) >= 1)) return undefined;
  return FINGERPRINT_MARKER.exec(body)?.[1] ?? null;
}

/** What writing the review needs from the run. */
interface ReviewWrite {
  plan: ReviewPlan;
  root: string;
  review: ReviewBody;
}

/** Writes the review body (atomically, never through a link in the repository); returns the path written. */
export async function writeReview({ plan, root, review }: ReviewWrite): Promise<string> {
  return writeOutputFile(plan.file, `${JSON.stringify(review, null, 2)}\n`, root);
}

/**
 * The commit the review's line numbers belong to: the diff's head resolved by git (`--end-of-options`, so a revision
 * can never be read as an option), or HEAD's for a diff file; null when git cannot say.
 */
export async function reviewCommit(root: string, diff: DiffSource, head: string | null): Promise<string | null> {
  if (diff.kind === 'file') return head;
  const location = await locateRepository(root);
  if (!location.ok) return head;
  const run = await execGit(root, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${diff.head}^{commit}`], {
    timeoutMs: REV_PARSE_TIMEOUT_MS,
    maxBytes: 4096,
    location,
  });
  const sha = 'error' in run || run.exitCode !== 0 ? '' : run.stdout.trim();
  return /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(sha) ? sha : head;
}
