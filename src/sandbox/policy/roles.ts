import type { ValueKind } from './tables.js';

/**
 * What each argument word is, parallel to the words: a flag (possibly carrying an attached path value to confine),
 * a flag's separate value, or an operand (a path, or rg/grep's pattern).
 */
export type Role =
  | { kind: 'flag'; attachedPath?: string }
  | { kind: 'value'; value: ValueKind; flag: string }
  | { kind: 'operand'; value: 'path' | 'pattern' };

/** `given`: the flags as the tables name them (see State), for checks made after parsing (tree's walk). */
export type Parsed = { ok: true; roles: Role[]; given?: ReadonlySet<string> } | { ok: false; reason: string };
