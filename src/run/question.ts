import { groupDigits } from '../digits.js';
import { priceFor, ratesFor } from '../agent/pricing.js';
import { estimateTokens } from '../preamble/system-prompt.js';
import type { Io } from '../io.js';

/** Piped stdin that goes with a question is cut to this many bytes (about 50,000 tokens). */
export const PIPED_MAX_BYTES = 200_000;
/** A question (with its piped block) above this many bytes (~62,000 tokens) is sent only when the user confirms. */
export const LARGE_QUESTION_BYTES = 250_000;
/** The size in words, for --help and the messages. */
export const LARGE_QUESTION_LABEL = '250 KB';
/** Said once when stdin has not ended after this long, so a stdin nobody closes is not a silent hang. */
const STDIN_NOTICE_MS = 3_000;
/** With a question given, a stdin that sends nothing for this long is taken to have nothing to say. */
export const STDIN_IDLE_MS = 3_000;

/** What was read from stdin: the first `PIPED_MAX_BYTES` at most when `cap` was asked for, and the full size. */
interface StdinText {
  text: string;
  totalBytes: number;
  cut: boolean;
  /** True when nothing came within `firstDataMs` and stdin was given up on. */
  idle: boolean;
}

/** Past this many bytes stdin is no longer read, not even counted: `yes | spelunk "q"` must end, and in bounded memory. */
const STDIN_READ_LIMIT = 64 * 1024 * 1024;

/**
 * Reads stdin to its end, or to STDIN_READ_LIMIT (then `totalBytes` is that much and the rest is never read). With
 * `cap`, keeps only the first `cap` bytes (cut at the last line break before the cap when there is one) but counts the
 * rest, so the notice can say how much was left out. `onSlow` is called once if the stream has not ended after a few
 * seconds. With `firstDataMs`, a stdin that gives neither data nor its end within that time is given up on (`idle`):
 * a caller that left an empty pipe open (a script's execFile, a CI step) must not hang the run, as in Claude Code.
 */
export async function readStdin(
  stdin: NodeJS.ReadableStream,
  opts: { cap?: number; onSlow?: () => void; firstDataMs?: number } = {},
): Promise<StdinText> {
  const chunks: Buffer[] = [];
  const cap = opts.cap ?? STDIN_READ_LIMIT;
  let kept = 0;
  let totalBytes = 0;
  let idle = false;
  await new Promise<void>((resolve) => {
    const timers = [
      // After the idle limit, if there is one: a stdin that never sends anything gets the idle line alone.
      opts.onSlow ? setTimeout(opts.onSlow, STDIN_NOTICE_MS + (opts.firstDataMs ?? 0)) : null,
      opts.firstDataMs === undefined ? null : setTimeout(() => ((idle = true), finish()), opts.firstDataMs),
    ];
    const onData = (chunk: Buffer | string): void => {
      if (timers[1]) clearTimeout(timers[1]);
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      totalBytes += buffer.length;
      const room = cap - kept;
      const part = buffer.length <= room ? buffer : buffer.subarray(0, Math.max(0, room));
      if (part.length > 0) chunks.push(part);
      kept += part.length;
      if (totalBytes >= STDIN_READ_LIMIT) finish();
    };
    const finish = (): void => {
      for (const timer of timers) if (timer) clearTimeout(timer);
      stdin.off('data', onData);
      stdin.off('end', finish);
      stdin.off('error', finish);
      stdin.off('close', finish);
      // Nothing more is wanted from it; an open pipe must not keep the process alive.
      if (idle || totalBytes >= STDIN_READ_LIMIT) (stdin as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
      resolve();
    };
    stdin.on('data', onData);
    stdin.once('end', finish);
    stdin.once('error', finish);
    stdin.once('close', finish);
  });
  const cut = totalBytes > kept;
  const raw = Buffer.concat(chunks).toString('utf8');
  return { text: cut ? cutAtLine(raw) : raw, totalBytes, cut, idle };
}

/** The end of a cut text at its last line break (when that keeps most of it), and never half a character. */
function cutAtLine(text: string): string {
  const clean = text.replace(/\uFFFD$/, '');
  const nl = clean.lastIndexOf('\n');
  return nl > clean.length * 0.9 ? clean.slice(0, nl + 1) : clean;
}

/**
 * The first message when text was piped in with a question: the question, then the piped text in a delimited block
 * (said to be cut, with both sizes, when it was). The question comes first so the model reads what is asked before
 * the material it is about.
 */
export function withPipedText(question: string, piped: StdinText): string {
  const body = piped.text.replace(/\n+$/, '');
  const note = piped.cut
    ? `\n[stdin was cut: the first ${groupDigits(Buffer.byteLength(piped.text))} of ${groupDigits(piped.totalBytes)} bytes are above]`
    : '';
  return `${question}\n\nText piped to spelunk on stdin:\n<stdin>\n${body}${note}\n</stdin>`;
}

/** The warning line for a cut stdin. */
export function pipedCutWarning(piped: StdinText): string {
  return `stdin is ${formatBytes(piped.totalBytes)}; only its first ${formatBytes(Buffer.byteLength(piped.text))} go to the model with the question`;
}

/** Size and estimated cost of a question over LARGE_QUESTION_BYTES; null for any smaller question. */
export function largeQuestion(text: string, model: string): { bytes: number; tokens: number; costUsd: number | null } | null {
  const bytes = Buffer.byteLength(text);
  if (bytes <= LARGE_QUESTION_BYTES) return null;
  const tokens = estimateTokens(text);
  const price = priceFor(model);
  return { bytes, tokens, costUsd: price ? (tokens * ratesFor(price, tokens).input) / 1_000_000 : null };
}

/** `the question is 1.6 MB (~420,000 tokens, ~$0.84 as input to claude-sonnet-5-5 for its first request)`. */
export function describeLarge(large: { bytes: number; tokens: number; costUsd: number | null }, model: string): string {
  const cost =
    large.costUsd === null ? `cost unknown for ${model}` : `~$${large.costUsd.toFixed(2)} as input to ${model} for its first request`;
  return `the question is ${formatBytes(large.bytes)} (~${groupDigits(large.tokens)} tokens, ${cost})`;
}

/**
 * A large pasted question is held until the next line says `y` (a terminal), or refused (piped input); any other
 * line is passed on. `question` is what to run now (null: nothing), `held` what waits for the answer.
 */
export function largeGate(
  line: string,
  held: string | null,
  opts: { model: string; terminal: boolean; allowed: boolean },
): { question: string | null; held: string | null; say?: string } {
  if (held !== null) return /^y(es)?$/i.test(line) ? { question: held, held: null } : { question: null, held: null, say: 'not sent' };
  const large = opts.allowed || line.startsWith('/') ? null : largeQuestion(line, opts.model);
  if (large === null) return { question: line, held: null };
  const what = describeLarge(large, opts.model);
  if (!opts.terminal) return { question: null, held: null, say: `not sent: ${what}; --allow-large-question sends it` };
  return { question: null, held: line, say: `${what}. Send it? Type y to send it, anything else to drop it` };
}

/** Asks on the terminal (`prompt` on stderr, the answer a line of stdin): yes only for y or yes; Ctrl+C interrupts. */
export async function confirmOnTerminal(
  io: Pick<Io, 'stdin' | 'stderr' | 'signals'>,
  prompt: string,
): Promise<'yes' | 'no' | 'interrupted'> {
  // Loaded here, not at start: a one-shot run asks nothing on the terminal unless its question is very large.
  const readline = await import('node:readline');
  const rl = readline.createInterface({ input: io.stdin, output: io.stderr as NodeJS.WritableStream, terminal: false });
  let onInterrupt = (): void => {};
  try {
    io.stderr.write(prompt);
    return await new Promise((resolve) => {
      onInterrupt = () => resolve('interrupted');
      io.signals.on('SIGINT', onInterrupt);
      io.signals.on('SIGTERM', onInterrupt);
      rl.once('line', (answer) => resolve(/^\s*y(es)?\s*$/i.test(answer) ? 'yes' : 'no'));
      rl.once('close', () => resolve('no'));
    });
  } finally {
    io.signals.off('SIGINT', onInterrupt);
    io.signals.off('SIGTERM', onInterrupt);
    rl.close();
  }
}

function formatBytes(bytes: number): string {
  if (bytes >= 1_000_000) return `${(bytes / 1_000_000).toFixed(1)} MB`;
  if (bytes >= 1_000) return `${Math.round(bytes / 1_000)} KB`;
  return `${bytes} bytes`;
}
