import path from 'node:path';
import type { RawFlags } from '../config.js';
import { UsageError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import type { Io } from '../io.js';
import { SymbolDiskCache, symbolCacheDir } from '../symbols/disk-cache.js';
import { SymbolIndex } from '../symbols/index.js';
import { indexCacheDir, RepoIndexes } from './index/store.js';
import { DEFAULT_K, locate, MAX_K } from './locate.js';
import { redactLocate } from './redact.js';
import { renderJson, renderText } from './render.js';

/** The whole search may take this long (rg over a large monorepo is well under it). */
const LOCATE_TIMEOUT_MS = 30_000;

/** Where the history locate mines is kept (src/locate/history-cache.ts): beside the symbols, `…/spelunk/history`. */
export function historyCacheDir(env: Io['env']): string | null {
  const symbols = symbolCacheDir(env);
  return symbols === null ? null : path.join(path.dirname(symbols), 'history');
}

/**
 * `spelunk locate QUESTION` over `root` (admitted by roots.ts): ranks the repository's files for the question without a model (no API key needed) and
 * prints the top k with their best symbols and lines. Bad flags are usage errors; the search itself never fails the
 * command (a partial search says so in its notes).
 */
export async function runLocate(question: string | null, root: string, flags: RawFlags & { k?: number; explain?: boolean }, io: Io): Promise<number> {
  if (question === null) throw new UsageError('locate needs a question: spelunk locate "where are sessions expired?"');
  const format = flags.outputFormat ?? 'text';
  if (format !== 'text' && format !== 'json') throw new UsageError(`locate --output-format must be text or json (got "${format}")`);
  const k = flags.k ?? DEFAULT_K;
  if (!Number.isInteger(k) || k < 1 || k > MAX_K) {
    throw new UsageError(`--k must be a whole number from 1 to ${MAX_K} (got ${Number.isNaN(k) ? 'a non-number' : k})`);
  }
  // Symbols parsed by earlier runs are reused from the user's cache directory (validated; see disk-cache.ts).
  const cacheDir = symbolCacheDir(io.env);
  const symbols = new SymbolIndex({ disk: cacheDir === null ? null : new SymbolDiskCache(cacheDir) });
  const historyCache = historyCacheDir(io.env);
  const allow = flags.allowSecrets === true || io.env.SPELUNK_ALLOW_SECRETS?.trim() === '1';
  if (allow) io.stderr.write('spelunk: --allow-secrets: the lines locate prints are not redacted\n');
  const result = await redactLocate(await locate(root, question, { k, timeoutMs: LOCATE_TIMEOUT_MS, symbols, index: new RepoIndexes(indexCacheDir(io.env)), historyCache, explain: flags.explain === true }), allow);
  if (format === 'json') {
    io.stdout.write(renderJson(result));
    return EXIT.ok;
  }
  io.stdout.write(renderText(result));
  for (const note of result.notes) io.stderr.write(`spelunk locate: note: ${note}\n`);
  return EXIT.ok;
}
