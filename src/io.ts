/** A stream spelunk writes to; only `write` is required so tests can capture output. */
export interface OutStream {
  write(chunk: string): unknown;
  /** True when the stream is a terminal (enables colour and the activity indicator). */
  isTTY?: boolean;
  columns?: number;
}

/** Everything `main` needs from the process, injected so tests can drive it (principle 9). */
export interface Io {
  stdout: OutStream;
  stderr: OutStream;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  /** Signals (SIGINT/SIGTERM) are delivered through this emitter; the REPL and one-shot runs subscribe to it. */
  signals: { on(event: 'SIGINT' | 'SIGTERM', fn: () => void): unknown; off(event: 'SIGINT' | 'SIGTERM', fn: () => void): unknown };
  /** The front end has answered every interrupt so far (the REPL's prompt is back): bin.ts's count of them restarts. */
  settled?(): void;
}
