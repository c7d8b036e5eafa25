import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for the GitHub REST endpoints the action's scripts call, behaving as GitHub documents them: lists
 * paged by `per_page` (default 30, at most 100) and `page` with a Link header (`next`, `last`); `GET /user` refused
 * (403) to an installation token; create-review answering 422 for a comment on a line outside the diff, for a range
 * (`start_line`..`line`) across hunks, and for REQUEST_CHANGES by the pull request's author; `PUT …/dismissals`
 * dismissing a changes-requested review (422 for a commented one). Each token is a user; a review's inline comments
 * then appear in the comment list with their author.
 */
export interface GitHubUser {
  login: string;
  /** An installation token (GITHUB_TOKEN, a GitHub App's): `GET /user` is refused. */
  installation?: boolean;
}

export interface FakeReview {
  id: number;
  body: string;
  state: string;
  user: { login: string };
  commit_id?: string;
}

export interface FakeGitHub {
  url: string;
  /** Review comments as GitHub lists them. */
  comments: Array<Record<string, unknown>>;
  reviews: FakeReview[];
  /** Every create-review request body GitHub accepted, in order. */
  posted: Array<Record<string, unknown>>;
  /** Every request: method, path and query. */
  requests: string[];
  close(): Promise<void>;
}

export interface FakeGitHubOptions {
  repo: string;
  number: number;
  /** Token → the user it authenticates. */
  users: Record<string, GitHubUser>;
  /** The pull request's author. */
  author: string;
  /** The diff's hunks on the new side, per path: the lines a review comment may sit on. */
  hunks: Record<string, Array<[number, number]>>;
}

const DEFAULT_PER_PAGE = 30;
const MAX_PER_PAGE = 100;

type Send = (status: number, body: unknown, headers?: Record<string, string>) => void;

export async function startFakeGitHub(opts: FakeGitHubOptions): Promise<FakeGitHub> {
  const base = `/repos/${opts.repo}/pulls/${opts.number}`;
  const state = { comments: [] as FakeGitHub['comments'], reviews: [] as FakeReview[], posted: [] as FakeGitHub['posted'], requests: [] as string[] };
  let nextId = 1000;
  const unprocessable = (send: Send, error: string) => send(422, { message: 'Unprocessable Entity', errors: [error], status: '422' });

  function createReview(user: GitHubUser, body: { body: string; event: string; commit_id?: string; comments?: Array<{ path: string; line: number; start_line?: number }> }, send: Send) {
    if (body.event === 'REQUEST_CHANGES' && user.login === opts.author) return unprocessable(send, 'Review Can not request changes on your own pull request');
    for (const c of body.comments ?? []) {
      const hunk = (opts.hunks[c.path] ?? []).find(([a, b]) => c.line >= a && c.line <= b);
      if (hunk === undefined) return unprocessable(send, 'Pull request review thread line must be part of the diff');
      if (c.start_line !== undefined && (c.start_line < hunk[0] || c.start_line > c.line)) return unprocessable(send, 'Pull request review thread start_line must be part of the same hunk as the line.');
    }
    state.posted.push(body);
    const id = nextId++;
    const review: FakeReview = { id, body: body.body, state: body.event === 'REQUEST_CHANGES' ? 'CHANGES_REQUESTED' : 'COMMENTED', user: { login: user.login }, ...(body.commit_id ? { commit_id: body.commit_id } : {}) };
    state.reviews.push(review);
    for (const c of body.comments ?? []) state.comments.push({ id: nextId++, pull_request_review_id: id, commit_id: body.commit_id, user: { login: user.login }, original_line: c.line, ...c });
    send(200, review);
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      state.requests.push(`${req.method} ${url.pathname}${url.search}`);
      const send: Send = (status, body, headers = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      const user = opts.users[(req.headers.authorization ?? '').replace(/^Bearer /, '')];
      if (user === undefined) return send(401, { message: 'Bad credentials' });
      const json = () => JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      const list = (items: unknown[]) => {
        const perPage = Math.min(MAX_PER_PAGE, Math.max(1, Number(url.searchParams.get('per_page') ?? DEFAULT_PER_PAGE)));
        const page = Math.max(1, Number(url.searchParams.get('page') ?? '1'));
        const last = Math.max(1, Math.ceil(items.length / perPage));
        const at = (n: number) => {
          const u = new URL(url.href);
          u.searchParams.set('page', String(n));
          return `<http://${req.headers.host}${u.pathname}${u.search}>`;
        };
        const links: Record<string, string> = page < last ? { link: `${at(page + 1)}; rel="next", ${at(last)}; rel="last"` } : {};
        send(200, items.slice((page - 1) * perPage, page * perPage), links);
      };
      const dismissal = new RegExp(`^${base}/reviews/(\\d+)/dismissals$`).exec(url.pathname);
      if (req.method === 'GET' && url.pathname === '/user') {
        return user.installation ? send(403, { message: 'Resource not accessible by integration', status: '403' }) : send(200, { login: user.login, type: 'User' });
      }
      if (req.method === 'GET' && url.pathname === `${base}/comments`) return list(state.comments);
      if (req.method === 'GET' && url.pathname === `${base}/reviews`) return list(state.reviews);
      if (req.method === 'POST' && url.pathname === `${base}/reviews`) return createReview(user, json() as never, send);
      if (req.method === 'PUT' && dismissal !== null) {
        const review = state.reviews.find((r) => r.id === Number(dismissal[1]));
        if (review === undefined) return send(404, { message: 'Not Found' });
        if (review.state !== 'CHANGES_REQUESTED' && review.state !== 'APPROVED') return unprocessable(send, 'Can not dismiss a commented pull request review');
        if (typeof json().message !== 'string') return unprocessable(send, 'message is required');
        review.state = 'DISMISSED';
        return send(200, review);
      }
      send(404, { message: 'Not Found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    ...state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
