// Posts the review spelunk wrote (--review-output) on the pull request with the workflow token, and dismisses this
// audit's earlier "changes requested" reviews once a run passes.
// Usage: node post-review.mjs REVIEW_FILE   (env: GITHUB_REPOSITORY, GITHUB_EVENT_PATH, GITHUB_TOKEN, GITHUB_API_URL,
// INPUT_REVIEW_AUTHOR)
// Nothing is posted when the review adds nothing: no new inline comment, and this audit's latest summary already has
// the same verdict and event.
import { readFileSync } from 'node:fs';
import { githubClient, need, oneLine, pullRequest, tokenLogin } from './github.mjs';

/** The hidden line that ends spelunk's review body: the audit's category, its verdict and the review's event. */
const REVIEW_MARKER = /<!-- spelunk:review category=(\S+)(?: verdict=(\w+) event=(\w+))? -->\s*$/;
/** GitHub's 422 for REQUEST_CHANGES on the token owner's own pull request; any other 422 is a real error. */
const OWN_PULL_REQUEST = /own pull request/i;

/** The marker's fields, or null for a body that is not spelunk's summary. */
export function summaryMarker(body) {
  const m = REVIEW_MARKER.exec(body ?? '');
  return m === null ? null : { category: m[1], verdict: m[2] ?? null, event: m[3] ?? null };
}

/**
 * What to do with this review on this pull request, given the token's own earlier reviews (GitHub's list, oldest
 * first): post it or skip it (and why), and which earlier reviews of this audit to dismiss. A passing run (the review
 * is a COMMENT) dismisses this category's CHANGES_REQUESTED reviews, so a fixed pull request stops showing them.
 */
export function decide(review, pr, ownReviews) {
  const mine = summaryMarker(review.body);
  const same = mine === null ? [] : ownReviews.filter((r) => summaryMarker(r.body)?.category === mine.category);
  const dismiss = review.event === 'COMMENT' ? same.filter((r) => r.state === 'CHANGES_REQUESTED').map((r) => r.id) : [];
  if (review.commit_id !== undefined && review.commit_id !== pr.headSha) {
    return { skip: `the review is for commit ${review.commit_id}, not the pull request's head ${pr.headSha}: check out the head (actions/checkout with ref: \${{ github.event.pull_request.head.sha }} and fetch-depth: 0) so the line numbers match`, dismiss: [] };
  }
  const latest = same.length === 0 ? null : summaryMarker(same[same.length - 1].body);
  const unchanged = latest !== null && latest.verdict === mine.verdict && latest.event === review.event;
  if (review.comments.length === 0 && unchanged) {
    return { skip: `nothing new: no new inline comment, and this audit's latest summary already says ${mine.verdict} (${review.event})`, dismiss };
  }
  return { post: review, dismiss };
}

/** Posts the review; returns the event GitHub took. Only the own-pull-request refusal is retried, as a COMMENT. */
async function postReview(github, url, review) {
  try {
    await github.post(url, review);
    return review.event;
  } catch (error) {
    if (error.status !== 422 || review.event !== 'REQUEST_CHANGES' || !OWN_PULL_REQUEST.test(error.body ?? '')) throw error;
    process.stdout.write(`::warning::spelunk-action: GitHub refuses REQUEST_CHANGES on the token owner's own pull request; posting as COMMENT (the findings still fail the job)\n`);
    await github.post(url, { ...review, event: 'COMMENT' });
    return 'COMMENT';
  }
}

async function main(argv, env) {
  const file = argv[0];
  if (!file) throw new Error('usage: post-review.mjs REVIEW_FILE');
  const pr = pullRequest(env);
  if (pr === null) {
    process.stderr.write('spelunk-action: not a pull request; no review posted\n');
    return;
  }
  const review = JSON.parse(readFileSync(file, 'utf8'));
  if (typeof review.body !== 'string' || !Array.isArray(review.comments) || !['COMMENT', 'REQUEST_CHANGES'].includes(review.event)) {
    throw new Error(`${file} is not a review spelunk wrote`);
  }
  const repo = need(env, 'GITHUB_REPOSITORY');
  const github = githubClient(env);
  const login = await tokenLogin(env, github);
  const url = `/repos/${repo}/pulls/${pr.number}/reviews`;
  const own = (await github.list(url)).filter((r) => r.user?.login === login);
  const decision = decide(review, pr, own);
  if ('skip' in decision) {
    const level = decision.skip.startsWith('nothing new') ? 'notice' : 'warning';
    process.stdout.write(`::${level}::spelunk-action: no review posted: ${oneLine(decision.skip)}\n`);
  } else {
    const event = await postReview(github, url, decision.post);
    process.stderr.write(`spelunk-action: review posted on #${pr.number}: ${event}, ${decision.post.comments.length} inline comment(s)\n`);
  }
  for (const id of decision.dismiss) {
    try {
      await github.put(`${url}/${id}/dismissals`, { message: 'A later spelunk audit of this pull request passes.', event: 'DISMISS' });
      process.stderr.write(`spelunk-action: dismissed the earlier changes-requested review ${id}\n`);
    } catch (error) {
      process.stdout.write(`::warning::spelunk-action: could not dismiss review ${id}: ${oneLine(error.message).slice(0, 300)}\n`);
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2), process.env).catch((error) => {
    process.stdout.write(`::error::spelunk-action: could not post the review: ${oneLine(error.message)}\n`);
    process.exitCode = 1;
  });
}
