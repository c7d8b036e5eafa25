import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/args.js';
import { resolveConfig } from '../../src/config.js';
import type { Io } from '../../src/io.js';
import { historyCacheDir } from '../../src/locate/command.js';
import { Researcher } from '../../src/mcp/research.js';
import { parseCall, type McpCall } from '../../src/mcp/tools.js';
import { openSession } from '../../src/run/session.js';
import { APP_FILES, makeRepo } from '../support/temp-repo.js';

// The MCP server's locate uses the caches `spelunk locate` uses (src/locate/command.ts): the content index and the
// mined history, so an agent calling locate many times pays for the history once, as the CLI does.

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

describe('spelunk mcp locate: the caches', () => {
  it('stores the mined history where spelunk locate reads it, and the content index beside it', async () => {
    const repo = await makeRepo(APP_FILES, { git: true });
    const home = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-mcp-cache-'));
    cleanups.push(repo.cleanup, () => fs.rm(home, { recursive: true, force: true }));
    const env = { HOME: home, XDG_CACHE_HOME: path.join(home, 'cache') };
    const parsed = await parseArgs(['mcp', '-C', repo.root], undefined);
    if (parsed.kind !== 'run' || !parsed.mcp) throw new Error('not spelunk mcp');
    const config = await resolveConfig(parsed.flags, { ...env, ANTHROPIC_API_KEY: 'k' }, repo.root, false, true);
    const io: Io = {
      stdout: { write: () => true },
      stderr: { write: () => true },
      stdin: Readable.from([]),
      env,
      cwd: repo.root,
      signals: { on: () => undefined, off: () => undefined },
    };
    const researcher = new Researcher(config, openSession(config), io);
    const call = parseCall('locate', { question: 'where does createServer start the http server?' });
    if (typeof call === 'string') throw new Error(call);
    const outcome = await researcher.run(call as McpCall, { signal: new AbortController().signal, progress: null });
    expect(outcome.ok).toBe(true);
    const history = historyCacheDir(env)!;
    expect(history).toBe(path.join(home, 'cache', 'spelunk', 'history'));
    expect((await fs.readdir(history)).filter((n) => n.endsWith('.json'))).toHaveLength(1);
    expect(await fs.readdir(path.join(home, 'cache', 'spelunk', 'index'))).toHaveLength(1);
  });
});
