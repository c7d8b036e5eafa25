import { describe, expect, it } from 'vitest';
import type { ExecResult } from '../../src/sandbox/exec.js';
import { clip, shape } from '../../src/tools/bash.js';

// What the model and the person see of a finished process (bash and git share it), and the head-and-tail cut.

const lines = (from: number, to: number): string => Array.from({ length: to - from + 1 }, (_, i) => `line ${String(from + i).padStart(2, '0')}\n`).join('');

describe('clip keeps the head and the tail', () => {
  it.each<[string, string, number, string]>([
    ['within the limit: as it is', 'short\n', 6, 'short\n'],
    ['cut at line boundaries, the lines counted', lines(0, 49), 160, `${lines(0, 5)}[… 38 lines omitted …]\n${lines(44, 49)}`],
    ['one long line: the characters counted', 'x'.repeat(200), 100, `${'x'.repeat(20)}\n[… 160 characters omitted …]\n${'x'.repeat(20)}`],
    ['a middle of exactly two lines', `${'h'.repeat(19)}\n${'x'.repeat(79)}\n${'z'.repeat(79)}\n${'t'.repeat(19)}\n`, 100, `${'h'.repeat(19)}\n[… 2 lines omitted …]\n${'t'.repeat(19)}\n`],
    ['a middle of one line: characters', `${'h'.repeat(19)}\n${'x'.repeat(159)}\n${'t'.repeat(19)}\n`, 100, `${'h'.repeat(19)}\n[… 160 characters omitted …]\n${'t'.repeat(19)}\n`],
    // The head is cut back to its last newline only if that keeps at least half of it; the tail likewise.
    ['a head newline at exactly half: cut there', `${'a'.repeat(10)}\n${'b'.repeat(189)}`, 100, `${'a'.repeat(10)}\n[… 169 characters omitted …]\n${'b'.repeat(20)}`],
    ['a head newline before half: kept whole', `ab\n${'c'.repeat(197)}`, 100, `ab\n${'c'.repeat(17)}\n[… 160 characters omitted …]\n${'c'.repeat(20)}`],
    ['a tail newline at exactly half: kept whole', `${'a'.repeat(190)}\n${'b'.repeat(9)}`, 100, `${'a'.repeat(20)}\n[… 160 characters omitted …]\n${'a'.repeat(10)}\n${'b'.repeat(9)}`],
    ['a tail starting with its newline: cut after it', `${'a'.repeat(180)}\n${'b'.repeat(19)}`, 100, `${'a'.repeat(20)}\n[… 161 characters omitted …]\n${'b'.repeat(19)}`],
    ['a tail newline before half: cut after it', `${'a'.repeat(189)}\n${'b'.repeat(10)}`, 100, `${'a'.repeat(20)}\n[… 170 characters omitted …]\n${'b'.repeat(10)}`],
    ['a limit under the marker\'s room: the marker alone', 'y'.repeat(100), 10, '[… 100 characters omitted …]\n'],
  ])('%s', (_name, text, max, expected) => {
    expect(clip(text, max)).toEqual({ text: expected, cut: text !== expected });
  });

  it('one character over the limit is cut', () => {
    expect(clip('y'.repeat(101), 100).cut).toBe(true);
    expect(clip('y'.repeat(100), 100).cut).toBe(false);
  });
});

const done = (extra: Partial<ExecResult>): ExecResult => ({
  stdout: '', stderr: '', exitCode: 0, signal: null, timedOut: false, aborted: false, capped: false, durationMs: 5, ...extra,
});

describe('shape', () => {
  it.each<[string, string, Partial<ExecResult>, { content: string; summary: string; isError: boolean; infrastructure?: boolean }]>([
    ['output and exit 0', 'rg', { stdout: 'a\nb\n' }, { content: 'a\nb\n[exit 0]', summary: '2 lines', isError: false }],
    ['one line', 'wc', { stdout: '3 a\n' }, { content: '3 a\n[exit 0]', summary: '1 line', isError: false }],
    ['nothing', 'find', {}, { content: '(no output)\n[exit 0]', summary: 'no output', isError: false }],
    ['stdout and stderr', 'grep', { stdout: 'x\n', stderr: 'warn\n' }, { content: 'x\n[stderr]\nwarn\n[exit 0]', summary: '1 line', isError: false }],
    ['a failure', 'ls', { stderr: 'ls: nope\n', exitCode: 2 }, { content: '[stderr]\nls: nope\n[exit 2]', summary: 'exit 2', isError: true }],
    ['rg exit 1: no matches', 'rg', { exitCode: 1 }, { content: '[no matches (exit 1)]', summary: 'no matches', isError: false }],
    ['grep exit 1: no matches', 'grep', { exitCode: 1 }, { content: '[no matches (exit 1)]', summary: 'no matches', isError: false }],
    ['git grep exit 1: no matches', 'git grep', { exitCode: 1 }, { content: '[no matches (exit 1)]', summary: 'no matches', isError: false }],
    ['no matches with a warning', 'grep', { stderr: 'grep: x: binary file matches\n', exitCode: 1 }, {
      content: '[stderr]\ngrep: x: binary file matches\n[no matches (exit 1)]', summary: 'no matches', isError: false,
    }],
    ['exit 1 of another program is a failure', 'git log', { exitCode: 1 }, { content: '[exit 1]', summary: 'exit 1', isError: true }],
    ['killed by a signal', 'sort', { exitCode: null, signal: 'SIGSEGV' }, { content: '[killed by SIGSEGV]', summary: 'killed by SIGSEGV', isError: true }],
    ['never started: spelunk\'s failure', 'rg', { exitCode: null, stderr: 'could not start /usr/bin/rg: gone\n' }, {
      content: '[stderr]\ncould not start /usr/bin/rg: gone', summary: 'rg could not start', isError: true, infrastructure: true,
    }],
    // Joined like the rest (the program has nothing on stdout in practice: it never ran).
    ['never started, with output', 'rg', { stdout: 'x\n', exitCode: null, stderr: 'could not start\n' }, {
      content: 'x\n[stderr]\ncould not start', summary: 'rg could not start', isError: true, infrastructure: true,
    }],
    ['a signal after some output', 'find', { stdout: 'a\n', stderr: 'oops\n', exitCode: null, signal: 'SIGXCPU' }, {
      content: 'a\n[stderr]\noops\n[killed by SIGXCPU]', summary: 'killed by SIGXCPU', isError: true,
    }],
    ['a failure after some output', 'sort', { stdout: 'a\n', exitCode: 2 }, { content: 'a\n[exit 2]', summary: 'exit 2', isError: true }],
    ['stopped at the output cap', 'rg', { stdout: 'a\nb\n', exitCode: null, signal: 'SIGKILL', capped: true }, {
      content: 'a\nb\n[output passed 10 MB, so the command was stopped; narrow the search]\n[stopped at the output cap]', summary: '2 lines (stopped at 10 MB)', isError: false,
    }],
    ['the cap reached exactly as it ended', 'cat', { stdout: 'a\n', capped: true }, {
      content: 'a\n[output passed 10 MB, so the command was stopped; narrow the search]\n[exit 0]', summary: '1 line (stopped at 10 MB)', isError: false,
    }],
    ['timed out', 'rg', { stdout: 'partial\n', exitCode: null, signal: 'SIGKILL', timedOut: true }, {
      content: 'partial\n[timed out after 1.5s and was stopped; narrow the search (a path, -g glob, --max-count)]', summary: 'timed out after 1.5s', isError: true,
    }],
    ['cancelled', 'rg', { stdout: 'partial\n', exitCode: null, signal: 'SIGKILL', aborted: true }, {
      content: 'cancelled: the command was stopped before it finished', summary: 'cancelled', isError: true,
    }],
  ])('%s', (_name, program, result, expected) => {
    expect(shape(program, done(result), 1500)).toEqual(expected);
  });

  it('shows the time limit to the millisecond', () => {
    expect(shape('rg', done({ timedOut: true, exitCode: null }), 1234.5678).summary).toBe('timed out after 1.235s');
  });

  it('cuts stderr to 5,000 characters and stdout to what is left of 30,000 less room for the status lines', () => {
    const stdout = 'o'.repeat(40_000);
    const stderr = 'e'.repeat(6_000);
    const err = clip(stderr, 5_000).text;
    const out = clip(stdout, 30_000 - err.length - 600).text;
    const outcome = shape('rg', done({ stdout, stderr }), 1500);
    expect(err).toMatch(/^e{2470}\n\[… 1060 characters omitted …\]\ne{2470}$/);
    expect(out).toMatch(/^o{12184}\n\[… 15632 characters omitted …\]\no{12184}$/);
    expect(outcome.content).toBe(`${out}\n[stderr]\n${err}\n[output truncated: narrow the search — add a path or -g glob, use -l to list files or -m/--max-count, or read a range with read_file]\n[exit 0]`);
    expect(outcome.summary).toBe('1 line');
  });

  it('says so when only stderr was cut', () => {
    const outcome = shape('rg', done({ stdout: 'ok\n', stderr: 'e'.repeat(6_000), exitCode: 2 }), 1500);
    expect(outcome.content).toMatch(/\n\[output truncated: [^\n]+\]\n\[exit 2\]$/);
  });
});
