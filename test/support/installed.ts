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
