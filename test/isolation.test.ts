import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sessionsDir } from '../src/run/saved.js';
import { runBinary } from './support/binary.js';
import { reply, startMockApi, text } from './support/mock-api.js';
import { ownWrites, writtenSince } from './support/global-setup.js';
import { scratchState } from './support/pty.js';

// Issue 33: `npm test` left saved sessions in the developer's real state directory. Every way a test runs spelunk
// points its state at the run's scratch directory, and the run fails (global-setup's teardown) if anything was
// written under the real home's spelunk directories.
describe('tests are isolated from the real state and cache directories', () => {
  it('the scratch state directory is set for the workers and lies outside the real home', () => {
    const state = process.env.SPELUNK_TEST_STATE_HOME;
    expect(state).toBeTruthy();
    expect(path.relative(os.userInfo().homedir, state!).startsWith('..')).toBe(true);
    expect(scratchState()).toEqual({ XDG_STATE_HOME: state });
  });

  it('a spawned binary given no HOME saves its session in the scratch directory, not the account\'s home', async () => {
    const repo = mkdtempSync(path.join(os.tmpdir(), 'spelunk-iso-'));
    const api = await startMockApi({ minCacheTokens: 256 });
    try {
      writeFileSync(path.join(repo, 'a.txt'), 'x\n');
      api.enqueue(reply(text('It is a.txt:1.')));
      const root = realpathSync(repo);
      const run = await runBinary(['-C', root, 'where?'], { cwd: root, env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } });
      expect(run.code).toBe(0);
      const saved = readdirSync(sessionsDir({ XDG_STATE_HOME: process.env.SPELUNK_TEST_STATE_HOME }, root)!);
      expect(saved).toHaveLength(1);
      expect(existsSync(sessionsDir({ HOME: os.userInfo().homedir }, root)!)).toBe(false);
    } finally {
      await api.close();
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it('writtenSince finds what changed after the start, not what was there before', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'spelunk-written-'));
    try {
      const old = path.join(dir, 'sessions', 'old.jsonl');
      mkdirSync(path.dirname(old), { recursive: true });
      writeFileSync(old, '');
      utimesSync(old, new Date(1_000), new Date(1_000));
      const since = Date.now() - 1_000;
      writeFileSync(path.join(dir, 'sessions', 'new.jsonl'), '');
      expect(writtenSince(dir, since)).toEqual([path.join(dir, 'sessions', 'new.jsonl')]);
      expect(writtenSince(path.join(dir, 'missing'), since)).toEqual([]);
      // Only a file that names a repository of this run counts (other programs on the machine write there too).
      const ours = path.join(dir, 'sessions', 'new.jsonl');
      writeFileSync(ours, `{"type":"session","root":"/tmp/spelunk-repo-x/repo"}\n`);
      expect(ownWrites([ours], ['/tmp/spelunk-repo-x/repo'])).toEqual([ours]);
      expect(ownWrites([ours], ['/tmp/other/repo'])).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
