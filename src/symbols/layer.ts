import type { SymbolIndex } from './index.js';

/**
 * The symbol layer of one session, made on first use: every outline of the session's read_file calls (and the MCP
 * server's locate) shares one SymbolIndex, so web-tree-sitter and each grammar load once per session instead of once
 * per call (250–300 ms of CPU each here), and parses are cached in memory and, with a cache directory, across runs.
 */
export type SymbolSource = () => Promise<SymbolIndex>;

/**
 * A SymbolSource whose index uses the disk cache under `env`'s XDG cache home (none without one). Loads nothing
 * until first called: a session whose model never asks for an outline pays nothing for it.
 */
export function lazySymbols(env: Readonly<Record<string, string | undefined>>): SymbolSource {
  let index: Promise<SymbolIndex> | null = null;
  return () =>
    (index ??= (async () => {
      const [{ SymbolIndex }, { SymbolDiskCache, symbolCacheDir }] = await Promise.all([import('./index.js'), import('./disk-cache.js')]);
      const dir = symbolCacheDir(env);
      return new SymbolIndex({ disk: dir === null ? null : new SymbolDiskCache(dir) });
    })());
}
