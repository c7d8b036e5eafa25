import type { OutStream } from '../io.js';

/**
 * Whether to colour a stream. Precedence: `--no-color` (flag false) → off; NO_COLOR non-empty → off;
 * FORCE_COLOR '0'/'false' → off, any other non-empty value → on even without a TTY; TERM=dumb → off; else the
 * stream's TTY-ness. A true/undefined flag never forces colour, because a yargs default of true must not put
 * ANSI codes into a redirected file.
 */
export function shouldUseColor(
  stream: OutStream,
  env: Readonly<Record<string, string | undefined>>,
  flag: boolean | undefined,
): boolean {
  if (flag === false) return false;
  if (env.NO_COLOR) return false;
  const force = env.FORCE_COLOR;
  if (force) return force !== '0' && force.toLowerCase() !== 'false';
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

/** Text styling functions; each returns its input unchanged when colour is off. */
export interface Palette {
  enabled: boolean;
  dim(s: string): string;
  bold(s: string): string;
  red(s: string): string;
  yellow(s: string): string;
  green(s: string): string;
  cyan(s: string): string;
}

/** Plain SGR codes with their specific resets, so nested styles close cleanly. */
const sgr =
  (open: number, close: number) =>
  (s: string): string =>
    s === '' ? s : `\x1b[${open}m${s}\x1b[${close}m`;

const identity = (s: string): string => s;

/** A palette that styles with ANSI codes when `enabled`, and is a no-op otherwise. */
export function createPalette(enabled: boolean): Palette {
  if (!enabled) {
    return { enabled, dim: identity, bold: identity, red: identity, yellow: identity, green: identity, cyan: identity };
  }
  return {
    enabled,
    dim: sgr(2, 22),
    bold: sgr(1, 22),
    red: sgr(31, 39),
    yellow: sgr(33, 39),
    green: sgr(32, 39),
    cyan: sgr(36, 39),
  };
}
