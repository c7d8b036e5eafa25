import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply, startMockApi, text } from '../support/mock-api.js';
import { BIN } from '../support/pty.js';

// The built command runs its bundle through V8's code cache (src/launch.ts): these run the real binary.
let cacheHome: string;
const cacheDir = () => path.join(cacheHome, 'spelunk', 'code-cache');
const MAGIC = 'spelunk-code-cache-1\n';

beforeEach(async () => {
  cacheHome = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-xdg-'));
});
afterEach(async () => {
  await fs.rm(cacheHome, { recursive: true, force: true });
});

function run(args: string[], env: Record<string, string> = { XDG_CACHE_HOME: cacheHome }) {
  return runBin(BIN, args, env);
}

function runBin(bin: string, args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

async function cacheFile(): Promise<string> {
  const files = await fs.readdir(cacheDir());
  expect(files).toHaveLength(1);
  expect(files[0]).toMatch(/^[0-9a-f]{32}\.bin$/);
  return path.join(cacheDir(), files[0]!);
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** Runs once to create the cache; returns its path, its bytes and the header split from the payload. */
async function primed() {
  const first = await run(['--version']);
  expect(first).toMatchObject({ code: 0, stderr: '' });
  const file = await cacheFile();
  const bytes = await fs.readFile(file);
  const headerLength = MAGIC.length + 2 * 65;
  return { file, bytes, header: bytes.subarray(0, headerLength).toString('latin1'), payload: bytes.subarray(headerLength) };
}

describe('the V8 code cache of the built command', () => {
  it('is written by the first run (private to the user), valid, and left alone by a run that used it', async () => {
    const { file, header, payload } = await primed();
    expect(header.startsWith(MAGIC)).toBe(true);
    expect(header.split('\n')[2]).toBe(sha256(payload));
    expect(payload.length).toBeGreaterThan(10_000);
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    expect((await fs.stat(cacheDir())).mode & 0o777).toBe(0o700);
    const before = await fs.stat(file);
    const second = await run(['--version']);
    expect(second).toMatchObject({ code: 0, stderr: '' });
    expect(second.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect((await fs.stat(file)).mtimeMs).toBe(before.mtimeMs);
  });

  it.each([
    ['a flipped payload byte (hash mismatch)', (b: Buffer, h: string) => Buffer.concat([Buffer.from(h, 'latin1'), flip(b.subarray(h.length))])],
    ['a truncated file', (b: Buffer) => b.subarray(0, Math.floor(b.length / 2))],
    ['an empty file', () => Buffer.alloc(0)],
    ['another build (key mismatch)', (b: Buffer, h: string) => Buffer.concat([Buffer.from(h.replace(/^(.{21})./s, (_m, p: string) => `${p}${p.endsWith('0') ? '1' : '0'}`), 'latin1'), b.subarray(h.length)])],
    // Valid header and hash, but the payload is not V8 code cache: V8 itself rejects it.
    ['garbage that passes the header check', (_b: Buffer, h: string) => {
      const junk = Buffer.alloc(4096, 0x5a);
      return Buffer.concat([Buffer.from(`${h.split('\n').slice(0, 2).join('\n')}\n${sha256(junk)}\n`, 'latin1'), junk]);
    }],
  ])('%s: the command runs as if there were no cache, silently, and writes a valid one', async (_name, damage) => {
    const { file, bytes, header } = await primed();
    await fs.writeFile(file, damage(bytes, header));
    const result = await run(['--version']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    const repaired = await fs.readFile(file);
    expect(repaired.length).toBeGreaterThan(10_000);
    expect(repaired.subarray(0, MAGIC.length).toString('latin1')).toBe(MAGIC);
    expect(repaired.subarray(0, MAGIC.length + 65)).toEqual(bytes.subarray(0, MAGIC.length + 65));
    expect(sha256(repaired.subarray(MAGIC.length + 130))).toBe(repaired.subarray(MAGIC.length + 65, MAGIC.length + 129).toString('latin1'));
  });

  // V8 checks only the source's length: a same-length edit made after the build must not run the old bytecode.
  it('a bundle edited in place after the build (same length) runs as edited, not from the cache of the build', async () => {
    const dist = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-dist-'));
    try {
      for (const name of ['spelunk.js', 'spelunk-main.cjs']) await fs.copyFile(path.join(path.dirname(BIN), name), path.join(dist, name));
      const copy = (args: string[]) => runBin(path.join(dist, 'spelunk.js'), args, { XDG_CACHE_HOME: cacheHome });
      const first = await copy(['--version']);
      expect(first).toMatchObject({ code: 0, stderr: '' });
      expect(await fs.readdir(cacheDir())).toHaveLength(1);
      const bundle = path.join(dist, 'spelunk-main.cjs');
      const text = await fs.readFile(bundle, 'latin1');
      const edited = text.replace(`version:"${first.stdout.trim()}"`, 'version:"9.9.9"');
      expect(edited).not.toBe(text);
      expect(edited.length).toBe(text.length);
      await fs.writeFile(bundle, edited, 'latin1');
      expect(await copy(['--version'])).toMatchObject({ code: 0, stdout: '9.9.9\n', stderr: '' });
    } finally {
      await fs.rm(dist, { recursive: true, force: true });
    }
  });

  it.each([
    ['an unwritable cache directory', () => ({ XDG_CACHE_HOME: path.join(cacheHome, 'a-file') })],
    ['no HOME and no XDG_CACHE_HOME', () => ({})],
    ['a relative XDG_CACHE_HOME', () => ({ XDG_CACHE_HOME: 'relative/cache' })],
  ])('%s: runs without a cache and says nothing', async (_name, env) => {
    await fs.writeFile(path.join(cacheHome, 'a-file'), 'not a directory');
    const result = await run(['--help'], env());
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('--effort');
  });

  // As saved sessions: `spelunk -C ~` with the cache under ~/.cache must not write into the repository it searched.
  it.each([
    ['inside the repository searched: never written there', true],
    ['outside it: written as usual', false],
  ])('a cache directory %s', async (_name, inside) => {
    const repo = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-cache-repo-'));
    const api = await startMockApi({ minCacheTokens: 256 });
    try {
      await fs.writeFile(path.join(repo, 'a.js'), 'export const a = 1;\n');
      api.enqueue(reply(text('In a.js:1.')));
      const xdg = inside ? path.join(repo, '.cache') : cacheHome;
      const result = await run(['-C', repo, 'Where is a?'], { XDG_CACHE_HOME: xdg, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe('In a.js:1.\n');
      const written = await fs.readdir(path.join(xdg, 'spelunk', 'code-cache')).catch(() => []);
      expect(written).toHaveLength(inside ? 0 : 1);
      expect(await fs.readdir(repo)).toEqual(['a.js']);
    } finally {
      await api.close();
      await fs.rm(repo, { recursive: true, force: true });
    }
  });
});

function flip(payload: Buffer): Buffer {
  const copy = Buffer.from(payload);
  const at = Math.floor(copy.length / 2);
  copy[at] = copy[at]! ^ 0xff;
  return copy;
}
