import { constants, existsSync, promises as fs, realpathSync } from 'node:fs';
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
 * CommonJS bundle sets up Node's ES module loader on every start (docs/bench-log.md) only to
 * compute this path. Nor is @vscode/ripgrep itself resolved by require: its package.json has an "exports" map, and
 * reading one loads Node's ES module resolver on every start; its folder is found along the same
 * node_modules folders instead. `from` is where resolution starts (tests name a folder without the packages).
 */
export async function bundledRg(from: string = import.meta.url): Promise<string | null> {
  try {
    const pkg = packageDir(from, '@vscode/ripgrep');
    if (pkg === null) return null;
    const binary = process.platform === 'win32' ? 'rg.exe' : 'rg';
    return await firstExecutable([createRequire(path.join(pkg, 'package.json')).resolve(`@vscode/ripgrep-${process.platform}-${process.arch}/bin/${binary}`)]);
  } catch {
    return null;
  }
}

/**
 * The real path of the folder require would load package `name` from: the first of require's node_modules folders
 * (resolve.paths) that holds it. Real, as require makes it, so that the platform package is then looked up beside it
 * (pnpm links each package into a store folder that holds its dependencies).
 */
function packageDir(from: string, name: string): string | null {
  for (const dir of createRequire(from).resolve.paths(name) ?? []) {
    const candidate = path.join(dir, name);
    if (existsSync(path.join(candidate, 'package.json'))) return realpathSync(candidate);
  }
  return null;
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
