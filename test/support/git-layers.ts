import { it } from 'vitest';
import { chooseSandbox } from '../../src/sandbox/choose.js';
import { useSandbox } from '../../src/sandbox/exec.js';
import { GIT_BINARY } from '../../src/sandbox/git.js';
import { TABLES_ONLY, type Sandbox, type SandboxKind } from '../../src/sandbox/kernel.js';
import { createGitTool } from '../../src/tools/git.js';

/**
 * The git tool in each of spelunk's two layers: the tables alone (what macOS and machines without user namespaces
 * get, `--sandbox off`) and the kernel sandbox with the tables as its second layer (skipped, with the reason, where
 * bwrap cannot run).
 */
const probe = await chooseSandbox('required');
export const KERNEL: Sandbox | null = probe.ok ? probe.sandbox : null;
export const WHY_SKIPPED = probe.ok ? '' : ` (skipped: ${probe.error})`;

/** The git tool on `root` in one layer: the policy's view (ctx.sandbox) and the spawner's (useSandbox) agree. */
export async function runTool(root: string, command: string, layer: SandboxKind, timeoutMs = 20_000): Promise<string> {
  useSandbox(layer === 'kernel' ? (KERNEL as Sandbox) : TABLES_ONLY);
  try {
    const outcome = await createGitTool(GIT_BINARY as string).run({ command }, { root, signal: new AbortController().signal, timeoutMs, sandbox: layer });
    return outcome.content;
  } finally {
    useSandbox(TABLES_ONLY);
  }
}

/** `rows` as two tables of tests, one per layer; the kernel's are skipped with the reason where bwrap cannot run. */
export function bothLayers<T extends unknown[]>(name: string, rows: T[], fn: (layer: SandboxKind, ...row: T) => Promise<void>): void {
  it.each(rows)(`tables: ${name}`, (...row) => fn('tables', ...(row as unknown as T)));
  it.skipIf(KERNEL === null).each(rows)(`kernel: ${name}${WHY_SKIPPED}`, (...row) => fn('kernel', ...(row as unknown as T)));
}
