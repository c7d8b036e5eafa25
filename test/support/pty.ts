import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripAnsi } from './ansi.js';

export { stripAnsi };

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'dist', 'spelunk.js');

/**
 * The run's scratch XDG_STATE_HOME (made by global-setup.ts) for a spawned binary: without it and HOME, spelunk saves
 * sessions under the account's home directory (os.homedir()), the developer's real one.
 */
export function scratchState(): Record<string, string> {
  const state = process.env.SPELUNK_TEST_STATE_HOME;
  return state ? { XDG_STATE_HOME: state } : {};
}

/** Builds dist/ so pseudo-terminal tests run the real, current binary. */
export function buildBinary(): void {
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'inherit' });
}

/** The real binary in a pseudo-terminal (util-linux `script`), with keystrokes in and the screen text out. */
export class PtySession {
  readonly child: ChildProcess;
  output = '';
  readonly exited: Promise<number | null>;

  /** `columns`: the pseudo-terminal's width (set with stty before the binary starts); unset, the terminal says 0. */
  constructor(args: string[], env: Record<string, string>, opts: { columns?: number } = {}) {
    const binary = [process.execPath, BIN, ...args].map(shellQuote).join(' ');
    const command = opts.columns === undefined ? binary : `stty cols ${opts.columns} rows 40 && exec ${binary}`;
    this.child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: { PATH: '/usr/bin:/bin', TERM: 'xterm', COLUMNS: '120', LINES: '40', ...scratchState(), ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    // One decoder for the stream: a character split across two reads is decoded whole, not as two U+FFFD.
    const decoder = new TextDecoder('utf-8');
    this.child.stdout!.on('data', (d: Buffer) => {
      this.output += decoder.decode(d, { stream: true });
    });
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }

  type(keys: string): void {
    this.child.stdin!.write(keys);
  }

  /**
   * Resolves when the screen text (escape codes stripped) after `from` matches; rejects after `ms`. Positions are in
   * the stripped text, as `screen()` returns it: a raw-output position overshot by every escape byte before it (the
   * spinner's, more of them on a slow machine), so `screen().slice(mark)` could start mid-line.
   */
  async waitFor(pattern: RegExp, opts: { from?: number; ms?: number } = {}): Promise<number> {
    const deadline = Date.now() + (opts.ms ?? 15_000);
    for (;;) {
      const screen = this.screen();
      const seen = screen.slice(opts.from ?? 0);
      if (pattern.test(seen)) return screen.length;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; screen:\n${seen.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** The screen text (escape codes stripped) from `from`, a position in that text as waitFor returns it. */
  screen(from = 0): string {
    return stripAnsi(this.output).slice(from);
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
