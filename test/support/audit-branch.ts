import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** main's finding: an old shell injection in src/auth.js:4. */
export const OLD = { rule_id: 'shell-injection', severity: 'high', title: 'User input reaches exec', message: 'login() concatenates user into a shell command', path: 'src/auth.js', start_line: 4 };
/** The branch's finding: the SQL injection that src/search.js adds at line 3. */
export const NEW = { rule_id: 'sql-injection', severity: 'high', title: 'Query built from input', message: 'search() concatenates q into SQL', path: 'src/search.js', start_line: 3 };

/** A temporary workspace holding `repo`, a git repository checked out on `feature`, and git run in it. */
export interface AuditBranch {
  ws: string;
  root: string;
  git(...args: string[]): string;
}

/**
 * The audit fixture of the `--diff` tests: main has an old shell injection in src/auth.js:4; the branch `feature`
 * adds src/search.js with a seeded SQL injection at line 3. git runs with a fixed PATH and no system or user config.
 */
export async function makeAuditBranch(prefix: string): Promise<AuditBranch> {
  const ws = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), prefix)));
  const root = path.join(ws, 'repo');
  const git = (...args: string[]): string =>
    execFileSync('/usr/bin/git', ['-c', 'user.name=t', '-c', 'user.email=t@e', '-c', 'init.defaultBranch=main', ...args], { cwd: root, env: { PATH: '/usr/bin:/bin', HOME: ws, GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' });
  await fs.mkdir(path.join(root, 'src'), { recursive: true });
  await fs.writeFile(path.join(root, 'src/auth.js'), "const { exec } = require('child_process');\n\nfunction login(user) {\n  exec('grep ' + user + ' /etc/passwd');\n}\n\nmodule.exports = { login };\n");
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'old code');
  git('checkout', '-q', '-b', 'feature');
  await fs.writeFile(path.join(root, 'src/search.js'), "const db = require('./db');\nfunction search(q) {\n  return db.query(\"SELECT * FROM items WHERE name = '\" + q + \"'\");\n}\nmodule.exports = { search };\n");
  git('add', '-A');
  git('commit', '-q', '-m', 'add search');
  return { ws, root, git };
}
