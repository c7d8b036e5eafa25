import type { OutStream } from '../io.js';
import type { Palette } from './color.js';

const SPINNER_FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'] as const;
const SPINNER_INTERVAL_MS = 80;
const CLEAR_LINE = '\r\x1b[K';

/** The activity indicator of the text view (stderr, a terminal only). */
export interface Spinner {
  /** Starts drawing (first frame at once); no-op when disabled or already running. */
  start(): void;
  /** Erases the current frame; a running spinner redraws on its next tick. */
  clear(): void;
  /** Erases the frame and stops the timer. */
  stop(): void;
}

export function createSpinner(stream: OutStream, p: Palette, enabled: boolean): Spinner {
  let timer: NodeJS.Timeout | null = null;
  let frame = 0;
  let shown = false;
  const draw = (): void => {
    stream.write(`\r${p.cyan(SPINNER_FRAMES[frame % SPINNER_FRAMES.length] ?? '')} ${p.dim('thinking…')}`);
    frame += 1;
    shown = true;
  };
  const clear = (): void => {
    if (!shown) return;
    stream.write(CLEAR_LINE);
    shown = false;
  };
  return {
    start() {
      if (!enabled || timer) return;
      draw();
      // unref: an indicator must never keep the process alive after the work is done.
      timer = setInterval(draw, SPINNER_INTERVAL_MS);
      timer.unref();
    },
    clear,
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
      clear();
    },
  };
}
