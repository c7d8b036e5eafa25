import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/** Creates a temporary repository from a map of relative path → content; `git: true` commits it. */
export async function makeRepo(files: Record<string, string>, opts: { git?: boolean } = {}): Promise<{ root: string; cleanup(): Promise<void> }> {
  const parent = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-repo-'));
  const root = path.join(parent, 'repo');
  await fs.mkdir(root);
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(root, rel);
    await fs.mkdir(path.dirname(abs), { recursive: true });
    await fs.writeFile(abs, content);
  }
  if (opts.git) {
    const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' };
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: root, env });
    execFileSync('git', ['add', '-A'], { cwd: root, env });
    execFileSync('git', ['commit', '-q', '-m', 'init'], { cwd: root, env });
  }
  const real = await fs.realpath(root);
  // Recorded for global-setup's check that nothing under the real home names a repository of this run.
  const state = process.env.SPELUNK_TEST_STATE_HOME;
  if (state) await fs.appendFile(path.join(state, 'roots.txt'), `${real}\n`).catch(() => {});
  return { root: real, cleanup: () => fs.rm(parent, { recursive: true, force: true }) };
}

/** Makes a repository before the file's tests and removes it after them; `root` is readable inside tests. */
export function useRepo(files: Record<string, string>, opts: { git?: boolean } = {}): { readonly root: string } {
  let made: Awaited<ReturnType<typeof makeRepo>> | null = null;
  beforeAll(async () => {
    made = await makeRepo(files, opts);
  });
  afterAll(async () => {
    await made?.cleanup();
  });
  return {
    get root(): string {
      if (!made) throw new Error('useRepo: the repository exists only while the tests run');
      return made.root;
    },
  };
}

/** A tiny HTTP app used by the CLI tests. */
export const APP_FILES: Record<string, string> = {
  'AGENTS.md': '# Agents\nRun tests with `npm test`.\n',
  'package.json': '{ "name": "app", "version": "1.0.0" }\n',
  'src/server.js': "const http = require('http');\nconst router = require('./router');\n\nfunction createServer() {\n  return http.createServer(router.handle);\n}\n\nmodule.exports = { createServer };\n",
  'src/router.js': "const routes = new Map();\n\nfunction handle(req, res) {\n  const route = routes.get(req.url);\n  if (!route) { res.statusCode = 404; return res.end(); }\n  return route(req, res);\n}\n\nmodule.exports = { handle, routes };\n",
  'src/auth.js': "const { exec } = require('child_process');\n\nfunction login(user) {\n  exec('grep ' + user + ' /etc/passwd');\n}\n\nmodule.exports = { login };\n",
};

/** A report_findings finding that APP_FILES bears out (src/auth.js:4 passes user input to exec); `over` changes fields. */
export const appFinding = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  rule_id: 'shell-injection',
  severity: 'high',
  title: 'User input reaches exec',
  message: 'login() concatenates user into a shell command',
  path: 'src/auth.js',
  start_line: 4,
  ...over,
});
