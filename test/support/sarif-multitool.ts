import { spawnSync } from 'node:child_process';
import { accessSync, chmodSync, constants, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

/**
 * Microsoft's SARIF validator (`@microsoft/sarif-multitool`, a dev dependency), the native binary called with an argv:
 * its npm bin wrapper passes arguments through a shell. npm 11 skips the platform package's install script (a
 * `chmod u+x`), so the setup below does it when the bit is missing. Where no binary fits the platform, `skip` says why.
 */
export type Multitool = { binary: string } | { skip: string };

/** One validator finding: the rule (GH…, SARIF…), its level, the file it is about and its message. */
export interface Diagnostic {
  ruleId: string;
  level: string;
  file: string;
  message: string;
}

const PLATFORM_PACKAGE: Partial<Record<NodeJS.Platform, string>> = {
  linux: '@microsoft/sarif-multitool-linux',
  darwin: '@microsoft/sarif-multitool-darwin',
  win32: '@microsoft/sarif-multitool-win32',
};

export function findMultitool(): Multitool {
  const pkg = PLATFORM_PACKAGE[process.platform];
  if (pkg === undefined) return { skip: `no Sarif.Multitool build for ${process.platform}` };
  let dir: string;
  try {
    dir = path.dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`));
  } catch {
    return { skip: `${pkg} is not installed (npm ci installs it as an optional dependency of @microsoft/sarif-multitool)` };
  }
  const binary = path.join(dir, process.platform === 'win32' ? 'Sarif.Multitool.exe' : 'Sarif.Multitool');
  if (!existsSync(binary)) return { skip: `${binary} is missing from ${pkg}` };
  try {
    accessSync(binary, constants.X_OK);
  } catch {
    chmodSync(binary, statSync(binary).mode | 0o100);
  }
  // The binary is a .NET single-file app; a machine without its runtime prerequisites (libicu…) fails here.
  const probe = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 60_000 });
  if (probe.status !== 0) return { skip: `${binary} does not run here: ${(probe.error?.message ?? probe.stderr ?? '').trim().split('\n')[0]}` };
  return { binary };
}

/**
 * `Sarif.Multitool validate FILES --rule-kind KIND` with every level reported, read back from its own SARIF output
 * (the console lines are for people). Throws when the validator itself fails.
 */
export function validateWith(binary: string, files: readonly string[], ruleKind: 'Gh' | 'Sarif'): Diagnostic[] {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spelunk-multitool-'));
  try {
    const out = path.join(dir, 'validation.sarif');
    const run = spawnSync(binary, ['validate', ...files, '--rule-kind', ruleKind, '--level', 'Error;Warning;Note', '--output', out, '--log', 'ForceOverwrite'], {
      encoding: 'utf8',
      timeout: 120_000,
      // No network here: the SARIF2006 rule's GET of the $schema URL fails fast instead of waiting on a proxy.
      env: { PATH: '/usr/bin:/bin', HOME: dir, DOTNET_CLI_TELEMETRY_OPTOUT: '1', no_proxy: '*' },
    });
    if (run.status !== 0 || !existsSync(out)) throw new Error(`Sarif.Multitool failed (${run.status}): ${run.stdout}\n${run.stderr}`);
    const log = JSON.parse(readFileSync(out, 'utf8')) as ValidationLog;
    return (log.runs[0]?.results ?? []).map((r) => ({
      ruleId: r.ruleId,
      level: r.level ?? 'warning',
      file: r.locations?.[0]?.physicalLocation?.artifactLocation?.uri ?? '',
      message: r.message?.text ?? r.message?.arguments?.join(' | ') ?? '',
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface ValidationLog {
  runs: Array<{
    results?: Array<{
      ruleId: string;
      level?: string;
      message?: { text?: string; arguments?: string[] };
      locations?: Array<{ physicalLocation?: { artifactLocation?: { uri?: string } } }>;
    }>;
  }>;
}
