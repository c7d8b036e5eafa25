// Writes the pull request's review comments, as GitHub's API lists them, to the file spelunk reads with
// --previous-review (so findings already posted are not posted again). Outside a pull request it writes [].
// Usage: node fetch-comments.mjs OUTPUT_FILE   (env: GITHUB_REPOSITORY, GITHUB_EVENT_PATH, GITHUB_TOKEN, GITHUB_API_URL)
import { writeFileSync } from 'node:fs';
import { githubClient, need, oneLine, pullRequest, tokenLogin } from './github.mjs';

async function main(argv, env) {
  const out = argv[0];
  if (!out) throw new Error('usage: fetch-comments.mjs OUTPUT_FILE');
  const pr = pullRequest(env);
  if (pr === null) {
    writeFileSync(out, '[]\n');
    return;
  }
  const repo = need(env, 'GITHUB_REPOSITORY');
  const github = githubClient(env);
  const login = await tokenLogin(env, github);
  const comments = await github.list(`/repos/${repo}/pulls/${pr.number}/comments`);
  // Only this token's own comments (a marker copied by anyone else silences nothing), and only what spelunk reads.
  const own = comments.filter((c) => c.user?.login === login);
  const kept = own.map((c) => ({ body: c.body, path: c.path, line: c.line ?? null }));
  writeFileSync(out, `${JSON.stringify(kept)}\n`);
  process.stderr.write(`spelunk-action: ${comments.length} review comment(s) on #${pr.number}, ${kept.length} of them by ${login}\n`);
}

main(process.argv.slice(2), process.env).catch((error) => {
  // Without the list, every finding would be posted again: say so, and let the audit run with none.
  process.stdout.write(`::warning::could not list the pull request's review comments (${oneLine(error.message)}); findings already posted may be posted again\n`);
  if (process.argv[2]) writeFileSync(process.argv[2], '[]\n');
});
