import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseSandbox } from '../../src/sandbox/choose.js';
import { CHILD_ENV, useSandbox } from '../../src/sandbox/exec.js';
import { TABLES_ONLY, type Sandbox } from '../../src/sandbox/kernel.js';
import { resolvePrograms, type Programs } from '../../src/sandbox/programs.js';
import { createBashTool } from '../../src/tools/bash.js';
import { makeRepo } from '../support/temp-repo.js';

/**
 * A pipeline's later stages run as the real programs: each row goes through the bash tool's own entry (a real temp
 * repository) and through `sh -c` on a scratch copy of it, and the two give the same stdout and exit status, or the
 * tool refuses a stage (UNFILTERED) or the whole line. Each row says which it expects, so a refusal cannot hide a
 * wrong answer. The rows are the axes below crossed: inputs (final newline or not, multibyte text, big and negative
 * numbers) × stages (BRE and ERE escapes, `-n +K` forms, numeric sorts, cut lists, …).
 */

const probe = await chooseSandbox('required');
const KERNEL: Sandbox | null = probe.ok ? probe.sandbox : null;
const WHY_SKIPPED = probe.ok ? '' : ` (skipped: ${probe.error})`;

const FILES: Record<string, string> = {
  'w.txt': 'foo\nfoooo\nfo\nbar\n',
  'nonl.txt': 'l1\nl2\nl3',
  'utf8.txt': 'été\nÉTÉ\nnaïve café\n日本語テキスト\nemoji 😀 ok\nfoo bär\n',
  'n.txt': '100000000000000000\n99999999999999999\n-5\n3\n-0\n10\n9\n 42\n1.5\n-100000000000000001\n007\n',
  'g.txt': '1e3\n2.5\n-1\ninf\n0x10\n-inf\n1E2\n',
  'cols.txt': 'z 3 x\ny 1 w\nx 2 v\ny 10 u\nb 2 a\n',
  'fields.txt': 'a:b:c\nd:e\nnodelim\n:x:\nf:g:h:i\n',
  'tabs.txt': 'a\tb\tc\n1\t2\nnotab\n',
  'dup.txt': 'a\na\nb\nB\nb\na\n\n\nb\n',
  'data.json': '{"a": [3, 1, 2], "name": "x"}\n',
  'empty.txt': '',
  'crlf.txt': 'a,b\r\nc,d\r\nlast,e',
  'src/one.ts': 'export const foo = 1;\n',
  'src/two.ts': 'import { foo } from "./one";\n',
};

type Expect = 'same' | 'refused';
type Row = [line: string, expect: Expect];

const cross = (inputs: readonly string[], stages: readonly string[], expect: Expect = 'same'): Row[] =>
  inputs.flatMap((input) => stages.map((stage): Row => [`${input} | ${stage}`, expect]));

const GREP_STAGES = [
  "grep 'foo\\|bar'", "grep 'fo\\+'", "grep 'o\\{4\\}'", "grep 'o\\{2,\\}'", "grep 'fo\\?o$'", "grep '\\(fo\\)o'", "grep 'a|b'",
  "grep -E 'foo|bar'", "grep -E 'fo+'", "grep -E 'o{4}'", "grep -E '(fo)+o'", "grep -E 'a\\|b'", "grep -F 'o|b'", 'grep -c o',
  'grep -n o', 'grep -v o', 'grep -i FOO', 'grep -w fo', 'grep -x fo', "grep -o 'o\\+'", "grep '[[:alpha:]]\\{3\\}'",
  "grep -E '^f.{2}$'", "grep 'fo*$'", "grep -i 'É'", 'grep -c .', "grep '\\bfo'", 'grep -m 1 o', "grep -e fo -e ba",
  "grep -E 'fo{1,2}$'", "grep '\\<fo'", "grep 'o\\>'", "grep -E '(^|o)b'", "grep '[^o]$'", "grep -E 'f(o|a)+'", "grep -iE 'BAR|É'",
  "grep -P 'o(?=o)'", "grep -w 'fo\\|bar'", "grep 'a\\{1\\}r'", 'grep -c ""', "grep -x 'fo\\+'",
];
const GREP_INPUTS = ['cat w.txt', 'rg -N . w.txt', 'cat utf8.txt'];

const LINE_STAGES = [
  'head -n 2', 'head -2', 'head -n -1', 'head -c 8', 'head -c -3', 'head -c 5', 'head -n 0', 'tail -n +0', 'tail -n +1',
  'tail -n +2', 'tail -n 0', 'tail -n 2', 'tail -2', 'tail -c 4', 'tail -c +3', 'tail -n +10', 'tail -n -1', 'head --lines=3',
  'tail -n+2', 'tail --lines=+2', 'head -n +2', 'tail -c+3', 'tail -n +3 -q', 'head -n 2 -q',
];
const LINE_INPUTS = ['cat nonl.txt', 'cat w.txt', 'cat utf8.txt', 'rg -n . w.txt'];

const SORT_STAGES = [
  'sort', 'sort -n', 'sort -rn', 'sort -g', 'sort -u', 'sort -r', 'sort -nu', 'sort -k 2', 'sort -k 2n', "sort -t ' ' -k2,2n",
  'sort -f', 'sort -s -k 1,1', 'sort -h', 'sort -V',
];
const SORT_INPUTS = ['cat n.txt', 'cat g.txt', 'cat cols.txt', 'cat dup.txt', 'cat utf8.txt'];

const WC_STAGES = ['wc -l', 'wc -c', 'wc -w', 'wc -m', 'wc -L', 'wc', 'wc -lc'];
const WC_INPUTS = ['cat nonl.txt', 'cat utf8.txt', 'cat w.txt', 'cat empty.txt', 'head -c 8 nonl.txt'];

const CUT_STAGES = [
  'cut -d: -f1', 'cut -d : -f2', 'cut -d: -f0', 'cut -d: -f3-1', 'cut -d: -f2-', 'cut -d: -f-2', 'cut -d: -f1,3', 'cut -s -d: -f2',
  'cut -c1-3', 'cut -b1-2', 'cut -c2', 'cut --complement -d: -f1', 'cut -f1', 'cut -d: -f1 --output-delimiter=,', 'cut -f2-',
];
const CUT_INPUTS = ['cat fields.txt', 'cat utf8.txt', 'cat tabs.txt'];

const UNIQ_STAGES = ['uniq', 'uniq -c', 'uniq -d', 'uniq -u', 'uniq -i', 'uniq -c | sort -rn', 'sort | uniq -c', 'sort -u | wc -l'];
const UNIQ_INPUTS = ['cat dup.txt', 'cat w.txt'];

/** Where the final newline matters: the bytes themselves, shown by od. */
const BYTES = cross(['cat nonl.txt', 'cat utf8.txt'], ['tail -n 1', 'head -c 5', 'tail -n +0', 'sort', 'cut -c1-2', 'grep l', 'uniq', 'nl'].map((s) => `${s} | od -An -c`));

/** Bytes that are not UTF-8 (a lone 0xff, NUL): a stage must get the bytes, not their decoded text. */
const BINARY = Buffer.from([0x66, 0x6f, 0x6f, 0xff, 0x0a, 0x00, 0x62, 0x61, 0x72, 0x0a, 0xc3, 0x0a, 0x78, 0x79, 0x7a, 0x7a, 0x79, 0x0a]);

const OTHERS: Row[] = [
  ['rg -N . n.txt | sort -n', 'same'],
  ['rg -N . n.txt | sort -g', 'same'],
  ['cat bin.dat | od -An -tx1', 'same'],
  ['cat bin.dat | wc -c', 'same'],
  ['cat bin.dat | strings', 'same'],
  ['cat bin.dat | grep -a -c o', 'same'],
  ['cat bin.dat | head -c 4 | od -An -tx1', 'same'],
  ['cat bin.dat | sort | od -An -c', 'same'],
  ['cat bin.dat | cut -b2-3 | od -An -tx1', 'same'],
  ["cat crlf.txt | grep -c 'b$'", 'same'],
  ['cat crlf.txt | cut -d, -f2 | od -An -c', 'same'],
  ['cat crlf.txt | wc -l', 'same'],
  ['cat crlf.txt | tail -n 1 | od -An -c', 'same'],
  ['rg -n o w.txt | grep -n o', 'same'],
  ['rg -n o w.txt | grep -n o | cut -d: -f1,2', 'same'],
  ['cat w.txt | grep o | wc -l', 'same'],
  ['cat n.txt | sort -n | head -3', 'same'],
  ['cat n.txt | sort -n | tail -n +2', 'same'],
  ['cat dup.txt | sort | uniq -c | sort -rn | head -3', 'same'],
  ['cat fields.txt | cut -d: -f1 | sort -u', 'same'],
  ['cat nonl.txt | tail -n 1 | wc -c', 'same'],
  ['ls | sort -r', 'same'],
  ["find . -name '*.txt' | sort", 'same'],
  ["find src -name '*.ts' | sort | head -1", 'same'],
  ['cat utf8.txt | grep -i é | wc -m', 'same'],
  ['cat w.txt | nl', 'same'],
  ['cat w.txt | nl -ba -w2', 'same'],
  // GNU tac copies a piped input to a temporary file: refused as a stage (nothing may write one).
  ['cat w.txt | tac', 'refused'],
  ["cat w.txt | sed -n '2,3p'", 'same'],
  ['cat nonl.txt | od -c', 'same'],
  ['cat utf8.txt | xxd | head -2', 'same'],
  ['cat nonl.txt | strings', 'same'],
  ['cat data.json | jq .a', 'same'],
  ["cat data.json | jq -c '.a | sort'", 'same'],
  ['cat w.txt | base64', 'same'],
  ['cat w.txt | paste -sd,', 'same'],
  ['cat w.txt | sha256sum', 'same'],
  ['cat w.txt | cat', 'same'],
  ['cat w.txt | cat -n', 'same'],
  ['cat w.txt | rg fo', 'same'],
  ['cat w.txt | rg -c o', 'same'],
  ["rg -l foo | sort", 'same'],
  ['rg --files | sort | wc -l', 'same'],
  ['cat w.txt | grep zzz', 'same'],
  ['cat w.txt | grep zzz | wc -l', 'same'],
  ['cat nope.txt | wc -l', 'refused'],
  ['grep -c o w.txt | cat', 'same'],
  ['cat w.txt | head -n 2 | tail -n 1 | od -An -c', 'same'],
  ['cat utf8.txt | cut -c1 | sort | uniq -c', 'same'],
  // Refused stages: not whitelisted, a file operand of their own, a refused flag.
  ["cat w.txt | awk '{print $1}'", 'refused'],
  ['cat w.txt | tr a-z A-Z', 'refused'],
  ['cat w.txt | xargs echo', 'refused'],
  ["cat w.txt | sed 's/o/0/'", 'refused'],
  ['cat w.txt | grep o w.txt', 'refused'],
  ['cat w.txt | sort -o out.txt', 'refused'],
  ['cat w.txt | tail -f', 'refused'],
  ['cat w.txt | head -n 1 -', 'refused'],
  ['cat w.txt | sort | tee copy.txt', 'refused'],
  ['cat w.txt | grep o | sh', 'refused'],
  ['cat w.txt | uniq - out.txt', 'refused'],
  ['cat w.txt | rg --pre cat o', 'refused'],
];

const ROWS: Row[] = [
  ...cross(GREP_INPUTS, GREP_STAGES),
  ...cross(LINE_INPUTS, LINE_STAGES),
  ...cross(SORT_INPUTS, SORT_STAGES),
  ...cross(WC_INPUTS, WC_STAGES),
  ...cross(CUT_INPUTS, CUT_STAGES),
  ...cross(UNIQ_INPUTS, UNIQ_STAGES),
  ...BYTES,
  ...OTHERS,
];

let repo: Awaited<ReturnType<typeof makeRepo>>;
let scratch: string;
let programs: Programs;

beforeAll(async () => {
  [repo, programs] = await Promise.all([makeRepo(FILES), resolvePrograms()]);
  await fs.writeFile(path.join(repo.root, 'bin.dat'), BINARY);
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-sh-'));
  await fs.cp(repo.root, path.join(scratch, 'repo'), { recursive: true });
  // sh finds rg where the tool does (the bundled binary), every other program on the tool's own PATH.
  await fs.mkdir(path.join(scratch, 'bin'));
  await fs.symlink(programs.get('rg') as string, path.join(scratch, 'bin', 'rg'));
});
afterAll(async () => {
  useSandbox(TABLES_ONLY);
  await Promise.all([repo.cleanup(), fs.rm(scratch, { recursive: true, force: true })]);
});

/** The shell's answer: stdout as text (invalid UTF-8 decoded as the tool decodes it) and the exit status. */
function shell(line: string): { stdout: string; status: number | null } {
  const env = { ...CHILD_ENV, PATH: `${path.join(scratch, 'bin')}:${CHILD_ENV.PATH}` };
  // stdin /dev/null, as the tool's first command has (rg searches a readable stdin instead of the directory).
  const run = spawnSync('/bin/sh', ['-c', line], { cwd: path.join(scratch, 'repo'), env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 });
  return { stdout: run.stdout.toString('utf8'), status: run.status };
}

/** Status lines the tool puts after the output (none of the inputs has a line like these). */
const STATUS = /^(?:\[stderr\]|\[exit \d+\]|\[no matches \(exit 1\)\]|\(no output\)|\[no shell:|\[UNFILTERED|\[killed by|\[timed out|\[`)/;

/** The tool's answer read back: what it shows of stdout, the exit status, and whether a stage or the line was refused. */
async function tool(line: string): Promise<{ stdout: string; status: number | null; refused: boolean; content: string }> {
  const outcome = await createBashTool(programs).run({ command: line }, { root: repo.root, signal: new AbortController().signal, timeoutMs: 20_000 });
  const lines = outcome.content.split('\n');
  const end = lines.findIndex((l) => STATUS.test(l));
  const stdout = lines.slice(0, end < 0 ? lines.length : end).join('\n');
  const exit = /^\[exit (\d+)\]$/m.exec(outcome.content);
  const status = /^\[no matches \(exit 1\)\]$/m.test(outcome.content) ? 1 : exit === null ? null : Number(exit[1]);
  const refused = outcome.content.startsWith('Command refused') || outcome.content.includes('[UNFILTERED:');
  return { stdout, status, refused, content: outcome.content };
}

describe.each([
  ['tables', TABLES_ONLY, ''],
  ['kernel', KERNEL, WHY_SKIPPED],
] as const)('%s layer: every pipeline answers as sh -c does, or is refused', (layer, sandbox, why) => {
  it('has the rows the issue asks for', () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(200);
    expect(new Set(ROWS.map(([line]) => line)).size).toBe(ROWS.length);
  });

  it.skipIf(sandbox === null).each(ROWS)(`%s → %s${why}`, async (line, expected) => {
    useSandbox(sandbox as Sandbox);
    const got = await tool(line);
    useSandbox(TABLES_ONLY);
    if (expected === 'refused') {
      expect(got.refused, got.content).toBe(true);
      return;
    }
    const want = shell(line);
    expect(got.refused, got.content).toBe(false);
    // The tool shows stdout without its one final newline; `| od -c` rows show the bytes themselves.
    expect(got.stdout, got.content).toBe(want.stdout.replace(/\n$/, ''));
    expect(got.status, got.content).toBe(want.status);
  });
});
