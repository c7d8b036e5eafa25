import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A monorepo clone in a temp dir: `packages/a` (the root under test) and `packages/b`, whose files all hold the word
 * SECRET so a test can prove none of them reaches an output. Four commits: init (both), `touch a`, `touch b` (b
 * only), `touch both`. A subdirectory root at `packages/a` must see three of them, and only a's files in each.
 */
export interface Monorepo {
  top: string;
  /** `top/packages/a`, real. */
  root: string;
  git(...args: string[]): string;
  cleanup(): Promise<void>;
}

export const SECRET = 'SECRET';

export async function makeMonorepo(): Promise<Monorepo> {
  const parent = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-monorepo-')));
  const top = path.join(parent, 'mono');
  const write = async (rel: string, body: string): Promise<void> => {
    await fs.mkdir(path.dirname(path.join(top, rel)), { recursive: true });
    await fs.writeFile(path.join(top, rel), body);
  };
  let day = 1;
  const git = (...args: string[]): string =>
    execFileSync('/usr/bin/git', ['-c', 'user.name=t', '-c', 'user.email=t@e', '-c', 'init.defaultBranch=main', '-c', 'commit.gpgSign=false', ...args], {
      cwd: top,
      env: { PATH: '/usr/bin:/bin', HOME: parent, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_DATE: `2024-01-0${day}T12:00:00Z`, GIT_COMMITTER_DATE: `2024-01-0${day}T12:00:00Z` },
      encoding: 'utf8',
    });
  const commit = (message: string): void => {
    git('add', '-A');
    git('commit', '-q', '-m', message);
    day += 1;
  };
  await fs.mkdir(top);
  git('init', '-q');
  await write('README.md', '# mono\n');
  await write('packages/a/app.txt', 'a1\n');
  await write('packages/b/secret.txt', `${SECRET}-1\n`);
  commit('init');
  await write('packages/a/app.txt', 'a1\na2\n');
  commit('touch a');
  await write('packages/b/secret.txt', `${SECRET}-2\n`);
  await write('packages/b/x', `${SECRET}-X\n`);
  commit('touch b');
  await write('packages/a/app.txt', 'a1\na2\na3\n');
  await write('packages/b/secret.txt', `${SECRET}-3\n`);
  commit('touch both');
  return { top, root: path.join(top, 'packages', 'a'), git, cleanup: () => fs.rm(parent, { recursive: true, force: true }) };
}
