import { escapeControls } from '../escape.js';
import type { AuditReport, Finding, Severity } from './report.js';
import type { ChangedFile } from './diff.js';
import type { FindingAnchor } from './fingerprint.js';

/** One inline comment of GitHub's "create a review for a pull request" call. */
interface ReviewComment {
  path: string;
  /** A new-side line the change added: GitHub refuses comments on lines outside the diff. */
  line: number;
  side: 'RIGHT';
  body: string;
}

/** The request body of `POST /repos/{owner}/{repo}/pulls/{number}/reviews`, as `--review-output` writes it. */
export interface ReviewBody {
  /** The commit the line numbers belong to (the diff's head); absent when unknown (GitHub then takes the PR's latest). */
  commit_id?: string;
  body: string;
  event: 'REQUEST_CHANGES' | 'COMMENT';
  comments: ReviewComment[];
}

/** Findings listed in the body (outside the changed lines) past this many are only counted. */
const MAX_BODY_FINDINGS = 50;
/** GitHub's limit on a comment or review body is 65,536 characters; the model's message is cut well below it. */
const MAX_MESSAGE_CHARS = 4_000;
const MARKER = 'spelunk:fingerprint=';
/** The marker as it ends a comment body; a fingerprint is sha256 hex and an occurrence number (see anchorFingerprints). */
export const FINGERPRINT_MARKER = /<!-- spelunk:fingerprint=([0-9a-f]{64}:[1-9][0-9]{0,5}) -->\s*$/;

export interface ReviewInput {
  /** The scoped report (each finding classified against the change; baselined ones marked suppressed). */
  report: AuditReport;
  files: readonly ChangedFile[];
  /** Each finding's anchor fingerprints (see anchorFingerprints), in the report's order. */
  fingerprints: readonly FindingAnchor[];
  /** Fingerprints already posted on the pull request (`--previous-review`). */
  posted: ReadonlySet<string>;
  /** The audit fails at --fail-on (exit 4): the review requests changes. */
  failed: boolean;
  failOn: Severity;
  question: string;
  /** The analysis category (sarifCategory), so two audits of one PR tell their reviews apart. */
  category: string;
  commitId: string | null;
}

/**
 * The review: an inline comment for each finding on a line the change added (on the last added line of its range),
 * each ending with a hidden marker that carries the finding's fingerprint, so a later run can leave out what is
 * already posted; every other finding is listed (and counted) in the body, as are those left out. Baselined
 * findings are accepted: counted, never commented.
 */
export function buildReview(input: ReviewInput): ReviewBody {
  const comments: ReviewComment[] = [];
  const elsewhere: Finding[] = [];
  const already = matchPosted(input.report.findings, input.fingerprints, input.posted);
  let repeated = 0;
  let accepted = 0;
  input.report.findings.forEach((finding, i) => {
    if (finding.suppressed === true) accepted++;
    else if (already[i] === true) repeated++;
    else {
      const line = lastAddedLine(finding, input.files);
      if (line === null) elsewhere.push(finding);
      else comments.push({ path: finding.path, line, side: 'RIGHT', body: commentBody(finding, input.fingerprints[i]?.own ?? '', input.question) });
    }
  });
  const event = input.failed ? 'REQUEST_CHANGES' : 'COMMENT';
  return {
    ...(input.commitId === null ? {} : { commit_id: input.commitId }),
    body: reviewSummary(input, event, { inline: comments.length, elsewhere, repeated, accepted }),
    event,
    comments,
  };
}

/**
 * Which findings an earlier comment already covers. Each posted fingerprint covers one finding: first the findings
 * whose own anchor was posted, then those with a posted fingerprint near their range (the range moved or grew), and a
 * finding anchored where another of this run already is counts as said once.
 */
function matchPosted(findings: readonly Finding[], anchors: readonly FindingAnchor[], posted: ReadonlySet<string>): boolean[] {
  const used = new Set<string>();
  const covered = findings.map(() => false);
  const claim = (i: number, fingerprint: string | undefined) => {
    if (fingerprint === undefined || covered[i] || used.has(fingerprint) || !posted.has(fingerprint)) return;
    used.add(fingerprint);
    covered[i] = true;
  };
  anchors.forEach((anchor, i) => claim(i, anchor.own));
  anchors.forEach((anchor, i) => anchor.nearby.forEach((fingerprint) => claim(i, fingerprint)));
  const own = new Set<string>();
  anchors.forEach((anchor, i) => {
    if (!covered[i] && own.has(anchor.own) && findings[i]?.suppressed !== true) covered[i] = true;
    own.add(anchor.own);
  });
  return covered;
}

/** The last line of the finding's range that the change added, or null when it added none of them. */
export function lastAddedLine(finding: Pick<Finding, 'path' | 'start_line' | 'end_line'>, files: readonly ChangedFile[]): number | null {
  const file = files.find((f) => f.path === finding.path && !f.deleted);
  let best: number | null = null;
  for (const [a, b] of file?.lines ?? []) {
    const top = Math.min(b, finding.end_line);
    if (top >= Math.max(a, finding.start_line)) best = top;
  }
  return best;
}

function commentBody(finding: Finding, fingerprint: string, question: string): string {
  const range = finding.end_line > finding.start_line ? ` (lines ${finding.start_line}-${finding.end_line})` : '';
  return [
    `**${finding.severity}: ${markdownText(finding.title)}** · \`${codeText(finding.rule_id)}\`${range}`,
    '',
    markdownText(cut(finding.message)),
    '',
    `<sub>spelunk audit: ${markdownText(question)}</sub>`,
    `<!-- ${MARKER}${fingerprint} -->`,
  ].join('\n');
}

interface Counts {
  inline: number;
  elsewhere: Finding[];
  repeated: number;
  accepted: number;
}

function reviewSummary(input: ReviewInput, event: ReviewBody['event'], { inline, elsewhere, repeated, accepted }: Counts): string {
  const verdict = { pass: 'PASS', fail: 'FAIL', inconclusive: 'INCONCLUSIVE' }[input.report.verdict];
  const lines = [
    `### spelunk audit: ${verdict}`,
    '',
    `> ${markdownText(input.question)}`,
    '',
    markdownText(cut(input.report.summary)),
    '',
    `- ${inline} new finding(s) on changed lines, commented inline`,
    `- ${repeated} finding(s) already posted in an earlier review, left out`,
    `- ${elsewhere.length} finding(s) outside the changed lines${elsewhere.length > 0 ? ', listed here' : ''}`,
    ...(accepted > 0 ? [`- ${accepted} finding(s) accepted in the baseline, not repeated`] : []),
    `- ${input.failed ? `fails at --fail-on ${input.failOn}: changes requested` : `nothing at or above --fail-on ${input.failOn} counts against this change`}`,
  ];
  if (elsewhere.length > 0) lines.push('', '#### Outside the changed lines', '');
  for (const f of elsewhere.slice(0, MAX_BODY_FINDINGS)) {
    const where = f.end_line > f.start_line ? `${f.path}:${f.start_line}-${f.end_line}` : `${f.path}:${f.start_line}`;
    lines.push(`- **${f.severity}: ${markdownText(f.title)}** · \`${codeText(where)}\` · \`${codeText(f.rule_id)}\``);
  }
  if (elsewhere.length > MAX_BODY_FINDINGS) lines.push(`- … and ${elsewhere.length - MAX_BODY_FINDINGS} more (see the SARIF upload or the json result)`);
  lines.push('', `<!-- spelunk:review category=${markerWord(input.category)} verdict=${input.report.verdict} event=${event} -->`);
  return lines.join('\n');
}

/**
 * The model's words (and the question) rendered by GitHub: no HTML (so no forged marker or hidden text), no
 * @-mentions that would notify people, no images or links of its making, no controls; line breaks kept.
 */
function markdownText(s: string): string {
  return escapeControls(s, '\n')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/@(?=\w)/g, '@\u200b')
    .replace(/!\[/g, '!\\[')
    .replace(/\]\(/g, ']\\(');
}

/** The category as one word of the summary's marker (post-review.mjs reads it back). */
function markerWord(s: string): string {
  return codeText(s).replace(/-->/g, '').replace(/\s/g, '_');
}

/** Text inside a code span: a backtick would close it. */
function codeText(s: string): string {
  return escapeControls(s).replace(/`/g, "'");
}

function cut(s: string): string {
  return s.length > MAX_MESSAGE_CHARS ? `${s.slice(0, MAX_MESSAGE_CHARS)}… [cut at ${MAX_MESSAGE_CHARS} characters]` : s;
}
