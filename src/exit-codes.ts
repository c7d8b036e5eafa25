/** The exit-code contract scripts rely on (README "Exit codes"); nothing else may invent a code. */
export const EXIT = {
  ok: 0,
  /** Runtime, API or tool-infrastructure failure; also a failed read-only check. */
  failure: 1,
  /** Bad flag, bad --dir, missing API key, unknown price with --max-budget-usd. */
  usage: 2,
  /** A limit (turns, budget, timeout) was reached before an answer: fail closed. */
  limit: 3,
  /** Audit verdict fail with findings at or above --fail-on. */
  auditFailed: 4,
  /** Audit verdict inconclusive (or the model never reported). */
  auditInconclusive: 5,
  /** SIGINT / SIGTERM. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
