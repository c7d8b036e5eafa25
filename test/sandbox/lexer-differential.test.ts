import { spawnSync } from 'node:child_process';
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as shellParse } from 'shell-quote';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lex } from '../../src/sandbox/policy/lexer.js';
import { splitCompound } from '../../src/tools/compound.js';

/**
 * The shell splitter held to bash itself. spelunk never starts a shell: compound.ts splits a line at `|`, `&&`, `||`
 * and `;`, and the lexer turns each command into argv. For every line of a generated table, bash runs the same line
 * with `set -f` and each program replaced by a function that records its argv (after draining its input, so the
 * stages of a pipeline record in order). Either spelunk refuses the line (any command the lexer refuses), or the argv
 * it would run, in order, is what bash ran. shell-quote is the second oracle, for the split only: its operators, in
 * order, must be spelunk's (the lexer already refuses any command whose words shell-quote reads differently, so
 * comparing words with it again would prove nothing).
 */

const BASH = '/usr/bin/bash';
const PROGRAMS = ['rg', 'grep', 'cat', 'head', 'wc', 'sort'];

/** Words in every quoting style bash knows, and the ones spelunk must refuse (expansions, comments, look-alikes). */
const WORDS = [
  'src', 'a.txt', '-n', '--max-count=2', '-e', "'a b'", "'x|y'", "'$HOME'", '\'a"b\'', "''", '"a b"', '"x\\"y"', '"a\\b"',
  '"a\\\\b"', '"$HOME"', '"été"', 'a\\ b', '\\|', '\\;', '\\$x', '\\\\', "a\\'b", '*.ts', 'src/*', "'*.ts'", 'a?c', '[ab]',
  '{a,b}', '~', '~/x', "a'b'\"c\"", 'été', '日本語', "'ｌｓ'", '$x', '${x}', '$(id)', '`id`', '#c', 'a#b', '"a|b"', "'a;b'",
  'x=1', '!', '"!"', '%', '@', '+', ',', ':', 'a:b', '\\n', '"\\n"', "'\\n'", '"a\'b"', '-', '--', '.', '..',
];
const OPERATORS = [' | ', ' && ', ' || ', ' ; ', '|', ';', '&&', ' 2>/dev/null', ' 2>&1', ' > out', ' < a.txt', ' & ', ' |& '];

/** A fixed pseudo-random sequence (mulberry32): the table is the same on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function table(): string[] {
  const next = random(34);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const command = (): string => [pick(PROGRAMS), ...Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(WORDS))].join(' ');
  const lines = new Set<string>();
  // Every word alone after a program, then random lines of one to three commands.
  for (const word of WORDS) lines.add(`grep -e ${word} a.txt`);
  for (const op of OPERATORS) lines.add(`rg -n x${op}${op.includes('>') || op.includes('<') ? '' : 'wc -l'}`);
  while (lines.size < WORDS.length + OPERATORS.length + 160) {
    const parts = 1 + Math.floor(next() * 3);
    let line = command();
    for (let i = 1; i < parts; i++) line += `${pick(OPERATORS)}${command()}`;
    if (next() < 0.15) line += pick([' 2>/dev/null', ' 2>&1', ' # note', ' #']);
    lines.add(line);
  }
  return [...lines];
}

/** What spelunk would run, in order, if every command succeeded; null when it refuses the line. */
function spelunkRuns(line: string): { runs: string[][]; ops: string[] } | null {
  const split = splitCompound(line);
  const parts = split.kind === 'chain' ? split.parts : [{ command: split.kind === 'single' ? split.command : line, when: 'always' as const }];
  const runs: string[][] = [];
  const ops: string[] = [];
  for (const [i, part] of parts.entries()) {
    if (i > 0) ops.push(part.when === 'ok' ? '&&' : part.when === 'failed' ? '||' : ';');
    const inner = splitCompound(part.command);
    const commands = inner.kind === 'pipeline' ? [inner.first, ...inner.stages] : [inner.kind === 'single' ? inner.command : part.command];
    if (inner.kind === 'pipeline') ops.push(...inner.stages.map(() => '|'));
    const argvs: string[][] = [];
    for (const command of commands) {
      const lexed = lex(command);
      if (!lexed.ok) return null;
      argvs.push(lexed.words.map((w) => w.text));
    }
    // Every command succeeds: a part after `||` does not run.
    if (part.when !== 'failed') runs.push(...argvs);
  }
  return { runs, ops };
}

let scratch: string;
beforeAll(async () => {
  scratch = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-lexer-diff-')));
  await fs.writeFile(path.join(scratch, 'a.txt'), 'x\n');
});
afterAll(() => fs.rm(scratch, { recursive: true, force: true }));

/** The argv bash gives each program of `line`, in the order they run; every function succeeds. */
function bashRuns(line: string): string[][] {
  const out = path.join(scratch, 'record');
  const functions = PROGRAMS.map((p) => `${p}() { rec ${p} "$@"; }`).join('\n');
  const script = `set -f\nrec() { /usr/bin/cat >/dev/null; printf '%s\\0' "$@" >>"$REC"; printf '\\1' >>"$REC"; }\n${functions}\n${line}\nwait\n`;
  spawnSync(BASH, ['--norc', '--noprofile', '-c', script], { cwd: scratch, input: '', env: { PATH: '/usr/bin:/bin', HOME: '/nonexistent', REC: out }, timeout: 10_000 });
  const recorded = existsSync(out) ? readFileSync(out, 'utf8') : '';
  spawnSync('/usr/bin/rm', ['-f', out]);
  return recorded.split('\x01').filter((r) => r !== '').map((r) => r.split('\0').slice(0, -1));
}

/** shell-quote's operators for the line, without the redirects spelunk drops (2>/dev/null, 2>&1). */
function shellQuoteOps(line: string): string[] | null {
  const entries = shellParse(line.replace(/ 2>\/dev\/null| 2>&1/g, ''));
  const ops: string[] = [];
  for (const entry of entries) if (typeof entry === 'object' && 'op' in entry && entry.op !== 'glob') ops.push(entry.op);
  return ops;
}

const ROWS = table();
/**
 * Lines spelunk must accept, not merely agree on: "agree or refuse" alone lets a splitter that refuses too much pass
 * (one that ignores `\|` splits there, then refuses the lone backslash).
 */
const MUST_ACCEPT = [
  'grep -e \\| a.txt', 'grep -e \\; a.txt | wc -l', "grep -e 'x|y' a.txt && wc -l a.txt", 'grep -e "a|b" a.txt; cat a.txt',
  "rg -n 'a;b' || cat a.txt", 'rg -n x 2>/dev/null | wc -l', 'rg -n x|wc -l', 'rg -n x 2>&1 | head -n 1', 'grep -e "x\\"y" a.txt',
  'grep -e a\\ b a.txt', 'grep -e \\\\ a.txt', 'grep -e "a\'b" a.txt', 'grep -e a\'b\'"c" a.txt', 'grep -e "été" 日本語',
  "grep -e '$HOME' a.txt", 'grep -e \\$x a.txt', "grep -e '*.ts' a.txt | sort | head -n 1", 'grep -e "a\\"|b" a.txt | wc -l',
];
const accepted: string[] = [];

describe.skipIf(!existsSync(BASH))('the splitter and the lexer agree with bash, or refuse (skipped: bash is not installed)', () => {
  it.each(ROWS)('%s', (line) => {
    const ours = spelunkRuns(line);
    if (ours === null) return;
    accepted.push(line);
    expect(ours.runs).toEqual(bashRuns(line));
    expect(ours.ops).toEqual(shellQuoteOps(line));
  });

  it.each(MUST_ACCEPT)('accepted, and as bash runs it: %s', (line) => {
    const ours = spelunkRuns(line);
    expect(ours).not.toBeNull();
    expect(ours?.runs).toEqual(bashRuns(line));
    expect(ours?.ops).toEqual(shellQuoteOps(line));
  });

  it('the table is not vacuous: most rows are accepted, and both refusals and operators are exercised', () => {
    expect(ROWS.length).toBeGreaterThan(200);
    expect(accepted.length).toBeGreaterThan(ROWS.length / 4);
    expect(accepted.length).toBeLessThan(ROWS.length);
    expect(accepted.some((l) => / \| | && | \|\| | ; /.test(l))).toBe(true);
  });
});
