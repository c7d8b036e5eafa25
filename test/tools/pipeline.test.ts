import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { resolvePrograms, type Programs } from '../../src/sandbox/programs.js';
import { createBashTool } from '../../src/tools/bash.js';
import { splitCompound } from '../../src/tools/compound.js';
import { applyFilters, parseFilter } from '../../src/tools/filters.js';
import { createGitTool } from '../../src/tools/git.js';
import { GIT_BINARY } from '../../src/sandbox/git.js';
import type { ToolOutcome } from '../../src/tools/tool.js';
import { makeRepo } from '../support/temp-repo.js';

/**
 * Pipelines, chains and stderr redirects get a usable answer in the same call: the first command runs (it is checked
 * like any other), filters after it are applied by spelunk, anything else is labelled unfiltered with what to send.
 */

let repo: Awaited<ReturnType<typeof makeRepo>>;
let programs: Programs;
const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 1}${i % 3 === 0 ? ' needle' : ''}`).join('\n');

beforeAll(async () => {
  [repo, programs] = await Promise.all([
    makeRepo({ 'notes.txt': `${lines}\n`, 'src/a.ts': 'needle a\n', 'src/b.ts': 'b\n', 'src/venv-x/c.py': 'needle c\n', 'README.md': '# r\nneedle\n' }, { git: true }),
    resolvePrograms(),
  ]);
});
afterAll(async () => repo.cleanup());

const bash = (command: string): Promise<ToolOutcome> =>
  createBashTool(programs).run({ command }, { root: repo.root, signal: new AbortController().signal, timeoutMs: 20_000 });
const git = (command: string): Promise<ToolOutcome> =>
  createGitTool(GIT_BINARY as string).run({ command }, { root: repo.root, signal: new AbortController().signal, timeoutMs: 20_000 });

describe('splitCompound', () => {
  it.each<[string, unknown]>([
    ['rg x | head -5', { kind: 'pipeline', first: 'rg x', stages: ['head -5'], dropped: [] }],
    ["rg 'a|b' src", { kind: 'single', command: "rg 'a|b' src", dropped: [] }],
    ['rg "a|b" | wc -l', { kind: 'pipeline', first: 'rg "a|b"', stages: ['wc -l'], dropped: [] }],
    ['rg a\\|b', { kind: 'single', command: 'rg a\\|b', dropped: [] }],
    ['pwd && ls', { kind: 'chain', parts: [{ command: 'pwd', when: 'always' }, { command: 'ls', when: 'ok' }], dropped: [] }],
    ['ls; pwd', { kind: 'chain', parts: [{ command: 'ls', when: 'always' }, { command: 'pwd', when: 'always' }], dropped: [] }],
    ['find . -name x 2>/dev/null', { kind: 'single', command: 'find . -name x', dropped: ['2>/dev/null'] }],
    ['rg x 2>&1 | head', { kind: 'pipeline', first: 'rg x', stages: ['head'], dropped: ['2>&1'] }],
    ['rg x > out', { kind: 'single', command: 'rg x > out', dropped: [] }],
    ['rg x || ls', { kind: 'chain', parts: [{ command: 'rg x', when: 'always' }, { command: 'ls', when: 'failed' }], dropped: [] }],
    ['ls x 2>/dev/null || echo "none"', { kind: 'chain', parts: [{ command: 'ls x', when: 'always' }, { command: 'echo "none"', when: 'failed' }], dropped: ['2>/dev/null'] }],
    ["rg '2>/dev/null'", { kind: 'single', command: "rg '2>/dev/null'", dropped: [] }],
  ])('%j', (line, expected) => {
    expect(splitCompound(line)).toEqual(expected);
  });
});

describe('filters applied by spelunk are exact for what they accept', () => {
  it.each<[string, string, string]>([
    ['head -n 2', 'a\nb\nc\n', 'a\nb\n'], ['head -2', 'a\nb\nc\n', 'a\nb\n'], ['tail -n 1', 'a\nb\nc\n', 'c\n'], ['tail -n +2', 'a\nb\nc\n', 'b\nc\n'],
    ['wc -l', 'a\nb\n', '2\n'], ['wc -l', '', '0\n'], ['sort', 'b\na\nB\n', 'B\na\nb\n'], ['sort -r', 'a\nc\nb\n', 'c\nb\na\n'],
    ['sort -n', '10 x\n9 y\n', '9 y\n10 x\n'], ['uniq -c', 'a\na\nb\n', '      2 a\n      1 b\n'], ['cut -d : -f 1', 'a:b\nc:d\n', 'a\nc\n'],
    ['grep -v x', 'ax\nb\n', 'b\n'], ['grep -i A', 'a\nb\n', 'a\n'], ['grep -c a', 'a\nab\nb\n', '2\n'], ["grep -E 'a|b'", 'a\nb\nc\n', 'a\nb\n'],
    ["grep 'a|b'", 'a|b\na\n', 'a|b\n'], ["grep '^a.*z$'", 'abz\nzab\n', 'abz\n'], ['grep -F .', 'a.b\nab\n', 'a.b\n'],
    ["grep 'a.c'", 'abc\nac\n', 'abc\n'], ["grep '\\.py$'", 'a.py\napy\na.pyc\n', 'a.py\n'], ["grep -E '^x|y$'", 'xa\nay\nyx\n', 'xa\nay\n'],
    ["grep -i 'ÉT'", 'été\nx\n', 'été\n'], ["grep '^$'", 'a\n\nb\n', '\n'],
  ])('%j on %j → %j', (stage, input, output) => {
    const parsed = parseFilter(stage);
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(applyFilters(input, [parsed.filter])).toBe(output);
  });

  it('matches in linear time: no regex engine runs in spelunk on a long line', () => {
    const parsed = parseFilter("grep 'a.*a.*a.*a.*b'");
    if (!parsed.ok) throw new Error(parsed.reason);
    // Counted, not timed: each of the five segments is searched once, left to right, from where the last one ended
    // (a backtracking matcher re-scans the line from every earlier match, ~200,000⁴ steps here).
    const line = 'a'.repeat(200_000);
    const searches: number[] = [];
    const realIndexOf = String.prototype.indexOf;
    const indexOf = vi.spyOn(String.prototype, 'indexOf').mockImplementation(function (this: string, search: string, from?: number) {
      if (this.length === line.length) searches.push(from ?? 0);
      return realIndexOf.call(this, search, from);
    });
    try {
      expect(applyFilters(`${line}\n`, [parsed.filter])).toBe('');
    } finally {
      indexOf.mockRestore();
    }
    expect(searches).toEqual([0, 1, 2, 3, 4]);
  });

  it.each(["grep -E '(a+)+$'", "grep -E 'a+'", "grep 'ab*'", "grep '[[:alpha:]]'", 'grep -w x', 'sort -k 2', 'sort -nu', "awk '{print $1}'", 'xargs cat', 'head -c 5', 'uniq -d', "sed 's/a/b/'"])(
    '%j is not a filter here',
    (stage) => expect(parseFilter(stage).ok).toBe(false),
  );
});

describe('the bash tool answers pipelines in the same call', () => {
  it.each<[string, RegExp, RegExp]>([
    ['cat notes.txt | head -3', /^line 1 needle\nline 2\nline 3\n\[exit 0\]/, /`cat notes.txt \| head -3` is `head -3 notes.txt`/],
    ['cat notes.txt | grep needle | wc -l', /^14\n/, /`grep needle notes.txt`/],
    ['rg -n needle notes.txt | head -2', /^1:line 1 needle\n4:line 4 needle\n/, /applied `\| head -2`/],
    ['find . -name "*.ts" | sort', /^\.\/src\/a\.ts\n\.\/src\/b\.ts\n/, /applied `\| sort`/],
    ['ls src | grep venv', /^venv-x\n/, /applied `\| grep venv`/],
    ['find src -type f | grep -v venv | wc -l', /^2\n/, /no shell/],
    ["rg -l needle | xargs grep -c needle", /UNFILTERED|src\/a\.ts/, /UNFILTERED: pipes are not run.*`\| xargs grep -c needle` was not applied.*grep -rn --include/],
    ["cat notes.txt | awk '{print $2}'", /line 1 needle/, /UNFILTERED.*cut -d ' ' -f N FILE/],
  ])('%j', async (command, output, note) => {
    const outcome = await bash(command);
    expect(outcome.content).toMatch(output);
    expect(outcome.content).toMatch(note);
  });

  it('a pipeline whose first command is refused says so, with the policy reason', async () => {
    const outcome = await bash('cat /etc/passwd | head');
    expect(outcome.isError).toBe(true);
    expect(outcome.content).toContain('outside the repository root (the first command of the pipeline');
  });

  it('chains run in order, each checked; && stops after a failure; stderr redirects are dropped and named', async () => {
    const chained = await bash('pwd && ls src');
    expect(chained.content).toBe(`$ pwd\n${repo.root}\n[exit 0]\n\n$ ls src\na.ts\nb.ts\nvenv-x\n[exit 0]\n[the chained commands ran one at a time, in order, each checked on its own; next time send one command per call]`);
    const stopped = await bash('cat nope && ls');
    expect(stopped.content).toContain('$ ls\n[not run: the command before && failed]');
    const fallback = await bash('cat nope 2>/dev/null || echo "not found"');
    expect(fallback.content).toContain('$ echo "not found"\n[not run: echo only prints its arguments; the status above answers]');
    const notNeeded = await bash('ls src || ls');
    expect(notNeeded.content).toContain('$ ls\n[not run: the command before || succeeded]');
    const refusedPart = await bash('ls; rm -rf src');
    expect(refusedPart.content).toContain('$ rm -rf src\nCommand refused: rm is not an allowed program');
    const rooted = await bash(`cd ${repo.root} && ls src`);
    expect(rooted.content).toMatch(/^\$ cd .*\n\[not needed: every command runs in the repository root\]\n\n\$ ls src\na\.ts/);
    const elsewhere = await bash('cd src && ls');
    expect(elsewhere.content).toContain('give the directory as an argument instead');
    expect(elsewhere.content).toContain('$ ls\n[not run: the command before && failed]');
    const dropped = await bash('find src -name "*.ts" 2>/dev/null');
    expect(dropped.content).toContain('[2>/dev/null dropped: stderr always comes back separately, after [stderr]]');
    expect(dropped.content).toContain('src/a.ts');
  });
});

describe('the git tool answers pipelines too', () => {
  it.each<[string, RegExp]>([
    ['log --oneline | head -1', /^[0-9a-f]{7,} init\n\[exit 0\]\n\[no shell: ran `log --oneline` and applied `\| head -1`/],
    ['git log --format=%s | grep init', /^init\n/],
    ['log --oneline | wc -l', /^1\n/],
  ])('%j', async (command, output) => {
    expect((await git(command)).content).toMatch(output);
  });
});
