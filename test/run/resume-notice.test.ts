import { describe, expect, it } from 'vitest';
import { resumeNotice, type LoadedSession } from '../../src/run/saved.js';

/** The resume line compares what the session saved with the repository now; a HEAD git could not read is not "moved". */
const HEAD = 'c49dd11a0b2c3d4e5f60718293a4b5c6d7e8f901';
const loaded: LoadedSession = {
  id: 'a5081cc1-0000-4000-8000-000000000000',
  messages: [],
  last: { type: 'turn', at: '2026-11-26T00:00:00Z', question: 'q', base: 0, messages: [], model: 'm', head: HEAD, preamble_hash: 'p', cost_usd: 0 },
};
const now = { root: '/nonexistent-root', preambleHash: 'p', model: 'm' };

describe('resumeNotice: HEAD', () => {
  it.each([
    ['the same HEAD', HEAD, null],
    ['HEAD unknown (git gave up or was refused): not compared', undefined, null],
    ['no HEAD now (the commits are gone)', null, 'resumed session a5081cc1: HEAD moved (c49dd11 → none)'],
  ] as const)('%s', async (_, head, expected) => {
    expect(await resumeNotice(loaded, { ...now, head })).toBe(expected);
  });

  it('a session saved while git could not read HEAD (saved as none) is not compared', async () => {
    const unread: LoadedSession = { ...loaded, last: { ...loaded.last!, head: null } };
    expect(await resumeNotice(unread, { ...now, head: HEAD })).toBeNull();
  });

  it('another HEAD is said, with the short names', async () => {
    const notice = await resumeNotice(loaded, { ...now, head: 'f'.repeat(40) });
    expect(notice).toMatch(/^resumed session a5081cc1: HEAD moved \(c49dd11 → fffffff\)/);
  });
});
