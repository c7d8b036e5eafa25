import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for the three GitHub REST endpoints the action's scripts call, with GitHub's shapes: list a pull
 * request's review comments and reviews (paginated with a Link header, two items a page so paging is exercised) and
 * create a review, whose inline comments then appear in the comment list as GitHub lists them.
 */
export interface FakeGitHub {
  url: string;
  /** Review comments as GitHub lists them. */
  comments: Array<Record<string, unknown>>;
  reviews: Array<{ id: number; body: string; state: string }>;
  /** Every create-review request body, in order. */
  posted: Array<Record<string, unknown>>;
  /** Every request: method, path and query. */
  requests: string[];
  close(): Promise<void>;
}

const PAGE = 2;

export async function startFakeGitHub(opts: { repo: string; number: number; token: string }): Promise<FakeGitHub> {
  const base = `/repos/${opts.repo}/pulls/${opts.number}`;
  const state = { comments: [] as FakeGitHub['comments'], reviews: [] as FakeGitHub['reviews'], posted: [] as FakeGitHub['posted'], requests: [] as string[] };
  let nextId = 1000;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      state.requests.push(`${req.method} ${url.pathname}${url.search}`);
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      if (req.headers.authorization !== `Bearer ${opts.token}`) return send(401, { message: 'Bad credentials' });
      const list = (items: unknown[]) => {
        const page = Number(url.searchParams.get('page') ?? '1');
        const more = items.length > page * PAGE;
        const next = new URL(url.href);
        next.searchParams.set('page', String(page + 1));
        const link: Record<string, string> = more ? { link: `<http://${req.headers.host}${next.pathname}${next.search}>; rel="next"` } : {};
        send(200, items.slice((page - 1) * PAGE, page * PAGE), link);
      };
      if (req.method === 'GET' && url.pathname === `${base}/comments`) return list(state.comments);
      if (req.method === 'GET' && url.pathname === `${base}/reviews`) return list(state.reviews);
      if (req.method === 'POST' && url.pathname === `${base}/reviews`) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { body: string; event: string; commit_id?: string; comments: Array<Record<string, unknown>> };
        state.posted.push(body);
        const id = nextId++;
        state.reviews.push({ id, body: body.body, state: body.event === 'REQUEST_CHANGES' ? 'CHANGES_REQUESTED' : 'COMMENTED' });
        for (const c of body.comments) state.comments.push({ id: nextId++, pull_request_review_id: id, commit_id: body.commit_id, user: { login: 'github-actions[bot]' }, original_line: c.line, ...c });
        return send(200, { id, state: 'COMMENTED' });
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
