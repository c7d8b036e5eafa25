import { constants, promises as fs } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PROGRAM_POLICIES } from './policy/tables.js';

/** The only directories system programs are taken from; never the inherited PATH, never the repository. */
export const TRUSTED_PATH = '/usr/bin:/bin';

/** Every program the bash tool may run, in the order the tool description lists them: the policy table's keys. */
export const WHITELIST = Object.keys(PROGRAM_POLICIES) as ProgramName[];

export type ProgramName = keyof typeof PROGRAM_POLICIES;

/** Installed whitelisted programs: name → absolute path of the binary that will be spawned. */
export type Programs = ReadonlyMap<string, string>;

/**
 * Resolves the whitelist once. rg is the binary shipped by @vscode/ripgrep (so no system ripgrep is needed and a
 * repository's own `bin/rg` can never shadow it); the others come only from TRUSTED_PATH. Missing programs are left
 * out, so the tool description lists only what can actually run. `rg` may be passed in when already looked up, and
 * tests may name other directories (an empty one stands for a machine without the optional programs).
 */
export async function resolvePrograms(
  rg: Promise<string | null> = bundledRg(),
  dirs: readonly string[] = TRUSTED_PATH.split(':'),
): Promise<Programs> {
  const found = new Map<string, string>();
  for (const name of WHITELIST) {
    const file = name === 'rg' ? await rg : await firstExecutable(dirs.map((dir) => path.join(dir, name)));
    if (file !== null) found.set(name, file);
  }
  return found;
}

/**
 * The ripgrep binary shipped by @vscode/ripgrep (in its platform package, as the package itself finds it), or null when
 * either package is missing. Resolved, not imported: @vscode/ripgrep is an ES module, and requiring one from the
 * CommonJS bundle sets up Node's ES module loader on every start (~10 ms of main-thread time, measured) only to
 * compute this path. `from` is where resolution starts (tests name a folder without the packages).
 */
export async function bundledRg(from: string = import.meta.url): Promise<string | null> {
  try {
    const main = createRequire(from).resolve('@vscode/ripgrep');
    const binary = process.platform === 'win32' ? 'rg.exe' : 'rg';
    return await firstExecutable([createRequire(main).resolve(`@vscode/ripgrep-${process.platform}-${process.arch}/bin/${binary}`)]);
  } catch {
    return null;
  }
}

async function firstExecutable(candidates: readonly string[]): Promise<string | null> {
  for (const candidate of candidates) {
    try {
      const stat = await fs.stat(candidate);
      if (!stat.isFile()) continue;
      await fs.access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not there or not executable: try the next trusted directory.
    }
  }
  return null;
}
