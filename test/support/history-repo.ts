import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A repository with a story, built commit by commit in a temp dir: 34 commits with fixed authors and dates (so the
 * shas are the same on every machine with the same git), a rename (src/util.js → src/lib/query.js), a function moved
 * between files (sanitize: router.js → lib/sanitize.js), a revert, a change whose message explains why (the timeout),
 * and a feature introduced at a known commit (rateLimit). Questions about it have one right answer.
 */
export interface HistoryRepo {
  root: string;
  cleanup(): Promise<void>;
}

type Step = { subject: string; body?: string; author?: string; write?: Record<string, string>; rename?: [string, string]; revert?: boolean };

const SERVER = (timeout: number) => `const http = require('http');\nconst router = require('./router');\n\nconst TIMEOUT_MS = ${timeout};\n\nfunction createServer() {\n  const server = http.createServer(router.handle);\n  server.setTimeout(TIMEOUT_MS);\n  return server;\n}\n\nmodule.exports = { createServer };\n`;
const ROUTER_WITH_SANITIZE = "const routes = new Map();\n\nfunction sanitize(input) {\n  return String(input).replace(/[<>]/g, '');\n}\n\nfunction handle(req, res) {\n  const route = routes.get(sanitize(req.url));\n  if (!route) { res.statusCode = 404; return res.end(); }\n  return route(req, res);\n}\n\nmodule.exports = { handle, routes, sanitize };\n";
const ROUTER_MOVED = "const routes = new Map();\nconst { sanitize } = require('./lib/sanitize');\n\nfunction handle(req, res) {\n  const route = routes.get(sanitize(req.url));\n  if (!route) { res.statusCode = 404; return res.end(); }\n  return route(req, res);\n}\n\nmodule.exports = { handle, routes };\n";
const SANITIZE = "function sanitize(input) {\n  return String(input).replace(/[<>]/g, '');\n}\n\nmodule.exports = { sanitize };\n";
const QUERY = "function parseQuery(url) {\n  const at = url.indexOf('?');\n  return at < 0 ? {} : Object.fromEntries(new URLSearchParams(url.slice(at + 1)));\n}\n\nmodule.exports = { parseQuery };\n";
const RATE_LIMIT = "const hits = new Map();\n\n/** rateLimit: at most `max` requests per client per minute. */\nfunction rateLimit(max) {\n  return (req, res, next) => {\n    const n = (hits.get(req.socket.remoteAddress) ?? 0) + 1;\n    hits.set(req.socket.remoteAddress, n);\n    if (n > max) { res.statusCode = 429; return res.end(); }\n    return next();\n  };\n}\n\nmodule.exports = { rateLimit };\n";

/** The story, oldest first. Fillers (docs, version bumps) make `log` worth narrowing. */
export const HISTORY: readonly Step[] = [
  { subject: 'Initial HTTP server', write: { 'src/server.js': SERVER(5000), 'README.md': '# app\n', 'package.json': '{ "version": "0.1.0" }\n' } },
  { subject: 'Add router', write: { 'src/router.js': ROUTER_WITH_SANITIZE } },
  { subject: 'Add query parsing helper', write: { 'src/util.js': QUERY } },
  ...filler(1, 4),
  { subject: 'Add rate limiting middleware', author: 'Carol', body: 'Clients hammering /search took the service down twice.', write: { 'src/middleware.js': RATE_LIMIT } },
  ...filler(5, 8),
  { subject: 'Raise the server timeout to 30 s', author: 'Dave', body: 'The upstream proxy drops idle connections after 25 s (INC-42),\nso slow report queries were cut off at 5 s.', write: { 'src/server.js': SERVER(30000) } },
  ...filler(9, 12),
  { subject: 'Move util.js to lib/query.js', rename: ['src/util.js', 'src/lib/query.js'] },
  ...filler(13, 16),
  { subject: 'Extract sanitize into lib/sanitize.js', author: 'Erin', write: { 'src/router.js': ROUTER_MOVED, 'src/lib/sanitize.js': SANITIZE } },
  ...filler(17, 20),
  { subject: 'Parse config with eval', author: 'Mallory', write: { 'src/config.js': "module.exports = (text) => eval('(' + text + ')');\n" } },
  { subject: 'Revert "Parse config with eval"', author: 'Carol', body: 'eval runs whatever the config file says.', revert: true },
  ...filler(21, 26),
];

/** Filler commits n..m: README lines and version bumps. */
function filler(from: number, to: number): Step[] {
  const steps: Step[] = [];
  for (let n = from; n <= to; n++) {
    steps.push(n % 2 === 0
      ? { subject: `Bump version to 0.${n}.0`, write: { 'package.json': `{ "version": "0.${n}.0" }\n` } }
      : { subject: `Docs: note ${n}`, write: { [`docs/note-${n}.md`]: `Note ${n}.\n` } });
  }
  return steps;
}

/** Builds the repository: one commit per step, a day apart from 2024-01-01, all by Alice unless a step names someone. */
export async function makeHistoryRepo(): Promise<HistoryRepo> {
  const parent = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-history-')));
  const root = path.join(parent, 'repo');
  await fs.mkdir(root);
  const run = (args: string[], env: Record<string, string> = {}): string =>
    execFileSync('/usr/bin/git', ['-c', 'init.defaultBranch=main', '-c', 'commit.gpgSign=false', ...args], {
      cwd: root,
      env: { PATH: '/usr/bin:/bin', HOME: parent, GIT_CONFIG_NOSYSTEM: '1', ...env },
      encoding: 'utf8',
    });
  run(['init', '-q']);
  for (const [i, step] of HISTORY.entries()) {
    const date = new Date(Date.UTC(2024, 0, 1 + i, 12)).toISOString();
    const who = step.author ?? 'Alice';
    const env = { GIT_AUTHOR_NAME: who, GIT_AUTHOR_EMAIL: `${who.toLowerCase()}@example.com`, GIT_AUTHOR_DATE: date, GIT_COMMITTER_NAME: who, GIT_COMMITTER_EMAIL: `${who.toLowerCase()}@example.com`, GIT_COMMITTER_DATE: date };
    if (step.revert === true) {
      run(['revert', '--no-edit', 'HEAD'], env);
      run(['commit', '-q', '--amend', '-m', `${step.subject}\n\n${step.body ?? ''}`], env);
      continue;
    }
    for (const [rel, body] of Object.entries(step.write ?? {})) {
      await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
      await fs.writeFile(path.join(root, rel), body);
    }
    if (step.rename !== undefined) {
      await fs.mkdir(path.dirname(path.join(root, step.rename[1])), { recursive: true });
      run(['mv', ...step.rename]);
    }
    run(['add', '-A']);
    run(['commit', '-q', '-m', step.body === undefined ? step.subject : `${step.subject}\n\n${step.body}`], env);
  }
  return { root, cleanup: () => fs.rm(parent, { recursive: true, force: true }) };
}
