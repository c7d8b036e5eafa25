/**
 * Which sandbox the programs spelunk starts run in. `kernel`: a bubblewrap namespace sandbox that shows only the
 * repository, read-only, with the policy tables as a second layer. `tables`: the policy tables alone (bwrap missing
 * or unusable, or `--sandbox off`).
 */
export type SandboxKind = 'kernel' | 'tables';

/** What the user asked for with `--sandbox` / `SPELUNK_SANDBOX`. */
export type SandboxMode = 'auto' | 'required' | 'off';

export const SANDBOX_MODES: readonly SandboxMode[] = ['auto', 'required', 'off'];
