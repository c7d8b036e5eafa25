/**
 * Compound command lines — pipelines, chains and the redirects that only move stderr — taken apart without a shell.
 * Nothing here runs anything: a pipeline becomes its commands (pipeline.ts runs each on its own and hands one's output
 * to the next), a chain becomes its commands in order, and `2>/dev/null` / `2>&1` are dropped
 * (stderr already comes back separately). Anything else stays one command for the policy to judge and explain.
 */

/** Most commands in one chain, and most stages after a pipeline's first command. */
const MAX_PARTS = 5;

export type Compound =
  | { kind: 'single'; command: string; dropped: string[] }
  | { kind: 'pipeline'; first: string; stages: string[]; dropped: string[] }
  | { kind: 'chain'; parts: ChainPart[]; dropped: string[] };

/** `when`: after `;` always, after `&&` only if the command before succeeded, after `||` only if it failed. */
interface ChainPart {
  command: string;
  when: 'always' | 'ok' | 'failed';
}

const WHEN: Readonly<Record<string, ChainPart['when']>> = { ';': 'always', '&&': 'ok', '||': 'failed' };

/** Redirects of stderr (or of output into nothing) that change nothing the tool shows: dropped with a note. */
const DROPPABLE = /^(?:[12]?>&[12]|[12]?>>?\s*\/dev\/null|&>>?\s*\/dev\/null)(?=\s|$|[|;&])/;

interface Token {
  kind: 'text' | 'op';
  text: string;
}

/**
 * Splits at unquoted `|`, `&&`, `;` (and `||`, kept as an operator the caller refuses) and drops the redirects above;
 * quotes and backslashes are honoured the way bash reads them, so a `|` inside quotes stays a character.
 */
export function splitCompound(line: string): Compound {
  const tokens = tokenize(line);
  const dropped = tokens.dropped;
  const ops = tokens.list.filter((t) => t.kind === 'op').map((t) => t.text);
  const segments: string[] = [];
  let current = '';
  // Only blanks are trimmed: a newline or another control character stays for the lexer to refuse.
  const trim = (text: string): string => text.replace(/^[ \t]+|[ \t]+$/g, '');
  for (const token of tokens.list) {
    if (token.kind === 'text') current += token.text;
    else {
      segments.push(trim(current));
      current = '';
    }
  }
  segments.push(trim(current));
  if (ops.length === 0) return { kind: 'single', command: segments[0] as string, dropped };
  // Anything the split cannot represent exactly (an empty side, too many parts) goes to the policy as written.
  const unusual = segments.some((s) => s === '') || segments.length > MAX_PARTS + 1;
  if (unusual) return { kind: 'single', command: line, dropped: [] };
  if (ops.every((op) => op === '|')) return { kind: 'pipeline', first: segments[0] as string, stages: segments.slice(1), dropped };
  // A chain of pipelines (a | b && c): each part is one command or one pipeline, answered on its own.
  const parts: ChainPart[] = [];
  let part = segments[0] as string;
  let when: ChainPart['when'] = 'always';
  for (const [i, op] of ops.entries()) {
    if (op === '|') part += ` | ${segments[i + 1] as string}`;
    else {
      parts.push({ command: part, when });
      part = segments[i + 1] as string;
      when = WHEN[op] ?? 'always';
    }
  }
  parts.push({ command: part, when });
  return { kind: 'chain', parts, dropped };
}

function tokenize(line: string): { list: Token[]; dropped: string[] } {
  const list: Token[] = [];
  const dropped: string[] = [];
  let text = '';
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i] as string;
    if (quote !== null) {
      if (c === '\\' && quote === '"' && i + 1 < line.length) {
        text += c + (line[i + 1] as string);
        i += 1;
        continue;
      }
      if (c === quote) quote = null;
      text += c;
      continue;
    }
    if (c === '\\' && i + 1 < line.length) {
      text += c + (line[i + 1] as string);
      i += 1;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      text += c;
      continue;
    }
    const atWordStart = text === '' || /\s$/.test(text);
    const redirect = atWordStart ? DROPPABLE.exec(line.slice(i)) : null;
    if (redirect !== null) {
      dropped.push(redirect[0].replace(/\s+/g, ''));
      i += redirect[0].length - 1;
      continue;
    }
    const op = line.startsWith('&&', i) ? '&&' : line.startsWith('||', i) ? '||' : c === '|' || c === ';' ? c : null;
    if (op === null || line.startsWith('|&', i)) {
      text += c;
      continue;
    }
    list.push({ kind: 'text', text });
    list.push({ kind: 'op', text: op });
    text = '';
    i += op.length - 1;
  }
  list.push({ kind: 'text', text });
  return { list, dropped };
}
