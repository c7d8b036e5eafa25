import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chooseSandbox } from '../../src/sandbox/choose.js';
import { execCapped, MAX_CAPTURE_BYTES, useSandbox } from '../../src/sandbox/exec.js';
import { TABLES_ONLY, type Sandbox } from '../../src/sandbox/kernel.js';
import { checkCommand } from '../../src/sandbox/policy.js';
import { resolvePrograms, type Programs } from '../../src/sandbox/programs.js';
import { createBashTool } from '../../src/tools/bash.js';
import { splitCompound } from '../../src/tools/compound.js';
import { createGitTool } from '../../src/tools/git.js';
import { GIT_BINARY } from '../../src/sandbox/git.js';
import type { ToolOutcome } from '../../src/tools/tool.js';
import { missingFor } from '../support/installed.js';
import { makeRepo } from '../support/temp-repo.js';

/**
 * Pipelines, chains and stderr redirects get a usable answer in the same call: each command of a pipeline is checked
 * and run on its own, spelunk handing one's output to the next; a refused stage ends the chain, labelled unfiltered with
 * what to send instead. pipeline-differential.test.ts compares the answers with sh.
 */

const probe = await chooseSandbox('required');
const KERNEL: Sandbox | null = probe.ok ? probe.sandbox : null;
const WHY_SKIPPED = probe.ok ? '' : ` (skipped: ${probe.error})`;

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
  createGitTool(GIT_BINARY as string, programs).run({ command }, { root: repo.root, signal: new AbortController().signal, timeoutMs: 20_000 });

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

describe('a later stage is checked by the same tables, reading standard input and naming no file of its own', () => {
  it.for<[string, string | null]>([
    ['grep -n o', null], ["grep 'a\\|b'", null], ['head -c 5', null], ['tail -n +0', null], ['sort -k 2n', null], ['wc', null], ['cut -d: -f1', null],
    ['uniq -c', null], ['sed -n 1p', null], ['jq .a', null], ['rg -c x', null], ['cat', null], ['od -c', null], ['nl -ba', null],
    ['grep o notes.txt', 'takes no file here; run `grep o notes.txt` as its own command'],
    ['head -n 1 -', 'reading standard input ("-") is not supported'],
    ['sort -o out', 'writes'], ['tail -f', 'follow forever'], ['rg --pre cat x', 'runs another program'], ['grep -r x /etc', 'outside'],
    ['tac', 'copies its input to a temporary file'], ["awk '{print}'", 'awk is not an allowed program'], ['sh', 'runs other programs'],
    ["sed 's/a/b/'", 'sed'], ['xargs cat', 'xargs runs other programs'], ['git log', 'use the git tool'],
    // Flags that read a list of files to open from their input: refused as they are alone (a pipe would feed them names).
    ['sha256sum -c', 'reads the list of files'], ['md5sum --check', 'reads the list of files'], ['tree --fromfile', 'reads the list of files'],
    ['wc --files0-from=-', 'reads the list of files'], ['du --files0-from=-', 'reads the list of files'], ['sort --files0-from=-', 'reads the list of files'],
    ['find -files0-from -', 'starting points from a file'], ['file -f -', 'reads the list of files'], ['rg -f -', 'reading standard input ("-")'],
    ['grep -f -', 'reading standard input ("-")'], ['xxd - out', 'output file'], ['jq --rawfile a - .', 'reads a file into a variable'],
    ["sed -n 'r /etc/passwd'", 'sed'], ['sort -T /tmp', 'temporary'], ['cat /etc/passwd', 'outside'], ['tail -n 1 ../x', 'outside'],
  ])('%j → %s', async ([stage, refused], ctx) => {
    const missing = missingFor(stage);
    if (missing !== null) ctx.skip(missing);
    const verdict = await checkCommand(stage, { root: repo.root, programs, stdin: true });
    if (refused === null) expect(verdict).toMatchObject({ ok: true });
    else expect(verdict.ok ? 'accepted' : verdict.reason).toContain(refused);
  });

  it.each(['grep -n o', 'head -c 5', 'wc -l', 'cut -d: -f1', 'tail -n +0'])('%j alone (stdin /dev/null) is still refused or needs a path', async (command) => {
    const verdict = await checkCommand(command, { root: repo.root, programs });
    expect(verdict.ok ? 'accepted' : verdict.reason).toMatch(/would read standard input/);
  });
});

describe('execCapped input: written to the child, bounded by the caller, a child that stops reading is no error', () => {
  it.each<[string, string[], Buffer, string]>([
    ['wc', ['-c'], Buffer.from('abc'), '3\n'],
    ['head', ['-c', '2'], Buffer.alloc(4 * 1024 * 1024, 'x'), 'xx'],
    ['od', ['-An', '-tx1'], Buffer.from([0xff, 0x00, 0x0a]), ' ff 00 0a\n'],
  ])('%s %j', async (program, args, input, stdout) => {
    const result = await execCapped(programs.get(program) as string, args, { cwd: repo.root, timeoutMs: 20_000, input });
    expect(result).toMatchObject({ stdout, exitCode: 0, timedOut: false, capped: false });
  });

  it('without input, stdin is /dev/null', async () => {
    const result = await execCapped(programs.get('wc') as string, ['-c'], { cwd: repo.root, timeoutMs: 20_000 });
    expect(result.stdout).toBe('0\n');
  });
});

describe('the bash tool answers pipelines in the same call', () => {
  it.each<[string, RegExp, RegExp]>([
    ['cat notes.txt | head -3', /^line 1 needle\nline 2\nline 3\n\[exit 0\]/, /^\[no shell: ran `cat notes.txt`, then `head -3`, each on the output of the one before \(each checked and run on its own\)\]$/m],
    ['cat notes.txt | grep needle | wc -l', /^14\n/, /ran `cat notes.txt`, then `grep needle`, then `wc -l`, each/],
    ['rg -n needle notes.txt | head -2', /^1:line 1 needle\n4:line 4 needle\n/, /then `head -2`/],
    ['find . -name "*.ts" | sort', /^\.\/src\/a\.ts\n\.\/src\/b\.ts\n/, /then `sort`/],
    ['ls src | grep venv', /^venv-x\n/, /then `grep venv`/],
    ['find src -type f | grep -v venv | wc -l', /^2\n/, /no shell/],
    ["rg -n needle notes.txt | grep 'line 1\\|line 4'", /^1:line 1 needle\n4:line 4 needle\n10:line 10 needle\n(?:.*\n)*\[exit 0\]/, /then `grep 'line 1\\\|line 4'`/],
    ['rg -n needle notes.txt | less', /^1:line 1 needle\n/, /\[`\| less` left out: a pager after a pipe passes its input through unchanged\]\n\[no shell: ran `rg -n needle notes.txt`\]$/],
    ['cat notes.txt | grep zzz', /^\[no matches \(exit 1\)\]/, /then `grep zzz`/],
    ['cat nope.txt | wc -l', /^Command refused: cat: no such file or directory: nope\.txt/, /\(the first command of the pipeline\)$/],
    ['grep needle notes.txt src | wc -l', /^14\n\[stderr\]\ngrep: src: Is a directory\n\[exit 0\]/, /\[`grep needle notes\.txt src` exited 2; `\| wc -l` read what it wrote before that\]/],
    ["rg -l needle | xargs grep -c needle", /README\.md/, /\[UNFILTERED: above is the output of `rg -l needle` — `\| xargs grep -c needle` was not run: `xargs grep -c needle` is refused \(xargs runs other programs.*\)\. Instead: .*grep -rn --include/],
    ["cat notes.txt | head -2 | awk '{print $2}' | sort", /^line 1 needle\nline 2\n/, /UNFILTERED: above is the output of `cat notes\.txt \| head -2` — `\| awk '\{print \$2\}' \| sort` was not run: .*awk is not an allowed program.*cut -d ' ' -f N/],
    ['cat notes.txt | grep needle notes.txt', /line 1 needle/, /UNFILTERED.*takes no file here; run `grep needle notes\.txt` as its own command/],
  ])('%j', async (command, output, note) => {
    const outcome = await bash(command);
    expect(outcome.content).toMatch(output);
    expect(outcome.content).toMatch(note);
    expect(outcome.content).not.toContain('applied `| `');
  });

  it('the unfiltered summary says so; a later stage is never run after a refused one', async () => {
    const outcome = await bash("cat notes.txt | awk '{print}' | wc -l");
    expect(outcome.summary).toBe('40 lines (unfiltered)');
    expect(outcome.content).not.toMatch(/^40$/m);
  });

  it('an output past the cap is cut before the next stage reads it, and the answer says so', async () => {
    const big = await makeRepo({ 'big.txt': 'x'.repeat(MAX_CAPTURE_BYTES + 1024) });
    try {
      const outcome = await createBashTool(programs).run({ command: 'cat big.txt | wc -c' }, { root: big.root, signal: new AbortController().signal, timeoutMs: 20_000 });
      expect(outcome.content).toMatch(new RegExp(`^${MAX_CAPTURE_BYTES}\\n`));
      expect(outcome.content).toContain('[the output of `cat big.txt` passed 10 MB and was stopped there: `| wc -c` read only that much of it]');
    } finally {
      await big.cleanup();
    }
  });

  it('a sort after a pipe holds its whole input in memory: past 300,000 lines it would spill to a file no child may write', async () => {
    const lines = Array.from({ length: 400_000 }, (_, i) => `${i % 97}\n`).join('');
    const many = await makeRepo({ 'many.txt': lines });
    try {
      const run = (command: string): Promise<ToolOutcome> =>
        createBashTool(programs).run({ command }, { root: many.root, signal: new AbortController().signal, timeoutMs: 30_000 });
      const counted = await run('cat many.txt | sort | uniq -c | sort -rn | head -2');
      expect(counted.content).toMatch(/^ +4124 \d+\n +4124 \d+\n\[exit 0\]/);
      const small = await run('cat many.txt | sort -n | tail -n 1');
      expect(small.content).toMatch(/^96\n\[exit 0\]/);
    } finally {
      await many.cleanup();
    }
  });

  it('a cancelled call runs nothing after the first command', async () => {
    const aborted = new AbortController();
    aborted.abort();
    const outcome = await createBashTool(programs).run({ command: 'cat notes.txt | wc -l' }, { root: repo.root, signal: aborted.signal, timeoutMs: 20_000 });
    expect(outcome.content).toMatch(/^cancelled: the command was stopped before it finished\n\[not run: `\| wc -l`, because `cat notes\.txt` did not finish\]/);
  });

  it('a pipeline whose first command is refused says so, with the policy reason', async () => {
    const outcome = await bash('cat /etc/passwd | head');
    expect(outcome.isError).toBe(true);
    expect(outcome.content).toMatch(/outside the repository root.* \(the first command of the pipeline\)$/);
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

describe('the git tool answers pipelines too, its later stages run as the bash tool runs them', () => {
  it.each<[string, RegExp]>([
    ['log --oneline | head -1', /^[0-9a-f]{7,} init\n\[exit 0\]\n\[no shell: ran `log --oneline`, then `head -1`, each/],
    ['git log --format=%s | grep init', /^init\n/],
    ['log --oneline | wc -l', /^1\n/],
    ["log --format=%s | grep 'init\\|x'", /^init\n/],
    ['log --oneline | grep x notes.txt', /UNFILTERED: above is the output of `log --oneline` — `\| grep x notes\.txt` was not run: .*takes no file here.*Instead: log --grep/],
  ])('%j', async (command, output) => {
    expect((await git(command)).content).toMatch(output);
  });

  it.skipIf(KERNEL === null)(`a later stage reads what the git tool shows: remote -v's credentials stay masked${WHY_SKIPPED}`, async () => {
    execFileSync('git', ['remote', 'add', 'origin', 'https://user:SECRET-TOKEN@example.com/r.git'], { cwd: repo.root });
    useSandbox(KERNEL as Sandbox);
    try {
      const kernel = { root: repo.root, signal: new AbortController().signal, timeoutMs: 20_000, sandbox: 'kernel' as const };
      const outcome = await createGitTool(GIT_BINARY as string, programs).run({ command: 'remote -v | grep -c example' }, kernel);
      expect(outcome.content).toMatch(/^2\n/);
      const shown = await createGitTool(GIT_BINARY as string, programs).run({ command: 'remote -v | sort -r' }, kernel);
      expect(shown.content).toMatch(/^origin\thttps:\/\/\*\*\*@example\.com\/r\.git \(push\)\n/);
      expect(shown.content).not.toContain('SECRET');
    } finally {
      useSandbox(TABLES_ONLY);
      execFileSync('git', ['remote', 'remove', 'origin'], { cwd: repo.root });
    }
  });

  it('without the programs, a later stage is not run and the answer says so', async () => {
    const outcome = await createGitTool(GIT_BINARY as string).run({ command: 'log --oneline | head -1' }, { root: repo.root, signal: new AbortController().signal, timeoutMs: 20_000 });
    expect(outcome.content).toMatch(/UNFILTERED: above is the output of `log --oneline` — `\| head -1` was not run: `head -1` is refused \(this tool runs no command after a pipe\)/);
  });
});
