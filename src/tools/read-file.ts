import { constants, promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { confine } from '../sandbox/paths.js';
import { execCapped, firstExecutableSync } from '../sandbox/exec.js';
import { bundledRg, TRUSTED_PATH } from '../sandbox/programs.js';
import { dropNulls, schemaIssues, type SchemaIssue } from '../schema.js';
import type { InputSchema, ParseResult, Tool, ToolContext, ToolOutcome } from './tool.js';
import { escapeControls } from '../escape.js';
import { handleReader, scanLines, type ScannedLine } from '../lines.js';

/** Lines shown when the call gives no end_line. */
const DEFAULT_WINDOW_LINES = 2_000;
/** Longer lines are cut to this many UTF-16 code units (characters, for nearly all text). */
const MAX_LINE_CHARS = 2_000;
/** The whole result, trailer included, stays within this many UTF-8 bytes (50 KiB). */
export const MAX_RESULT_BYTES = 50 * 1024;
/** Part of MAX_RESULT_BYTES kept for the trailer, in bytes; numbered lines get the rest. */
const TRAILER_RESERVE_BYTES = 1024;
/** A NUL byte in the first SNIFF_BYTES (8 KiB) marks a file as binary. */
export const SNIFF_BYTES = 8 * 1024;
/** Above this share of control or undecodable characters in the sniffed bytes a file counts as binary. */
const MAX_NON_TEXT_RATIO = 0.3;
/** Size of each read (256 KiB): memory stays bounded by this, not by the file size. */
export const READ_CHUNK_BYTES = 256 * 1024;
/** After the window, newlines are counted in at most this many more bytes (256 MiB) to report the total. */
const COUNT_SCAN_BYTES = 256 * 1024 * 1024;
/** Longest accepted `path`, in characters (PATH_MAX). */
const MAX_PATH_CHARS = 4_096;
/** Whether `tree` is installed: a refusal suggests only programs the bash tool can run here. */
const TREE_INSTALLED = firstExecutableSync(TRUSTED_PATH.split(':').map((dir) => `${dir}/tree`)) !== null;
/** The "did you mean" search stops after this many milliseconds or candidates; this many are shown. */
const SUGGEST_TIMEOUT_MS = 3_000;
const SUGGEST_CANDIDATES = 200;
const SUGGEST_SHOWN = 3;
/** Cut lines listed by number in the trailer before "and N more". */
const CUT_LINES_LISTED = 5;

export interface ReadFileInput {
  path: string;
  start_line?: number;
  end_line?: number;
  /** List the file's definitions with their lines instead of its text. */
  outline?: boolean;
}

interface WindowLimits {
  maxResultBytes: number;
  maxLineChars: number;
  chunkBytes: number;
  countScanBytes: number;
}

const DEFAULT_LIMITS: WindowLimits = {
  maxResultBytes: MAX_RESULT_BYTES,
  maxLineChars: MAX_LINE_CHARS,
  chunkBytes: READ_CHUNK_BYTES,
  countScanBytes: COUNT_SCAN_BYTES,
};

/** What one streaming pass over a file saw: the numbered lines of the window and how the file continues. */
export interface Window {
  /** Formatted `<n>\t<text>` lines, numbered from `first`. */
  shown: string[];
  first: number;
  /** Lines in the file, or a lower bound when `exact` is false (counting stopped after countScanBytes). */
  total: number;
  exact: boolean;
  /** Numbers of the lines cut at maxLineChars (at most CUT_LINES_LISTED) and how many were cut in all. */
  cut: number[];
  cutCount: number;
  /** True when the byte cap, not the requested range, ended the window. */
  capped: boolean;
}

/** What the model sees and what checks its input (parseInput). */
const INPUT_SCHEMA: InputSchema = {
  type: 'object',
  properties: {
    path: {
      type: 'string',
      description: 'File path relative to the repository root, e.g. "src/index.ts".',
      minLength: 1,
      maxLength: MAX_PATH_CHARS,
    },
    start_line: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'First line to show (1-based). Default 1.' },
    end_line: {
      type: 'integer',
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: `Last line to show, inclusive. Default start_line + ${DEFAULT_WINDOW_LINES - 1}.`,
    },
    outline: {
      type: 'boolean',
      description:
        'true: instead of the text, list the definitions (functions, classes, methods, types) as path:line, parsed ' +
        'with tree-sitter; then read only the range you need. For code files of about a dozen languages.',
    },
  },
  required: ['path'],
  additionalProperties: false,
};

/** Reads one window of a text file inside the repository, streaming so huge files cost little memory. */
export const readFileTool: Tool<ReadFileInput> = {
  name: 'read_file',
  description:
    `Read a text file of the repository. \`path\` is relative to the repository root. Returns up to ` +
    `${DEFAULT_WINDOW_LINES} lines, each prefixed with its line number and a tab; lines longer than ` +
    `${MAX_LINE_CHARS} characters are cut and one result is at most ${MAX_RESULT_BYTES / 1024} KiB. Give ` +
    `start_line/end_line (1-based, inclusive) to read a range; when the output is partial a trailer says how to ` +
    `continue. Directories, binary files and paths outside the repository cannot be read: use the bash tool ` +
    `(ls, find, rg) to list and search.`,
  inputSchema: INPUT_SCHEMA,
  parse: parseInput,
  display(input) {
    const name = escapeControls(input.path);
    if (input.outline) return `${name} (outline)`;
    if (input.start_line === undefined && input.end_line === undefined) return name;
    return `${name}:${input.start_line ?? 1}-${input.end_line ?? ''}`;
  },
  run: runReadFile,
};

// Long on purpose: a sequence of checks, each an early return with its own message for the model.
async function runReadFile(input: ReadFileInput, ctx: ToolContext): Promise<ToolOutcome> {
  // mustExist: false tells "missing inside the root" (→ suggestions) from "refused"; a missing path below an
  // escaping symlink is still refused, so the answer never reveals what exists outside the root.
  // Stryker disable next-line ObjectLiteral: `{}` leaves mustExist undefined, which confine treats as false.
  const confined = await confine(ctx.root, input.path, { mustExist: false });
  if (!confined.ok) {
    return fail(
      `Cannot read ${input.path}: ${confined.reason}. read_file only reads files inside the repository; ` +
        `give a path relative to the repository root.`,
      `denied: ${escapeControls(confined.reason).slice(0, 80)}`,
    );
  }
  if (!confined.exists) return missing(input.path, confined.rel, ctx);
  const { abs, rel } = confined;

  const st = await fs.lstat(abs).catch(() => null);
  if (st === null) return missing(input.path, rel, ctx);
  if (st.isDirectory()) {
    const q = shellQuote(rel);
    return fail(
      `${rel} is a directory; read_file reads files. List it with bash \`ls -la ${q}\`${TREE_INSTALLED ? ` or \`tree -L 2 ${q}\`` : ''}, ` +
        `or find files in it with \`find ${q} -name '*.ts'\`.`,
      'directory',
    );
  }
  // Checked before any open: opening a FIFO blocks until a writer appears, and devices can stream forever.
  if (!st.isFile()) {
    return fail(`${rel} is ${describeSpecial(st)}, not a regular file; read_file only reads regular files.`, 'not a regular file');
  }
  // Another link to the same file may be outside the root, and no link is "the original": refused, saying why.
  if (st.nlink > 1) {
    return fail(
      `${rel} has ${st.nlink} hard links, and another link may be a file outside the repository, so it is not read.`,
      `hard-linked file (${st.nlink} links)`,
    );
  }

  let handle: FileHandle;
  try {
    // O_NONBLOCK and O_NOFOLLOW: if the entry was swapped for a FIFO or a symlink since lstat, never block or follow.
    handle = await fs.open(abs, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    return fail(`Cannot open ${rel}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`, 'cannot open');
  }
  try {
    const opened = await handle.stat();
    if (!opened.isFile() || opened.ino !== st.ino || opened.dev !== st.dev) {
      return fail(`${rel} changed while it was being opened; try again.`, 'changed while opening');
    }
    ctx.onRead?.(abs);
    if (await isBinary(handle)) {
      return fail(
        `${rel} is a binary file (${formatSize(opened.size)}); read_file shows text only. ` +
          `Use bash \`file ${shellQuote(rel)}\` to see what it is.`,
        `binary file (${formatSize(opened.size)})`,
      );
    }
    // Loaded only when asked for: web-tree-sitter and the grammars cost a plain read nothing.
    if (input.outline) return (await import('../symbols/outline.js')).outlineOutcome(ctx.root, rel, await ctx.symbols?.());
    const start = input.start_line ?? 1;
    const end = input.end_line ?? start + DEFAULT_WINDOW_LINES - 1;
    // Bounded in time as well as bytes: counting to start_line=10^9 in a 2 GB file must not outlast a tool call.
    const deadline = AbortSignal.timeout(ctx.timeoutMs);
    const win = await readWindow(handle, { start, end }, DEFAULT_LIMITS, AbortSignal.any([ctx.signal, deadline]));
    return renderWindow(win, start, rel);
  } catch (error) {
    if (ctx.signal.aborted) return fail(`read_file of ${rel} was cancelled.`, 'cancelled');
    if ((error as Error).name === 'TimeoutError') {
      return fail(
        `read_file of ${rel} took longer than ${ctx.timeoutMs / 1000} s (${formatSize(st.size)}) and was stopped; ` +
          `find the line you need with bash \`rg -n 'pattern' ${shellQuote(rel)}\` and read near it.`,
        'timed out',
      );
    }
    return fail(`Cannot read ${rel}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`, 'read error');
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * One pass over the file (scanLines, the reader the citation check shares): lines before `start` are only counted,
 * lines of the window are decoded (at most maxLineChars*4+4 bytes of each is kept) and numbered until the byte
 * budget is spent, and after the window newlines are counted for at most countScanBytes more so the trailer can give
 * the total.
 */
export async function readWindow(
  handle: FileHandle,
  range: { start: number; end: number },
  limits: WindowLimits = DEFAULT_LIMITS,
  signal?: AbortSignal,
): Promise<Window> {
  const lineBudget = limits.maxResultBytes - TRAILER_RESERVE_BYTES;
  const firstDecoder = new TextDecoder('utf-8');
  const laterDecoder = new TextDecoder('utf-8', { ignoreBOM: true });
  const win: Window = { shown: [], first: range.start, total: 0, exact: true, cut: [], cutCount: 0, capped: false };
  let used = 0;
  const onLine = ({ lineNo, head, bytes, cr }: ScannedLine): 'count' | void => {
    // CRLF: the \r before the newline is not part of the line.
    const fullBytes = cr ? bytes - 1 : bytes;
    let text = (lineNo === 1 ? firstDecoder : laterDecoder).decode(head.subarray(0, Math.min(head.length, fullBytes)));
    const long = text.length > limits.maxLineChars;
    if (long) {
      let cutAt = limits.maxLineChars;
      if (isHighSurrogate(text.charCodeAt(cutAt - 1))) cutAt -= 1;
      text = `${text.slice(0, cutAt)}… [line cut at ${limits.maxLineChars} characters; full line is ${fullBytes} bytes]`;
    }
    const line = `${lineNo}\t${text}`;
    const cost = Buffer.byteLength(line) + 1;
    // The first line always fits (at most ~6 KiB with default limits): an empty window would make
    // "continue at start_line=N" point at the same line forever.
    if (used + cost > lineBudget && win.shown.length > 0) {
      win.capped = true;
      return 'count';
    }
    used += cost;
    win.shown.push(line);
    if (long) {
      win.cutCount += 1;
      if (win.cut.length < CUT_LINES_LISTED) win.cut.push(lineNo);
    }
  };
  const counted = await scanLines(handleReader(handle), {
    from: range.start,
    to: range.end,
    keepBytes: limits.maxLineChars * 4 + 4,
    chunkBytes: limits.chunkBytes,
    countScanBytes: limits.countScanBytes,
    onLine,
    ...(signal ? { signal } : {}),
  });
  win.total = counted.total;
  win.exact = counted.exact;
  return win;
}

/** Turns a window into the tool result: numbered lines, then a trailer whenever anything was left out. */
export function renderWindow(win: Window, start: number, rel: string): ToolOutcome {
  const total = win.exact ? `${win.total}` : `at least ${win.total}`;
  if (win.shown.length === 0) {
    if (win.total === 0 && start === 1) return { content: `(${rel} is empty)`, summary: 'empty file', isError: false };
    const has = win.total === 0 ? 'which is empty' : `which has ${win.total} line${win.total === 1 ? '' : 's'}`;
    const hint = win.total === 0 ? '' : ` Call read_file with start_line between 1 and ${win.total}.`;
    return fail(`start_line=${start} is past the end of ${rel}, ${has}.${hint}`, `start_line past end (${total} lines)`);
  }
  const last = win.first + win.shown.length - 1;
  const trailers: string[] = [];
  const range = `lines ${win.first}-${last} of ${total}`;
  const capNote = win.capped ? ` (output capped at ${MAX_RESULT_BYTES / 1024} KiB)` : '';
  if (last < win.total || !win.exact) {
    trailers.push(`[showing ${range}${capNote}; call read_file with start_line=${last + 1}]`);
  } else if (win.first > 1) {
    trailers.push(`[showing ${range}; end of file]`);
  }
  if (win.cutCount > 0) trailers.push(cutTrailer(win, rel));
  const whole = win.first === 1 && last === win.total && win.exact;
  const summary = whole ? `${win.total} line${win.total === 1 ? '' : 's'}` : range;
  const body = win.shown.join('\n');
  return { content: trailers.length > 0 ? `${body}\n\n${trailers.join('\n')}` : body, summary, isError: false };
}

function cutTrailer(win: Window, rel: string): string {
  const more = win.cutCount - win.cut.length;
  const listed = win.cut.join(', ') + (more > 0 ? ` and ${more} more` : '');
  const which = win.cutCount === 1 ? `line ${listed} was` : `lines ${listed} were`;
  return (
    `[${which} cut at ${MAX_LINE_CHARS} characters; to see more of ${win.cutCount === 1 ? 'it' : 'them'}, ` +
    `search inside with bash: rg -n -o '.{0,100}TEXT.{0,100}' ${shellQuote(rel)}]`
  );
}

/** NUL in the first SNIFF_BYTES, or mostly control/undecodable characters there. */
async function isBinary(handle: FileHandle): Promise<boolean> {
  const buf = Buffer.alloc(SNIFF_BYTES);
  const { bytesRead } = await handle.read(buf, 0, SNIFF_BYTES, 0);
  const head = buf.subarray(0, bytesRead);
  if (head.includes(0)) return true;
  // stream: true so a character split at the 8 KiB edge is not counted as undecodable.
  const text = new TextDecoder('utf-8').decode(head, { stream: true });
  let chars = 0;
  let bad = 0;
  for (const ch of text) {
    const c = ch.codePointAt(0) ?? 0;
    chars += 1;
    if (c === 0xfffd || c === 0x7f || (c < 0x20 && !TEXT_CONTROLS.has(c))) bad += 1;
  }
  // No characters (an empty file) give 0 / 0 = NaN, which is not above the ratio: text.
  return bad / chars > MAX_NON_TEXT_RATIO;
}

/** Tab, LF, VT, FF, CR, backspace and ESC (coloured logs) occur in text files. */
const TEXT_CONTROLS = new Set([0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1b]);

async function missing(asked: string, rel: string, ctx: ToolContext): Promise<ToolOutcome> {
  const found = await suggest(ctx.root, rel, ctx.signal);
  const base = path.basename(rel);
  const hint =
    found.length > 0
      ? ` Did you mean: ${found.join(', ')}?`
      : ` Search for it with bash \`rg --files -g '*${base.replace(/'/g, '')}*'\` or \`find . -name '${base.replace(/'/g, '')}'\`.`;
  return fail(`File not found: ${asked} (paths are relative to the repository root).${hint}`, 'not found');
}

/** Up to SUGGEST_SHOWN files elsewhere in the repository with the same name (any case), bounded in time. */
async function suggest(root: string, rel: string, signal: AbortSignal): Promise<string[]> {
  const base = path.basename(rel);
  // Stryker disable next-line ConditionalExpression,LogicalOperator,StringLiteral: a missing path's basename is never '', '.' or '..' (confine normalises it) and execCapped returns at once, with no output, on an aborted signal: without any part the answer is the same []
  if (base === '' || base === '.' || base === '..' || signal.aborted) return [];
  const rgPath = await bundledRg();
  // Stryker disable next-line ConditionalExpression: execCapped refuses a non-executable file with no output, so without the check the answer is the same [] (it is here to narrow the type)
  if (rgPath === null) return [];
  const found: string[] = [];
  let pending = '';
  const enough = new AbortController();
  // Stryker disable next-line StringLiteral: StringDecoder takes '' as its default encoding, utf8
  const decoder = new StringDecoder('utf8');
  const args = ['--files', '--hidden', '--no-config', '--no-messages', '--null', '--iglob', `**/${escapeGlob(base)}`, '--glob', '!.git'];
  await execCapped(rgPath, args, {
    cwd: root,
    timeoutMs: SUGGEST_TIMEOUT_MS,
    signal: AbortSignal.any([signal, enough.signal]),
    onStdout: (chunk) => {
      const names = (pending + decoder.write(chunk)).split('\0');
      // Stryker disable next-line StringLiteral: split() returns at least one element, so pop() is never undefined
      pending = names.pop() ?? '';
      found.push(...names);
      if (found.length >= SUGGEST_CANDIDATES) enough.abort();
    },
  });
  const candidates = found;
  return rank(candidates, rel).slice(0, SUGGEST_SHOWN);
}

/** Most trailing directory names in common with the asked path first, then same-case name, then shortest. */
function rank(candidates: string[], rel: string): string[] {
  const want = rel.split('/').slice(0, -1);
  const shared = (c: string): number => {
    const have = c.split('/').slice(0, -1);
    let n = 0;
    while (n < want.length && n < have.length && want[want.length - 1 - n] === have[have.length - 1 - n]) n += 1;
    return n;
  };
  const score = (c: string): [number, number, number] => [-shared(c), path.basename(c) === path.basename(rel) ? 0 : 1, c.length];
  return candidates
    .filter((c) => c !== rel)
    .map((c) => ({ c, s: score(c) }))
    .sort((a, b) => a.s[0] - b.s[0] || a.s[1] - b.s[1] || a.s[2] - b.s[2] || (a.c < b.c ? -1 : 1))
    .map(({ c }) => c);
}

/**
 * Checks the input against INPUT_SCHEMA, after two leniencies models need: null for a line means "not given", and a
 * line number sent as a digit string ("12") is that number. Then the rules a schema cannot say (end ≥ start, outline
 * without lines).
 */
function parseInput(input: unknown): ParseResult<ReadFileInput> {
  const obj = lenientLines(input);
  const [issue] = schemaIssues(INPUT_SCHEMA, obj);
  if (issue !== undefined) return { ok: false, error: issueMessage(issue) };
  const value = obj as ReadFileInput;
  const { start_line: start, end_line: end } = value;
  if (start !== undefined && end !== undefined && end < start) {
    return { ok: false, error: `end_line (${end}) is before start_line (${start}); end_line is inclusive and must be ≥ start_line.` };
  }
  if (value.outline === true && (start !== undefined || end !== undefined)) {
    return { ok: false, error: 'outline lists the whole file; drop start_line/end_line, or drop outline to read a range.' };
  }
  const lines = { ...(start !== undefined ? { start_line: start } : {}), ...(end !== undefined ? { end_line: end } : {}) };
  return { ok: true, value: { path: value.path, ...(value.outline ? { outline: true } : {}), ...lines } };
}

const USAGE = 'read_file expects {"path": "src/index.ts", "start_line": 1, "end_line": 200} (lines optional).';

/** One line for the model per schema issue, saying what to send instead. */
function issueMessage(issue: SchemaIssue): string {
  if (issue.keyword === 'additionalProperties') return `Unknown field ${issue.keys!.join(', ')}. ${USAGE}`;
  if (issue.at === '') return USAGE;
  if (issue.at === 'path') {
    if (issue.keyword === 'maxLength') return `path is longer than ${MAX_PATH_CHARS} characters.`;
    return `path must be a non-empty string. ${USAGE}`;
  }
  if (issue.at === 'outline') return `outline must be true or false. ${USAGE}`;
  return `${issue.at} must be a whole number ≥ 1 (lines are numbered from 1), got ${JSON.stringify(issue.value)}.`;
}

/** The input with null lines dropped and digit-string lines as numbers; anything else unchanged. */
function lenientLines(input: unknown): unknown {
  const obj = dropNulls(input, ['start_line', 'end_line']);
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return obj;
  const record = obj as Record<string, unknown>;
  const digits = (v: unknown): boolean => typeof v === 'string' && /^\s*\d+\s*$/.test(v);
  if (!digits(record.start_line) && !digits(record.end_line)) return obj;
  const copy = { ...record };
  for (const key of ['start_line', 'end_line']) if (digits(copy[key])) copy[key] = Number(copy[key]);
  return copy;
}

function fail(content: string, summary: string): ToolOutcome {
  return { content, summary, isError: true };
}

function describeSpecial(st: import('node:fs').Stats): string {
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  return 'a special file';
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}, ${bytes} bytes`;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Quotes a path for a bash command suggestion; `./` keeps a leading dash from reading as a flag. */
function shellQuote(p: string): string {
  const safe = p.startsWith('-') ? `./${p}` : p;
  return /^[\w./@%+=:,-]+$/.test(safe) ? safe : `'${safe.replace(/'/g, `'\\''`)}'`;
}

function escapeGlob(name: string): string {
  return name.replace(/[\\*?[\]{}!]/g, '\\$&');
}

