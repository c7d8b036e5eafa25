// Writes the pull request's review comments, as GitHub's API lists them, to the file spelunk reads with
// --previous-review (so findings already posted are not posted again). Outside a pull request it writes [].
// Usage: node fetch-comments.mjs OUTPUT_FILE   (env: GITHUB_REPOSITORY, GITHUB_EVENT_PATH, GITHUB_TOKEN, GITHUB_API_URL)
import { writeFileSync } from 'node:fs';
import { githubClient, need, oneLine, pullRequest } from './github.mjs';

async function main(argv, env) {
  const out = argv[0];
  if (!out) throw new Error('usage: fetch-comments.mjs OUTPUT_FILE');
  const pr = pullRequest(env);
  if (pr === null) {
    writeFileSync(out, '[]\n');
    return;
  }
  const repo = need(env, 'GITHUB_REPOSITORY');
  const comments = await githubClient(env).list(`/repos/${repo}/pulls/${pr.number}/comments`);
  // Only what spelunk reads: the body (with its marker), the path and the line.
  const kept = comments.map((c) => ({ body: c.body, path: c.path, line: c.line ?? null }));
  writeFileSync(out, `${JSON.stringify(kept)}\n`);
  process.stderr.write(`spelunk-action: ${kept.length} existing review comment(s) on #${pr.number}\n`);
}

main(process.argv.slice(2), process.env).catch((error) => {
  // Without the list, every finding would be posted again: say so, and let the audit run with none.
  process.stdout.write(`::warning::could not list the pull request's review comments (${oneLine(error.message)}); findings already posted may be posted again\n`);
  if (process.argv[2]) writeFileSync(process.argv[2], '[]\n');
});
