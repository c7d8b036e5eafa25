// Posts the review spelunk wrote (--review-output) on the pull request with the workflow token.
// Usage: node post-review.mjs REVIEW_FILE   (env: GITHUB_REPOSITORY, GITHUB_EVENT_PATH, GITHUB_TOKEN, GITHUB_API_URL)
// Nothing is posted when the review adds nothing: no new inline comment and this question's summary already posted.
import { readFileSync } from 'node:fs';
import { githubClient, need, oneLine, pullRequest } from './github.mjs';

/** The hidden line that ends spelunk's review body, naming the audit's category. */
const REVIEW_MARKER = /<!-- spelunk:review category=([^\s]+) -->\s*$/;

/** What to do with this review on this pull request: post it (and how), or skip it and why. */
export function decide(review, pr, earlierBodies) {
  if (review.commit_id !== undefined && review.commit_id !== pr.headSha) {
    return { skip: `the review is for commit ${review.commit_id}, not the pull request's head ${pr.headSha}: check out the head (actions/checkout with ref: \${{ github.event.pull_request.head.sha }} and fetch-depth: 0) so the line numbers match` };
  }
  const category = REVIEW_MARKER.exec(review.body)?.[1];
  const posted = category !== undefined && earlierBodies.some((body) => REVIEW_MARKER.exec(body ?? '')?.[1] === category);
  if (review.comments.length === 0 && posted) return { skip: 'nothing new: no new inline comment, and this audit\'s summary is already on the pull request' };
  return { post: review };
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
  const earlier = await github.list(`/repos/${repo}/pulls/${pr.number}/reviews`);
  const decision = decide(review, pr, earlier.map((r) => r.body));
  if ('skip' in decision) {
    const level = decision.skip.startsWith('nothing new') ? 'notice' : 'warning';
    process.stdout.write(`::${level}::spelunk-action: no review posted: ${oneLine(decision.skip)}\n`);
    return;
  }
  const url = `/repos/${repo}/pulls/${pr.number}/reviews`;
  try {
    await github.post(url, decision.post);
  } catch (error) {
    // GitHub refuses REQUEST_CHANGES from the pull request's own author (a personal token); the findings still count.
    if (error.status !== 422 || decision.post.event !== 'REQUEST_CHANGES') throw error;
    process.stdout.write(`::warning::spelunk-action: GitHub refused REQUEST_CHANGES (${oneLine(error.message).slice(0, 200)}); posting as COMMENT\n`);
    await github.post(url, { ...decision.post, event: 'COMMENT' });
  }
  process.stderr.write(`spelunk-action: review posted on #${pr.number}: ${decision.post.event}, ${decision.post.comments.length} inline comment(s)\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2), process.env).catch((error) => {
    process.stdout.write(`::error::spelunk-action: could not post the review: ${oneLine(error.message)}\n`);
    process.exitCode = 1;
  });
}
