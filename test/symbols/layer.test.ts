import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/args.js';
import { resolveConfig } from '../../src/config.js';
import { runQuestion } from '../../src/run/run-question.js';
import { openSession } from '../../src/run/session.js';
import { SymbolIndex } from '../../src/symbols/index.js';
import { lazySymbols } from '../../src/symbols/layer.js';
import { readFileTool } from '../../src/tools/read-file.js';
import type { ToolContext } from '../../src/tools/tool.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

const repo = useRepo(APP_FILES, { git: true });
let cacheHome: string;
let api: MockApi | undefined;

beforeAll(async () => {
  cacheHome = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-layer-cache-'));
});
afterAll(async () => {
  await fs.rm(cacheHome, { recursive: true, force: true });
});
afterEach(async () => {
  await api?.close();
  api = undefined;
  await fs.rm(path.join(cacheHome, 'spelunk'), { recursive: true, force: true });
});

/** The symbol cache's entry files under `home` (none when the directory was never made). */
async function cacheEntries(home: string): Promise<string[]> {
  const dir = path.join(home, 'spelunk', 'symbols');
  const shards = await fs.readdir(dir).catch(() => [] as string[]);
  const files = await Promise.all(shards.map(async (s) => (await fs.readdir(path.join(dir, s))).map((f) => `${s}/${f}`)));
  return files.flat();
}

describe('the session symbol layer: one SymbolIndex per session, with the disk cache of the user who runs it', () => {
  it('is made once, on first use, and every later call gets the same index', async () => {
    const source = lazySymbols({ XDG_CACHE_HOME: cacheHome });
    const [a, b] = await Promise.all([source(), source()]);
    expect(a).toBeInstanceOf(SymbolIndex);
    expect(b).toBe(a);
    expect(await source()).toBe(a);
    // A second source is a second session: its own index.
    expect(await lazySymbols({ XDG_CACHE_HOME: cacheHome })()).not.toBe(a);
  });

  it.each<[string, () => Record<string, string>, number]>([
    ['XDG_CACHE_HOME', () => ({ XDG_CACHE_HOME: cacheHome }), 1],
    ['HOME (~/.cache)', () => ({ HOME: cacheHome }), 1],
    ['no cache home: memory only', () => ({}), 0],
    ['a relative XDG_CACHE_HOME: memory only', () => ({ XDG_CACHE_HOME: 'relative/cache' }), 0],
  ])('%s decides where its parses are kept across runs', async (_name, env, entries) => {
    const index = await lazySymbols(env())();
    expect((await index.outline(repo.root, 'src/server.js')).ok).toBe(true);
    const home = env().HOME !== undefined ? path.join(cacheHome, '.cache') : cacheHome;
    expect(await cacheEntries(home)).toHaveLength(entries);
    await fs.rm(path.join(cacheHome, '.cache'), { recursive: true, force: true });
  });

  it("read_file's outline uses the context's symbol layer, once per call, rather than loading its own", async () => {
    const index = new SymbolIndex();
    let asked = 0;
    const ctx: ToolContext = {
      root: repo.root,
      signal: new AbortController().signal,
      timeoutMs: 10_000,
      symbols: async () => {
        asked++;
        return index;
      },
    };
    const first = await readFileTool.run({ path: 'src/server.js', outline: true }, ctx);
    expect(first).toMatchObject({ content: 'src/server.js:4\tfunction createServer', isError: false });
    await readFileTool.run({ path: 'src/router.js', outline: true }, ctx);
    // A plain read never touches the symbol layer.
    await readFileTool.run({ path: 'src/router.js' }, ctx);
    expect(asked).toBe(2);
  });

  it("a run's outlines go through the front end's layer: the user's cache holds them afterwards, and the next run answers the same", async () => {
    const run = async (): Promise<string[]> => {
      const server = await startMockApi({ minCacheTokens: 256 });
      api = server;
      server.enqueue(
        reply(toolUse('read_file', { path: 'src/server.js', outline: true }), toolUse('read_file', { path: 'src/router.js', outline: true }, 'toolu_2')),
        reply(text('createServer is at src/server.js:4.')),
      );
      const parsed = await parseArgs(['-C', repo.root, '--output-format', 'json', 'q'], undefined);
      if (parsed.kind !== 'run') throw new Error('not a run');
      const config = await resolveConfig(parsed.flags, { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: server.url, HOME: '/nonexistent-home' }, repo.root, parsed.audit);
      const env = { HOME: '/nonexistent-home', XDG_CACHE_HOME: cacheHome };
      const outcome = await runQuestion({ question: 'where is the server made?', open: openSession, env, front: 'cli' }, config, {}, new AbortController().signal);
      expect(outcome.readonly).toMatchObject({ verified: true, detail: null });
      const results = server.requests[1]!.body.messages!.at(-1)!.content as Array<{ content: string }>;
      await server.close();
      api = undefined;
      return results.map((r) => r.content);
    };
    const first = await run();
    expect(first).toEqual(['src/server.js:4\tfunction createServer', 'src/router.js:3\tfunction handle']);
    expect(await cacheEntries(cacheHome)).toHaveLength(2);
    expect(await run()).toEqual(first);
  });
});
