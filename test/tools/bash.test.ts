import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolvePrograms, WHITELIST, type ProgramName, type Programs } from '../../src/sandbox/programs.js';
import { createBashTool, MAX_MODEL_CHARS } from '../../src/tools/bash.js';
import type { Tool, ToolContext, ToolOutcome } from '../../src/tools/tool.js';
import type { CommandInput } from '../../src/tools/command.js';
import { splitCompound } from '../../src/tools/compound.js';
import { ALLOWED, REFUSED } from '../sandbox/policy-cases.js';
import { installedHere } from '../support/installed.js';
import { buildHostileRepo, OUTSIDE_SECRET, SIBLING_SECRET, snapshot, type HostileRepo } from '../sandbox/sandbox-fixture.js';

const CANARY = 'sk-canary-bash-3d9f81c7';
const BIG_FILE_BYTES = 50 * 1024 * 1024;

let hostile: HostileRepo;
let clean: string;
let programs: Programs;
let bash: Tool<CommandInput>;

beforeAll(async () => {
  [hostile, programs] = await Promise.all([buildHostileRepo({ bigFileBytes: BIG_FILE_BYTES }), resolvePrograms()]);
  bash = createBashTool(programs);
  clean = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-bash-clean-')));
  const files: Record<string, string> = {
    'src/a.ts': 'one\ntwo\n', 'src/b.ts': 'three\n', 'src/c.js': 'js\n', 'notes.md': 'visible notes\n',
    '.dotfile': 'dot content\n', 'many.txt': Array.from({ length: 5000 }, (_, i) => `line ${i + 1} of many`).join('\n') + '\n',
  };
  for (const [rel, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(clean, rel)), { recursive: true });
    await fs.writeFile(path.join(clean, rel), text);
  }
});
afterAll(async () => {
  await hostile.cleanup();
  await fs.rm(clean, { recursive: true, force: true });
});

function ctx(root: string, extra: Partial<ToolContext> = {}): ToolContext {
  return { root, signal: new AbortController().signal, timeoutMs: 60_000, ...extra };
}

async function run(command: string, root = hostile.root, extra: Partial<ToolContext> = {}): Promise<ToolOutcome> {
  const parsed = bash.parse({ command: command.replaceAll('{ROOT}', hostile.root) });
  if (!parsed.ok) throw new Error(parsed.error);
  return bash.run(parsed.value, ctx(root, extra));
}

describe('bash tool definition', () => {
  it('lists only installed programs and the rules', () => {
    const every = new Map(WHITELIST.map((name) => [name, `/usr/bin/${name}`]));
    expect(createBashTool(every).description).toContain(`${WHITELIST.join(', ')}.`);
    expect(bash.description).toMatch(/no shell/i);
    const withoutTree = createBashTool(new Map([...every].filter(([name]) => name !== 'tree')));
    expect(withoutTree.description).toContain(`${WHITELIST.filter((name) => name !== 'tree').join(', ')}.`);
    expect(withoutTree.description).not.toMatch(/\btree,/);
  });
});

describe('running commands', () => {
  it('returns matches with a line-count summary', async () => {
    const outcome = await run('rg -n needle src');
    expect(outcome.isError).toBe(false);
    expect(outcome.content).toContain('src/a.ts:1:export const a = "needle";');
    expect(outcome.summary).toBe('3 lines');
    expect(outcome.content).toMatch(/\[exit 0\]$/);
  });

  it('treats rg and grep exit 1 as "no matches", not an error', async () => {
    for (const command of ['rg zzznotthere', 'grep -r zzznotthere src']) {
      const outcome = await run(command);
      expect(outcome).toMatchObject({ isError: false, summary: 'no matches' });
      expect(outcome.content).toContain('no matches');
    }
  });

  it('reports other failures as errors with stderr labelled', async () => {
    const outcome = await run("rg '(' src");
    expect(outcome.isError).toBe(true);
    expect(outcome.summary).toBe('exit 2');
    expect(outcome.content).toMatch(/^\[stderr\]\n.*regex parse error/s);
    expect(outcome.content).toMatch(/\[exit 2\]$/);
  });

  it('refuses without starting a process, and says why', async () => {
    const outcome = await run('rg --pre=bin/rg needle');
    expect(outcome.isError).toBe(true);
    expect(outcome.summary).toBe('denied: rg --pre is refused: it runs another program, which the sandbox never allows');
    expect(outcome.content).toMatch(/^Command refused: /);
    await expect(fs.access(hostile.marker)).rejects.toThrow();
  });

  it('keeps head and tail of long output with an omission marker and a hint', async () => {
    const outcome = await run('cat many.txt', clean);
    expect(outcome.isError).toBe(false);
    expect(outcome.content.length).toBeLessThanOrEqual(MAX_MODEL_CHARS);
    expect(outcome.content).toMatch(/^line 1 of many\n/);
    expect(outcome.content).toContain('line 5000 of many\n');
    expect(outcome.content).toMatch(/\[… \d+ lines omitted …\]/);
    expect(outcome.content).toContain('narrow the search');
    expect(outcome.summary).toBe('5000 lines');
  });

  it('stops a command whose output passes the hard cap', async () => {
    const outcome = await run('cat big.txt');
    expect(outcome.content.length).toBeLessThanOrEqual(MAX_MODEL_CHARS);
    expect(outcome.content).toContain('was stopped');
    expect(outcome.summary).toMatch(/lines \(stopped at 10 MB\)$/);
  });

  it('times out with a hint to narrow the search', async () => {
    const outcome = await run('grep -c -a needle big.txt big.txt big.txt big.txt', hostile.root, { timeoutMs: 1 });
    expect(outcome).toMatchObject({ isError: true, summary: 'timed out after 0.001s' });
    expect(outcome.content).toContain('narrow the search (a path, -g glob, --max-count)');
  });

  it('reports cancellation', async () => {
    const controller = new AbortController();
    controller.abort();
    const outcome = await run('rg needle', hostile.root, { signal: controller.signal });
    expect(outcome).toMatchObject({ isError: true, summary: 'cancelled' });
  });

  it('never runs a planted bin/rg, even with the repository first on the inherited PATH', async () => {
    const saved = process.env.PATH;
    process.env.PATH = `${path.join(hostile.root, 'bin')}:${saved ?? ''}`;
    try {
      const outcome = await run('rg -n needle README.md');
      expect(outcome.content).toContain('2:needle here');
      expect(outcome.content).not.toContain('PLANTED\n[exit');
    } finally {
      process.env.PATH = saved;
    }
    await expect(fs.access(hostile.marker)).rejects.toThrow();
  });

  it('expands globs inside the root, sorted, without dotfiles unless asked', async () => {
    const wc = await run('wc -l src/*.ts', clean);
    expect(wc.content).toMatch(/2 src\/a\.ts\n\s*1 src\/b\.ts\n\s*3 total/);
    const all = await run('cat *', clean);
    expect(all.content).toContain('visible notes');
    expect(all.content).not.toContain('dot content');
    const dots = await run('cat .*', clean);
    expect(dots.content).toContain('dot content');
    // In the hostile repository .evil links to /etc/passwd: that match is skipped with a note, the rest is read.
    const hostileDots = await run('cat .*');
    expect(hostileDots.isError).toBe(false);
    expect(hostileDots.content).toContain('needle');
    expect(hostileDots.content).toContain('[skipped 1 match(es) of .* that cannot be read here');
    expect(hostileDots.content).toContain('.evil');
    expect(hostileDots.content).not.toContain('root:');
  });
});

describe('file names and links that attack the command line', () => {
  let base: string;
  let root: string;
  beforeAll(async () => {
    base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-bash-names-')));
    root = path.join(base, 'repo');
    await fs.mkdir(root);
    // rg's --pre runs a program on every file it searches; `touch` would change every file's times.
    for (const name of ['--pre=touch', '-e', '+5f', 'a.txt', '!', '(']) await fs.writeFile(path.join(root, name), 'x marks\n');
    await fs.writeFile(path.join(base, 'outside.txt'), `${OUTSIDE_SECRET}\n`);
    await fs.link(path.join(base, 'outside.txt'), path.join(root, 'hardlink.txt'));
  });
  afterAll(async () => {
    await fs.rm(base, { recursive: true, force: true });
  });

  it.each([
    ['rg -l x *', ['./!', './(', './+5f', './--pre=touch', './-e', 'a.txt']],
    ['find * -maxdepth 0', ['./!', './(', './+5f', './--pre=touch', './-e', 'a.txt']],
    ['wc -l -- --pre=touch', ['./--pre=touch']],
  ])('%s: every expanded or named file stays a file name, nothing runs, nothing changes', async (command, names) => {
    const before = await snapshot(root);
    const out = await run(command, root);
    expect(out.isError, out.content).toBe(false);
    for (const name of names) expect(out.content).toContain(name);
    expect(await snapshot(root)).toEqual(before);
  });

  it('a glob whose matches are too long for one exec (deep, long paths) is refused with a reason, not a crash', async () => {
    const deep = Array.from({ length: 18 }, (_, i) => `${'d'.repeat(200)}${i}`).join('/');
    await fs.mkdir(path.join(root, deep), { recursive: true });
    try {
      for (let i = 0; i < 400; i++) await fs.writeFile(path.join(root, deep, `f${'x'.repeat(200)}${i}`), 'x\n');
      const out = await run(`wc -l ${deep}/*`, root);
      expect(out).toMatchObject({ isError: true, content: expect.stringContaining('the arguments expand to more than 256 KiB of paths; search a directory instead') });
      expect(out.infrastructure).toBeUndefined();
    } finally {
      await fs.rm(path.join(root, 'd'.repeat(200) + '0'), { recursive: true, force: true });
    }
  });

  it('refuses a named file with a second hard link, and skips it as a glob match, without reading it', async () => {
    const named = await run('cat hardlink.txt', root);
    expect(named).toMatchObject({ isError: true, content: expect.stringContaining('hardlink.txt has 2 hard links') });
    const globbed = await run('cat *', root);
    expect(globbed.isError).toBe(false);
    expect(globbed.content).toContain('[skipped 1 match(es) of * that cannot be read here');
    for (const out of [named, globbed]) expect(out.content).not.toContain(OUTSIDE_SECRET);
  });
});

describe('a glob in a directory where one symlink leads out', () => {
  let base: string;
  beforeAll(async () => {
    base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-bash-one-out-')));
    await fs.writeFile(path.join(base, 'outside.txt'), `${OUTSIDE_SECRET}\n`);
    for (const [dir, target] of [['existing', '../outside.txt'], ['missing', '../nothere.txt'], ['absolute', '/etc/passwd']]) {
      await fs.mkdir(path.join(base, dir as string));
      await fs.writeFile(path.join(base, dir as string, 'a.txt'), 'one\n');
      await fs.writeFile(path.join(base, dir as string, 'b.txt'), 'two\nthree\n');
      await fs.symlink(target as string, path.join(base, dir as string, 'out'));
    }
  });
  afterAll(async () => {
    await fs.rm(base, { recursive: true, force: true });
  });

  // The same output whether the link's target exists or not: the outside match is skipped with a note, the rest counted.
  it.each([['wc -l *', 'existing'], ['wc -l *', 'missing'], ['wc -l *', 'absolute'], ['cat *', 'existing'], ['cat *', 'missing']])(
    '%s where out leads to a %s file outside: skipped with a note',
    async (command, dir) => {
      const out = await run(command, path.join(base, dir));
      expect(out.isError, out.content).toBe(false);
      expect(out.content).toContain('[skipped 1 match(es) of * that cannot be read here (links out of the repository, special or hard-linked files): out]');
      if (command.startsWith('wc')) expect(out.content).toMatch(/^\s*1 a\.txt\n\s*2 b\.txt\n\s*3 total\n/);
      else expect(out.content).toMatch(/^one\ntwo\nthree\n/);
      expect(out.content).not.toContain(OUTSIDE_SECRET);
      expect(out.content).not.toContain('root:');
    },
  );
  it('one note per glob, each on its own line after the status', async () => {
    const note = '[skipped 1 match(es) of * that cannot be read here (links out of the repository, special or hard-linked files): out]';
    const twice = await run('cat * *', path.join(base, 'existing'));
    expect(twice.content.endsWith(`[exit 0]\n${note}\n${note}`)).toBe(true);
  });
});

/** The whitelisted program a table row runs, when its first word names one (quotes removed). */
function programOf(command: string): ProgramName | null {
  const head = command.trim().split(/\s+/)[0]?.replace(/['"]/g, '') ?? '';
  return (WHITELIST as readonly string[]).includes(head) ? (head as ProgramName) : null;
}

/** Programs the README calls optional (Debian packages tree, file, vim-common, bsdextrautils, binutils, jq); .ci/run installs them. */
const OPTIONAL: readonly ProgramName[] = ['tree', 'file', 'xxd', 'hexdump', 'strings', 'jq'];
const installed = (name: ProgramName): boolean => installedHere(name);
const core = (command: string): boolean => !OPTIONAL.includes(programOf(command) as ProgramName);

describe('against the hostile repository', () => {
  it('runs every allowed command of the policy table, leaks nothing and leaves every byte as it was', async () => {
    await runAllowed(ALLOWED.filter(([command]) => core(command)).map(([command]) => command));
  });

  it('refuses every refused command of the policy table as an error outcome', async () => {
    await runRefused(REFUSED.filter(([command]) => core(command)));
  });

  // The rows of an optional program run where it is installed, and show as skipped, with the reason, where not.
  describe.each(OPTIONAL.map((name) => [name]))('rows that need %s', (name) => {
    it.skipIf(!installed(name))(`run as the table says (skipped when ${name} is not installed; .ci/run installs it)`, async () => {
      await runAllowed(ALLOWED.filter(([command]) => programOf(command) === name).map(([command]) => command));
      await runRefused(REFUSED.filter(([command]) => programOf(command) === name));
    });
  });
});

async function runAllowed(commands: readonly string[]): Promise<void> {
  expect(commands.length).toBeGreaterThan(0);
  process.env.ANTHROPIC_API_KEY = CANARY;
  const before = await snapshot(hostile.base);
  try {
    const outputs: string[] = [];
    for (const command of commands) {
      const outcome = await run(command);
      expect(outcome.summary, command).not.toMatch(/^denied|timed out|cancelled/);
      outputs.push(outcome.content);
    }
    for (const command of ['rg -uuu sk-canary', 'grep -r sk-canary .', 'rg "$ANTHROPIC_API_KEY"', 'cat /proc/self/environ',
      'rg -a ANTHROPIC /proc/self/environ', 'cat links/chain1', 'rg -uuu SECRET', 'grep -r SECRET .', 'find . -name secret.txt']) {
      outputs.push((await run(command)).content);
    }
    for (const content of outputs) {
      expect(content).not.toContain(CANARY);
      expect(content).not.toContain(OUTSIDE_SECRET);
      expect(content).not.toContain(SIBLING_SECRET);
    }
  } finally {
    delete process.env.ANTHROPIC_API_KEY;
  }
  expect(await snapshot(hostile.base)).toEqual(before);
  await expect(fs.access(hostile.marker)).rejects.toThrow();
}

async function runRefused(rows: ReadonlyArray<readonly [string, string]>): Promise<void> {
  expect(rows.length).toBeGreaterThan(0);
  for (const [command, fragment] of rows) {
    // Pipelines, chains and stderr redirects are answered, not refused, by the tool (pipeline.test.ts); the policy still refuses them.
    const split = splitCompound(command);
    if (split.kind !== 'single' || split.dropped.length > 0) continue;
    const parsed = bash.parse({ command: command.replaceAll('{ROOT}', hostile.root) });
    if (!parsed.ok) {
      expect(parsed.error, command).toContain(fragment);
      continue;
    }
    const outcome = await bash.run(parsed.value, ctx(hostile.root));
    expect(outcome.isError, command).toBe(true);
    expect(outcome.summary, command).toMatch(/^denied: /);
    expect(outcome.content, command).toContain(fragment);
  }
}
