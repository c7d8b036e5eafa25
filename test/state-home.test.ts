import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stateHome } from '../src/state-home.js';
import { reply, startMockApi, text, type MockApi } from './support/mock-api.js';
import { runBinary } from './support/binary.js';
import { APP_FILES, useRepo } from './support/temp-repo.js';

describe('stateHome: only an absolute directory, never one relative to where spelunk was started', () => {
  const account = os.homedir();
  it.each<[Record<string, string | undefined>, string | null]>([
    [{ XDG_STATE_HOME: '/x/state', HOME: '/h' }, '/x/state'],
    [{ HOME: '/h' }, '/h/.local/state'],
    [{ XDG_STATE_HOME: '', HOME: '/h' }, '/h/.local/state'],
    // The XDG spec: a relative value is ignored.
    [{ XDG_STATE_HOME: 'state', HOME: '/h' }, '/h/.local/state'],
    [{ XDG_STATE_HOME: './state', HOME: '' }, null],
    // os.homedir() returns '' for HOME='': sessions would land in the working directory.
    [{ HOME: '' }, null],
    [{ HOME: 'relative/home' }, null],
    [{ XDG_STATE_HOME: 'a', HOME: 'b' }, null],
    [{}, path.isAbsolute(account) ? path.join(account, '.local', 'state') : null],
  ])('%j → %s', (env, expected) => {
    expect(stateHome(env)).toBe(expected);
  });
});

describe('the built binary with HOME= (empty) started outside the repository', () => {
  const repo = useRepo(APP_FILES, { git: true });
  let api: MockApi | undefined;
  afterEach(async () => {
    await api?.close();
  });

  it('writes nothing into the working directory and says why sessions are not saved', async () => {
    api = await startMockApi();
    api.enqueue(reply(text('Three files.')));
    const cwd = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-cwd-'));
    try {
      // XDG_STATE_HOME empty too: runBinary would otherwise point it at the run's scratch directory.
      const env = { HOME: '', XDG_STATE_HOME: '', ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url };
      const { code, stdout, stderr } = await runBinary(['-C', repo.root, 'How many files?'], { cwd, env });
      expect(code).toBe(0);
      expect(stdout).toBe('Three files.\n');
      expect(stderr).toContain('sessions are not saved: neither $XDG_STATE_HOME nor $HOME is an absolute path');
      expect(await fs.readdir(cwd)).toEqual([]);
    } finally {
      await fs.rm(cwd, { recursive: true, force: true });
    }
  });
});
