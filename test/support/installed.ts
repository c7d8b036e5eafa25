import { accessSync, constants, statSync } from 'node:fs';

/** Whether `/usr/bin/<name>` or `/bin/<name>` is an executable file: the rule the program resolver itself uses. */
export function installedHere(name: string): boolean {
  return ['/usr/bin', '/bin'].some((dir) => {
    try {
      accessSync(`${dir}/${name}`, constants.X_OK);
      return statSync(`${dir}/${name}`).isFile();
    } catch {
      return false;
    }
  });
}

/** The whitelisted programs a machine may lack (the README promises `npm test` passes without them). */
const OPTIONAL_PROGRAMS = ['tree', 'file'];

/** Why a row running `command` must skip here (its program is optional and not installed), or null. */
export function missingFor(command: string): string | null {
  const program = command.trim().split(/\s+/)[0] ?? '';
  return OPTIONAL_PROGRAMS.includes(program) && !installedHere(program) ? `${program} is not installed on this machine` : null;
}
