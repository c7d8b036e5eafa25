#!/usr/bin/env node
/**
 * The installed `spelunk` command: runs the CommonJS bundle (spelunk-main.cjs, built from bin.ts; under 1 MB, checked
 * by test/cli/lean-bundle.test.ts) through V8's code cache, so a start pays for deserialising compiled code instead of
 * parsing and compiling it. Node 20 has no module.enableCompileCache; `vm.Script` with `cachedData` is the supported
 * way. The chunks beside it (vendor-*.cjs: MCP, markdown, YAML/TOML, tables) are plain requires, loaded only by the
 * commands that need them.
 *
 * The cache is the user's own (`$XDG_CACHE_HOME/spelunk/code-cache/`), written at exit by the first run of a build,
 * with every function compiled by then (a cache made at build time holds only the top level). It is keyed by the
 * bundle's SHA-256 (computed by the build and written into this file, so a start does not hash the megabyte), the
 * bundle's size, modification time, inode and device, the Node version and the architecture, and carries a hash of
 * its payload: a missing, stale, truncated or corrupt file is ignored (and rewritten), and V8 rejects data made under
 * other flags. The file's identity matters because V8 checks only the source's length: a bundle edited in place after
 * the build (same length, new mtime) must not run with bytecode compiled from the old one; the build's hash covers
 * what the file identity cannot (npm gives every installed file the same mtime). The cache only ever speeds up
 * compiling this bundle: the code that runs is always the source read from dist/.
 */
import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { isInside, realPrefix } from './sandbox/paths.js';
import { publishedRunRoot } from './run-root.js';

/** The bundle's SHA-256, written in by scripts/build.mjs; 'unbuilt' when this file runs from source (tests). */
declare const __SPELUNK_BUNDLE_SHA256__: string | undefined;
const BUNDLE_SHA256 = typeof __SPELUNK_BUNDLE_SHA256__ === 'string' ? __SPELUNK_BUNDLE_SHA256__ : 'unbuilt';

/** First bytes of a cache file; a new layout gets a new magic. */
const MAGIC = 'spelunk-code-cache-1\n';
const HASH_HEX_CHARS = 64;
/** Everything before the V8 payload: magic, the key hash, the payload hash, one newline each. */
const HEADER_BYTES = MAGIC.length + 2 * (HASH_HEX_CHARS + 1);

const bundle = path.join(path.dirname(fileURLToPath(import.meta.url)), 'spelunk-main.cjs');
// The CommonJS wrapper on the bundle's first line keeps its line numbers in stack traces; its #! line becomes a
// comment; the code stays strict, as the ES modules it was built from.
const WRAPPER = "(function (exports, require, module, __filename, __dirname) {'use strict';";
// The build writes the bundle in ASCII (scripts/build.mjs): decoded as latin1 it is a one-byte string, read and hashed
// as bytes. A single character above U+00FF would make V8 keep the whole megabyte as a two-byte string, and UTF-8
// decoding plus hashing that string would cost every start (docs/bench-log.md).
const code = readFileSync(bundle);
const source = `${WRAPPER}${code.toString(isAscii(code) ? 'latin1' : 'utf8').replace(/^#!/, '//')}\n})`;
const key = sha256(`${BUNDLE_SHA256}\n${fileIdentity(bundle)}\n${WRAPPER}\n${process.version}\n${process.arch}`);
const cacheFile = cachePath(process.env, key);
const cachedData = readCache(cacheFile, key);
const script = new vm.Script(source, { filename: bundle, ...(cachedData ? { cachedData } : {}) });
if (!cachedData || script.cachedDataRejected === true) process.once('exit', () => writeCache(cacheFile, key, script));
const module = { exports: {} };
(script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(bundle), module, bundle, path.dirname(bundle));

/** Size, modification time (ns), inode and device of the bundle: any write to it after the build changes the key. */
function fileIdentity(file: string): string {
  const stat = statSync(file, { bigint: true });
  return `${stat.size} ${stat.mtimeNs} ${stat.ino} ${stat.dev}`;
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** `$XDG_CACHE_HOME/spelunk/code-cache/<key>.bin`, else under `~/.cache`; null when there is no home to use. */
function cachePath(env: NodeJS.ProcessEnv, id: string): string | null {
  const base = env['XDG_CACHE_HOME'] || (env['HOME'] ? path.join(env['HOME'], '.cache') : null);
  if (!base || !path.isAbsolute(base)) return null;
  return path.join(base, 'spelunk', 'code-cache', `${id.slice(0, 32)}.bin`);
}

/** The V8 payload of a valid cache file for `id`, or null (missing, another build, truncated, corrupt). */
function readCache(file: string | null, id: string): Buffer | null {
  if (!file) return null;
  try {
    const data = readFileSync(file);
    const header = data.subarray(0, HEADER_BYTES).toString('latin1');
    const payload = data.subarray(HEADER_BYTES);
    if (header !== `${MAGIC}${id}\n${sha256(payload)}\n`) return null;
    return payload;
  } catch {
    return null;
  }
}

/** Best effort, at exit: written to a temporary name and renamed, so a reader never sees half a file. */
function writeCache(file: string | null, id: string, compiled: vm.Script): void {
  if (!file) return;
  try {
    const root = publishedRunRoot();
    if (root !== null && isInside(root, realPrefix(path.dirname(file)))) return;
    const payload = compiled.createCachedData();
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, Buffer.concat([Buffer.from(`${MAGIC}${id}\n${sha256(payload)}\n`, 'latin1'), payload]), { mode: 0o600 });
    renameSync(temporary, file);
  } catch {
    // A read-only or full cache directory only costs the next start its compile time.
  }
}

