// Helpers shared by the GitHub Action's scripts (action.yml): the run's context from the runner's variables, a small
// REST client on Node's fetch, and the step outputs. Plain Node 20, no dependencies: the action runs them from its
// own checkout before (and independently of) spelunk's build.
import { appendFileSync, readFileSync } from 'node:fs';

/** Pages of a list read before giving up (100 items each): a pull request with more comments than this is not real. */
const MAX_PAGES = 50;
/** Time for one API request. */
const REQUEST_TIMEOUT_MS = 30_000;

/** A required environment variable, or a one-line error. */
export function need(env, name) {
  const value = env[name]?.trim();
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/**
 * The pull request this run is about, from the event payload GitHub writes for the job; null outside a pull request
 * (a push or a schedule: no review to post, no base to diff against).
 */
export function pullRequest(env) {
  const file = env.GITHUB_EVENT_PATH;
  if (!file) return null;
  const event = JSON.parse(readFileSync(file, 'utf8'));
  const pr = event.pull_request;
  if (!pr || !Number.isInteger(pr.number)) return null;
  return { number: pr.number, headSha: String(pr.head?.sha ?? ''), baseRef: String(pr.base?.ref ?? '') };
}

/** A client for the REST API at GITHUB_API_URL with the workflow token. */
export function githubClient(env) {
  const api = (env.GITHUB_API_URL || 'https://api.github.com').replace(/\/+$/, '');
  const token = need(env, 'GITHUB_TOKEN');
  const headers = { authorization: `Bearer ${token}`, accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28', 'user-agent': 'spelunk-action' };
  async function request(method, url, body) {
    const response = await fetch(url.startsWith('http') ? url : `${api}${url}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    if (!response.ok) {
      const error = new Error(`${method} ${url}: HTTP ${response.status} ${oneLine(text).slice(0, 300)}`);
      error.status = response.status;
      error.body = text;
      throw error;
    }
    return { data: text === '' ? null : JSON.parse(text), link: response.headers.get('link') ?? '' };
  }
  return {
    get: async (url) => (await request('GET', url)).data,
    post: async (url, body) => (await request('POST', url, body)).data,
    put: async (url, body) => (await request('PUT', url, body)).data,
    /** Every item of a paginated list, following the Link header's rel="next". */
    async list(url) {
      const items = [];
      let next = `${url}${url.includes('?') ? '&' : '?'}per_page=100`;
      for (let page = 0; next && page < MAX_PAGES; page++) {
        const { data, link } = await request('GET', next);
        if (!Array.isArray(data)) throw new Error(`GET ${next}: expected a JSON array`);
        items.push(...data);
        next = /<([^>]+)>;\s*rel="next"/.exec(link)?.[1] ?? null;
      }
      return items;
    },
  };
}

/** The login GitHub Actions' own token posts as. */
export const ACTIONS_BOT = 'github-actions[bot]';

/**
 * Whose comments and reviews are spelunk's: only those count as posted, so nobody else can silence a finding by
 * copying its marker. The input review-author when set (a GitHub App token other than the workflow's posts as
 * `<app-slug>[bot]`, and an installation token cannot ask who it is); else `GET /user` for a personal token; else,
 * when GitHub refuses that to an installation token (403), the workflow token's bot.
 */
export async function tokenLogin(env, github) {
  const configured = env.INPUT_REVIEW_AUTHOR?.trim();
  if (configured) return configured;
  try {
    const user = await github.get('/user');
    if (typeof user?.login === 'string' && user.login !== '') return user.login;
  } catch (error) {
    if (error.status !== 403) throw error;
  }
  return ACTIONS_BOT;
}

/** Appends `name=value` lines to the step's outputs (GITHUB_OUTPUT), or prints them when there is none (local runs). */
export function setOutputs(env, outputs) {
  const lines = Object.entries(outputs).map(([name, value]) => `${name}=${oneLine(String(value))}\n`).join('');
  if (env.GITHUB_OUTPUT) appendFileSync(env.GITHUB_OUTPUT, lines);
  else process.stdout.write(lines);
}

/** Text for a log line or an output value: no newline can start a forged workflow command or output. */
export function oneLine(s) {
  return String(s).replace(/[\r\n]+/g, ' ').trim();
}
