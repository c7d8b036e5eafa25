import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SymbolDiskCache, symbolCacheDir } from '../../src/symbols/disk-cache.js';
import { SymbolIndex } from '../../src/symbols/index.js';
import { useRepo } from '../support/temp-repo.js';

const repo = useRepo({ 'app.ts': 'export function listen(port: number) {\n  return port;\n}\nexport class Server {}\n' });
const names = (s: Awaited<ReturnType<SymbolIndex['symbolsOf']>>): string[] => (s.ok ? s.definitions.map((d) => `${d.kind} ${d.name}:${d.line}`) : [s.note]);

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-symcache-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** Every entry file the cache holds (one per (root, path, mode)). */
async function entries(): Promise<string[]> {
  const out: string[] = [];
  for (const shard of await fs.readdir(dir).catch(() => [])) for (const name of await fs.readdir(path.join(dir, shard))) out.push(path.join(dir, shard, name));
  return out;
}

const fresh = (): SymbolIndex => new SymbolIndex({ disk: new SymbolDiskCache(dir) });

describe('the symbol cache across runs (XDG cache directory)', () => {
  it('picks $XDG_CACHE_HOME, else ~/.cache, never a relative directory', () => {
    expect(symbolCacheDir({ XDG_CACHE_HOME: '/c', HOME: '/h' })).toBe('/c/spelunk/symbols');
    expect(symbolCacheDir({ HOME: '/h' })).toBe('/h/.cache/spelunk/symbols');
    expect(symbolCacheDir({ XDG_CACHE_HOME: 'rel', HOME: '' })).toBeNull();
    expect(symbolCacheDir({})).toBeNull();
  });

  it('a second run reads the entry the first wrote instead of parsing', async () => {
    const first = await fresh().symbolsOf(repo.root, 'app.ts', 'definitions');
    expect(names(first)).toEqual(['function listen:1', 'class Server:4']);
    const [entry] = await entries();
    expect(entry).toBeDefined();
    // Rename a definition inside the stored entry: the next run reports it, so the entry (not a parse) answered.
    await fs.writeFile(entry!, (await fs.readFile(entry!, 'utf8')).replace('"listen"', '"fromCache"'));
    expect(names(await fresh().symbolsOf(repo.root, 'app.ts', 'definitions'))).toEqual(['function fromCache:1', 'class Server:4']);
  });

  it.each([
    ['a changed size', 'export function serve() {}\n', null],
    ['the same size, another mtime', 'export function lizten(port: number) {\n  return port;\n}\nexport class Server {}\n', new Date(2001, 1, 1)],
  ])('%s is parsed again, never answered from the old entry', async (_label, text, mtime) => {
    await fresh().symbolsOf(repo.root, 'app.ts', 'definitions');
    const file = path.join(repo.root, 'app.ts');
    const before = await fs.readFile(file, 'utf8');
    await fs.writeFile(file, text);
    if (mtime) await fs.utimes(file, mtime, mtime);
    try {
      const again = names(await fresh().symbolsOf(repo.root, 'app.ts', 'definitions'));
      expect(again).toEqual(names(await new SymbolIndex().symbolsOf(repo.root, 'app.ts', 'definitions')));
      expect(again.join(' ')).not.toContain('listen');
    } finally {
      await fs.writeFile(file, before);
    }
  });

  // F17 (issue 32): a same-size rewrite whose mtime is put back (tar -x, touch -d) must not keep the old definitions,
  // neither across runs (the disk cache) nor within one (the in-memory cache of a long-lived MCP server or REPL).
  it.each([
    ['a new index over the disk cache', false],
    ['the same index (in-memory cache)', true],
  ])('same size, old mtime restored with touch -d: %s reports the new definitions', async (_label, same) => {
    const file = path.join(repo.root, 'app.ts');
    const before = await fs.readFile(file, 'utf8');
    const stamp = '2001-02-03 04:05:06';
    execFileSync('touch', ['-d', stamp, file]);
    const index = fresh();
    expect(names(await index.symbolsOf(repo.root, 'app.ts', 'definitions'))).toEqual(['function listen:1', 'class Server:4']);
    const mtimeBefore = (await fs.stat(file)).mtimeMs;
    const rewritten = before.replace('listen', 'accept').replace('Server', 'Client');
    expect(Buffer.byteLength(rewritten)).toBe(Buffer.byteLength(before));
    await fs.writeFile(file, rewritten);
    execFileSync('touch', ['-d', stamp, file]);
    try {
      expect((await fs.stat(file)).mtimeMs).toBe(mtimeBefore);
      const again = await (same ? index : fresh()).symbolsOf(repo.root, 'app.ts', 'definitions');
      expect(names(again)).toEqual(['function accept:1', 'class Client:4']);
    } finally {
      await fs.writeFile(file, before);
    }
  });

  const hostile: [string, (entry: string) => Promise<void>][] = [
    ['garbage bytes', (e) => fs.writeFile(e, '\0\xff{{{not json')],
    ['JSON of another shape', (e) => fs.writeFile(e, '[1,2,3]')],
    ['tags of the wrong types', async (e) => fs.writeFile(e, (await fs.readFile(e, 'utf8')).replace(/"line":1\b/, '"line":"1; rm -rf /"'))],
    ['a negative line', async (e) => fs.writeFile(e, (await fs.readFile(e, 'utf8')).replace(/"line":1\b/, '"line":-1'))],
    ['a kind that is not a word', async (e) => fs.writeFile(e, (await fs.readFile(e, 'utf8')).replace('"function"', '"\\u001b[31mevil"'))],
    ['a name of a megabyte', async (e) => fs.writeFile(e, (await fs.readFile(e, 'utf8')).replace('"listen"', JSON.stringify('x'.repeat(1024 * 1024))))],
    ['an entry for other content', async (e) => fs.writeFile(e, (await fs.readFile(e, 'utf8')).replace(/"sha256":"[0-9a-f]{4}/, '"sha256":"0000').replace('"listen"', '"stale"'))],
    ['an entry whose hash is not a string', async (e) => fs.writeFile(e, (await fs.readFile(e, 'utf8')).replace(/"sha256":"[0-9a-f]+"/, '"sha256":{}').replace('"listen"', '"stale"'))],
    ['an entry of the old format (size and mtime)', async (e) => fs.writeFile(e, (await fs.readFile(e, 'utf8')).replace(/"v":\d+/, '"v":1').replace('"listen"', '"stale"'))],
    ['an entry for another root', async (e) => fs.writeFile(e, (await fs.readFile(e, 'utf8')).replace(/"root":"[^"]*"/, '"root":"/elsewhere"').replace('"listen"', '"stale"'))],
    ['a symlink to another file', async (e) => { await fs.rm(e); await fs.symlink('/etc/passwd', e); }],
    ['a FIFO', async (e) => { await fs.rm(e); await fs.mkdir(path.dirname(e), { recursive: true }); const { execFileSync } = await import('node:child_process'); execFileSync('mkfifo', [e]); }],
    ['a directory', async (e) => { await fs.rm(e); await fs.mkdir(e); }],
  ];
  it.each(hostile)('a cache entry that is %s gives the parsed result and no error', async (_label, spoil) => {
    const truth = names(await new SymbolIndex().symbolsOf(repo.root, 'app.ts', 'definitions'));
    await fresh().symbolsOf(repo.root, 'app.ts', 'definitions');
    const [entry] = await entries();
    await spoil(entry!);
    expect(names(await fresh().symbolsOf(repo.root, 'app.ts', 'definitions'))).toEqual(truth);
  });

  it('never writes a cache directory that lies inside the repository', async () => {
    const inside = path.join(repo.root, '.cache-here');
    await new SymbolIndex({ disk: new SymbolDiskCache(inside) }).symbolsOf(repo.root, 'app.ts', 'definitions');
    const written = await fs.readdir(inside, { recursive: true }).catch(() => []);
    expect(written.filter((f) => String(f).endsWith('.json'))).toEqual([]);
    await fs.rm(inside, { recursive: true, force: true });
  });
});
