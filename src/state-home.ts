import os from 'node:os';
import path from 'node:path';

/**
 * `$XDG_STATE_HOME`, else `$HOME/.local/state` (the account's home directory when HOME is unset); null when neither
 * is an absolute path. The XDG spec ignores relative values, and with `HOME=` (empty) os.homedir() returns '', which
 * would put saved sessions and history under whatever directory spelunk was started from — the repository itself
 * for `cd repo && spelunk`.
 */
export function stateHome(env: Readonly<Record<string, string | undefined>>): string | null {
  const xdg = env.XDG_STATE_HOME;
  if (xdg && path.isAbsolute(xdg)) return xdg;
  const home = env.HOME ?? os.homedir();
  return home && path.isAbsolute(home) ? path.join(home, '.local', 'state') : null;
}
