import { execCapped } from '../sandbox/exec.js';

/** Bytes of ripgrep's non-debug stderr kept for the "unavailable" message. */
const STDERR_KEEP_BYTES = 2_048;
/** A stderr line longer than this is dropped (debug lines are a few hundred bytes). */
const STDERR_LINE_MAX_BYTES = 64 * 1024;
/** Output one walk may produce (paths and debug lines); the listing walk is depth-limited and far below it. */
const WALK_MAX_BYTES = 512 * 1024 * 1024;
/** Ignore files honoured even outside git, hidden files shown, .git never walked, symlinks not followed (default). */
const RG_WALK_FLAGS = ['--files', '--null', '--no-config', '--no-require-git', '--no-ignore-global', '--hidden', '-g', '!.git'];
/**
 * ripgrep never prints directories, and `--debug` is the only place it says which ones its ignore rules pruned:
 * `rg: DEBUG|ignore::walk|crates/ignore/src/walk.rs:N: ignoring ./node_modules: Ignore(…)` (without `./` under a path
 * given on the command line). The format is pinned by
 * the @vscode/ripgrep version; test/preamble/listing.test.ts fails if it changes (an ignored directory would show).
 */
const IGNORED_LINE = /^rg: DEBUG\|ignore::walk\|[^|]*: ignoring (?:\.\/)?(.+?): (?:Ignore|Override|Hidden|Type|Dir)\b/;

export type WalkResult = { ok: true } | { ok: false; reason: string };

interface WalkOptions {
  rgPath: string;
  cwd: string;
  /** Added after the fixed flags, e.g. `['--max-depth', '3']`. */
  args: string[];
  signal?: AbortSignal;
  timeoutMs: number;
  /** Each file, relative to `cwd`, as it streams in (NUL-separated, so any file name survives). */
  onPath: (rel: string) => void;
  /** When set, runs with `--debug` and reports each path (file or directory) the ignore rules or globs skipped. */
  onIgnored?: (rel: string) => void;
}

/**
 * Runs `rg --files` over `cwd` and streams its results. ripgrep runs with nothing inherited (no RIPGREP_CONFIG_PATH,
 * no HOME, so no global git excludes; see exec.ts), so the same repository gives the same listing on every machine. Exit code 2 with output means some subdirectory was
 * unreadable: the rest is still valid. A timeout or abort is a failure, never a partial result, so a result depends
 * only on the repository. Never throws.
 */
export async function walkFiles(opts: WalkOptions): Promise<WalkResult> {
  const args = [...RG_WALK_FLAGS, ...(opts.onIgnored ? ['--debug'] : []), ...opts.args];
  let sawOutput = false;
  const stdout = splitter(0, Infinity, (rel) => {
    sawOutput = true;
    opts.onPath(rel);
  });
  const errors: string[] = [];
  let errorBytes = 0;
  const stderr = splitter(0x0a, STDERR_LINE_MAX_BYTES, (line) => {
    if (!line.startsWith('rg: DEBUG|')) {
      if (errorBytes < STDERR_KEEP_BYTES && line.trim() !== '') errors.push(line.trim());
      errorBytes += line.length;
      return;
    }
    const match = opts.onIgnored && IGNORED_LINE.exec(line);
    if (match) opts.onIgnored!(match[1]!);
  });
  const run = await execCapped(opts.rgPath, args, {
    cwd: opts.cwd,
    timeoutMs: opts.timeoutMs,
    maxBytes: WALK_MAX_BYTES,
    ...(opts.signal ? { signal: opts.signal } : {}),
    onStdout: stdout.push,
    onStderr: stderr.push,
  });
  if (run.timedOut) return { ok: false, reason: `ripgrep took longer than ${opts.timeoutMs / 1000} s` };
  if (run.aborted) return { ok: false, reason: 'cancelled' };
  if (run.capped) return { ok: false, reason: `ripgrep printed more than ${WALK_MAX_BYTES / (1024 * 1024)} MiB` };
  if (run.exitCode === null && run.signal === null) return { ok: false, reason: `ripgrep could not be started (${run.stderr.trim()})` };
  stdout.end();
  stderr.end();
  // 0: files found; 1: none (an empty or fully ignored repository); 2 with output: partial errors only.
  const code = run.exitCode;
  if (code === 0 || code === 1 || (code === 2 && sawOutput)) return { ok: true };
  return { ok: false, reason: `ripgrep failed: ${(errors[0] ?? `exit code ${code ?? run.signal}`).slice(0, 200)}` };
}

/** Splits a byte stream on `separator` and decodes each record as UTF-8 (invalid bytes become U+FFFD). */
function splitter(separator: number, maxRecordBytes: number, onRecord: (record: string) => void) {
  let pending: Buffer = Buffer.alloc(0);
  return {
    push(chunk: Buffer): void {
      const data = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      let start = 0;
      for (let end = data.indexOf(separator, start); end !== -1; end = data.indexOf(separator, start)) {
        if (end > start) onRecord(data.toString('utf8', start, end));
        start = end + 1;
      }
      // Copy the partial tail so the chunk it came from can be freed; an endless record is dropped, not buffered.
      const tail = data.length - start;
      pending = tail > 0 && tail <= maxRecordBytes ? Buffer.from(data.subarray(start)) : Buffer.alloc(0);
    },
    end(): void {
      if (pending.length) onRecord(pending.toString('utf8'));
      pending = Buffer.alloc(0);
    },
  };
}

export function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException)?.code ?? String(error);
}
