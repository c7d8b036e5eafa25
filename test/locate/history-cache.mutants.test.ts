import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cachedLog, storeLog } from '../../src/locate/history-cache.js';

// The history cache held to its docblock (area "locate-caches"): stored files are untrusted input, so each condition
// under which an entry is used, refused or not written is a row. history.test.ts shows the cache in a real question.
const HEAD = 'a'.repeat(40);
const ROOT = '/repo';
const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await fs.rm(d, { recursive: true, force: true });
});

async function cacheDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-hcache-m-'));
  dirs.push(dir);
  return path.join(dir, 'history');
}

/** The one entry file stored in `dir`. */
async function entryOf(dir: string): Promise<string> {
  const names = await fs.readdir(dir);
  expect(names).toHaveLength(1);
  return path.join(dir, names[0]!);
}

describe('an entry stored and read back', () => {
  it.each([
    ['a SHA-1 HEAD', 'a'.repeat(40)],
    ['a SHA-256 HEAD', '0123456789abcdef'.repeat(4)],
  ])('%s: the log as stored, in a file only its owner reads', async (_name, head) => {
    const dir = await cacheDir();
    await storeLog(dir, ROOT, head, 'the log\0with NUL\n');
    expect(await cachedLog(dir, ROOT, head)).toBe('the log\0with NUL\n');
    const file = await entryOf(dir);
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    expect((await fs.stat(dir)).mode & 0o777).toBe(0o700);
    expect(file.endsWith('.json')).toBe(true);
  });

  it('each root and HEAD has its own entry', async () => {
    const dir = await cacheDir();
    await storeLog(dir, ROOT, HEAD, 'one');
    await storeLog(dir, '/other', HEAD, 'two');
    await storeLog(dir, ROOT, 'b'.repeat(40), 'three');
    expect([await cachedLog(dir, ROOT, HEAD), await cachedLog(dir, '/other', HEAD), await cachedLog(dir, ROOT, 'b'.repeat(40))]).toEqual(['one', 'two', 'three']);
    expect(await fs.readdir(dir)).toHaveLength(3);
  });
});

describe('a HEAD that is not a commit id: never read, never written', () => {
  it.each([
    ['upper case', 'A'.repeat(40)],
    ['39 digits', 'a'.repeat(39)],
    ['41 digits', 'a'.repeat(41)],
    ['65 digits', 'a'.repeat(65)],
    ['not hexadecimal', 'g'.repeat(40)],
    ['a trailing newline', `${'a'.repeat(40)}\n`],
    ['a leading space', ` ${'a'.repeat(40)}`],
    ['empty', ''],
  ])('%s', async (_name, head) => {
    const dir = await cacheDir();
    await storeLog(dir, ROOT, head, 'log');
    await expect(fs.readdir(dir)).rejects.toThrow();
    // Nor read when an entry for it is there, named as the cache names entries (format 1).
    await fs.mkdir(dir, { recursive: true });
    const name = createHash('sha256').update(`1\0${ROOT}\0${head}`).digest('hex').slice(0, 32);
    await fs.writeFile(path.join(dir, `${name}.json`), JSON.stringify({ v: 1, root: ROOT, head, log: 'doctored' }));
    expect(await cachedLog(dir, ROOT, head)).toBeNull();
  });
});

describe('an entry not used', () => {
  it.each<[string, unknown]>([
    ['another format', { v: 2, root: ROOT, head: HEAD, log: 'x' }],
    ['no format', { root: ROOT, head: HEAD, log: 'x' }],
    ['another root', { v: 1, root: '/elsewhere', head: HEAD, log: 'x' }],
    ['another HEAD', { v: 1, root: ROOT, head: 'b'.repeat(40), log: 'x' }],
    ['a log that is not text', { v: 1, root: ROOT, head: HEAD, log: ['x'] }],
    ['null', null],
    ['a string', 'x'],
  ])('%s', async (_name, value) => {
    const dir = await cacheDir();
    await storeLog(dir, ROOT, HEAD, 'x');
    await fs.writeFile(await entryOf(dir), JSON.stringify(value));
    expect(await cachedLog(dir, ROOT, HEAD)).toBeNull();
  });

  it('a link to a valid entry, a FIFO, a directory: not followed, not waited on', async () => {
    const dir = await cacheDir();
    await storeLog(dir, ROOT, HEAD, 'x');
    const file = await entryOf(dir);
    const elsewhere = path.join(path.dirname(dir), 'elsewhere.json');
    await fs.rename(file, elsewhere);
    await fs.symlink(elsewhere, file);
    expect(await cachedLog(dir, ROOT, HEAD)).toBeNull();
    await fs.rm(file);
    execFileSync('mkfifo', [file]);
    expect(await cachedLog(dir, ROOT, HEAD)).toBeNull();
    await fs.rm(file);
    await fs.mkdir(file);
    expect(await cachedLog(dir, ROOT, HEAD)).toBeNull();
  });

  it('an entry over 24 MiB is not read; a log that would make one is not written', async () => {
    const dir = await cacheDir();
    const big = 'x'.repeat(24 * 1024 * 1024);
    await storeLog(dir, ROOT, HEAD, big);
    await expect(fs.readdir(dir)).rejects.toThrow();
    // Just under the bound (the JSON around the log included) is kept.
    const fits = big.slice(0, 24 * 1024 * 1024 - 200);
    await storeLog(dir, ROOT, HEAD, fits);
    expect(await cachedLog(dir, ROOT, HEAD)).toBe(fits);
    const file = await entryOf(dir);
    await fs.writeFile(file, JSON.stringify({ v: 1, root: ROOT, head: HEAD, log: big }));
    expect(await cachedLog(dir, ROOT, HEAD)).toBeNull();
  });
});

describe('the bound, exactly', () => {
  it('an entry of exactly 24 MiB is written and read; one byte more is not written', async () => {
    const dir = await cacheDir();
    const around = Buffer.byteLength(JSON.stringify({ v: 1, root: ROOT, head: HEAD, log: '' }));
    const log = 'x'.repeat(24 * 1024 * 1024 - around);
    await storeLog(dir, ROOT, HEAD, log);
    expect(await cachedLog(dir, ROOT, HEAD)).toBe(log);
    await storeLog(dir, ROOT, 'b'.repeat(40), `${log}x`);
    expect(await fs.readdir(dir)).toHaveLength(1);
  });
});

describe('writing', () => {
  it('at most 64 entries: each write first drops the first by name past 63; other files stay', async () => {
    const dir = await cacheDir();
    await fs.mkdir(dir, { recursive: true });
    // Named to sort before every entry: only entries are dropped.
    await fs.writeFile(path.join(dir, '00-notes.txt'), 'kept');
    const heads = Array.from({ length: 70 }, (_, i) => i.toString(16).padStart(40, '0'));
    for (const head of heads) await storeLog(dir, ROOT, head, head);
    const names = await fs.readdir(dir);
    expect(names.filter((n) => n.endsWith('.json'))).toHaveLength(64);
    expect(names).toContain('00-notes.txt');
    // The newest entry is always there; nothing temporary is left behind.
    expect(await cachedLog(dir, ROOT, heads.at(-1)!)).toBe(heads.at(-1));
    expect(names.filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('the entries dropped are the first by name', async () => {
    const dir = await cacheDir();
    const nameOf = (head: string): string => `${createHash('sha256').update(`1\0${ROOT}\0${head}`).digest('hex').slice(0, 32)}.json`;
    const heads = Array.from({ length: 80 }, (_, i) => i.toString(16).padStart(40, '0'));
    let kept: string[] = [];
    for (const head of heads) {
      await storeLog(dir, ROOT, head, head);
      kept = [...kept.sort().slice(Math.max(0, kept.length - 63)), nameOf(head)];
    }
    expect((await fs.readdir(dir)).sort()).toEqual(kept.sort());
  });

  it('never inside the repository it describes', async () => {
    const base = await cacheDir();
    const root = path.dirname(base);
    const inside = path.join(root, 'cache', 'history');
    await storeLog(inside, root, HEAD, 'x');
    expect(await fs.readdir(inside)).toEqual([]);
    expect(await cachedLog(inside, root, HEAD)).toBeNull();
  });
});
