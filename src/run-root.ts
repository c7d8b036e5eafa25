/**
 * The repository root of this run, published for the launcher (src/launch.ts): it writes the V8 code cache at exit,
 * and never inside the repository (`spelunk -C ~` with the cache under ~/.cache), as saved sessions are never
 * written there. A registered symbol, so the launcher's bundle and the CLI's bundle name the same slot.
 */
const RUN_ROOT = Symbol.for('spelunk.run-root');

export function publishRunRoot(root: string): void {
  (globalThis as Record<symbol, unknown>)[RUN_ROOT] = root;
}

export function publishedRunRoot(): string | null {
  const root = (globalThis as Record<symbol, unknown>)[RUN_ROOT];
  return typeof root === 'string' ? root : null;
}
