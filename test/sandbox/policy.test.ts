import { existsSync, promises as fsPromises } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkCommand, MAX_EXPANDED_ARG_BYTES, MAX_EXPANDED_ARGS } from '../../src/sandbox/policy.js';
import { resolvePrograms, WHITELIST, type Programs } from '../../src/sandbox/programs.js';
import { FIND_EXPRESSION, FIND_OPTIONS, FIND_PRIMARIES, PROGRAM_POLICIES } from '../../src/sandbox/policy/tables.js';
import { ALLOWED, OUTSIDE_PAIRS, REFUSED } from './policy-cases.js';
import { installedHere } from '../support/installed.js';
import { useRepo } from '../support/temp-repo.js';
import { buildHostileRepo, type HostileRepo } from './sandbox-fixture.js';

let repo: HostileRepo;
let installed: Programs;

/**
 * Verdicts never depend on what this machine has installed: checkCommand starts nothing, so every whitelisted
 * program is given a path here, and "not installed" is its own tested case below.
 */
const programs: Programs = new Map(WHITELIST.map((name) => [name, `/usr/bin/${name}`]));

beforeAll(async () => {
  repo = await buildHostileRepo();
  installed = await resolvePrograms();
});
afterAll(async () => repo.cleanup());

/** `{ROOT}` in a row stands for the fixture's real root, so absolute and sibling-prefix paths can be written down. */
const check = (command: string) => checkCommand(command.replaceAll('{ROOT}', repo.root), { root: repo.root, programs });

describe('resolvePrograms', () => {
  it('finds exactly the whitelisted programs this machine has, in /usr/bin or /bin, and rg from @vscode/ripgrep', () => {
    const present = WHITELIST.filter((name) => name === 'rg' || installedHere(name));
    expect([...installed.keys()]).toEqual(present);
    for (const [name, file] of installed) {
      if (name === 'rg') expect(file).toMatch(/@vscode\/ripgrep.*\/bin\/rg$/);
      else expect(file).toMatch(new RegExp(`^/(usr/)?bin/${name}$`));
    }
  });

  it('looks in the trusted directories only, never in PATH: an empty set of directories finds nothing but rg', async () => {
    const none = await resolvePrograms(Promise.resolve('/opt/rg'), []);
    expect([...none.keys()]).toEqual(['rg']);
  });

  it('refuses a whitelisted program that is not installed, naming the alternatives', async () => {
    const without = new Map([...programs].filter(([name]) => name !== 'tree'));
    const verdict = await checkCommand('tree', { root: repo.root, programs: without });
    expect(verdict).toEqual({ ok: false, reason: `tree is not installed on this machine; use one of: ${WHITELIST.filter((name) => name !== 'tree').join(', ')}` });
  });

  // Defence in depth: a programs map is only where programs live; the tables alone say what may run.
  it.each([
    ['awk x', 'awk has no policy'],
    ['awk x | head', 'pipes (|) are not supported'],
  ])('refuses %j when the programs map names a program without a table (%s)', async (command, fragment) => {
    const verdict = await checkCommand(command, { root: repo.root, programs: new Map([['awk', '/usr/bin/awk']]) });
    if (verdict.ok) throw new Error(`allowed: ${JSON.stringify(verdict.args)}`);
    expect(verdict.reason).toContain(fragment);
  });
});

describe('allowed commands', () => {
  it.each(ALLOWED)('%j is allowed', async (command, args) => {
    const verdict = await check(command);
    if (!verdict.ok) throw new Error(`refused: ${verdict.reason}`);
    expect(verdict.program).toBe(command.replace(/^["']?(\w)(?:'')?(\w+).*$/s, '$1$2'));
    expect(verdict.file).toBe(programs.get(verdict.program));
    if (args !== undefined) expect(verdict.args).toEqual(args.map((a) => a.replaceAll('{ROOT}', repo.root)));
  });
});

describe('refused commands', () => {
  it.each(REFUSED)('%j is refused (%s)', async (command, fragment) => {
    const verdict = await check(command);
    if (verdict.ok) throw new Error(`allowed: ${JSON.stringify(verdict.args)}`);
    expect(verdict.reason).toContain(fragment);
  });

  // A note belongs to a glob only; a refusal about a path ends with what is wrong with it.
  it.each([
    ['rg x nosuchfile', 'rg: no such file or directory: nosuchfile'],
    ['grep -f nosuch README.md', 'grep -f: no such file or directory: nosuch'],
    ['ls src/*.rs', 'ls: no such file or directory: src/*.rs (the glob matched nothing)'],
  ])('%j is refused with exactly: %s', async (command, reason) => {
    expect(await check(command)).toEqual({ ok: false, reason });
  });

  // The file is removed between confinement and the type check (a race no table row can time, so lstat fails once).
  it('refuses a path that vanishes after it was confined, rather than failing the call', async () => {
    const vanished = Object.assign(new Error('ENOENT: no such file or directory'), { code: 'ENOENT' });
    const lstat = vi.spyOn(fsPromises, 'lstat').mockRejectedValueOnce(vanished);
    try {
      expect(await check('cat README.md')).toEqual({ ok: false, reason: 'cat: README.md cannot be examined; check the path' });
    } finally {
      lstat.mockRestore();
    }
  });

  it('has the coverage the issue asks for', () => {
    expect(ALLOWED.length + REFUSED.length).toBeGreaterThanOrEqual(150);
  });
});

describe('refusals are no oracle for paths outside the root', () => {
  it.each(OUTSIDE_PAIRS)('%j with %j and with %j: the same refusal', async (command, existing, missing, outside, fragment) => {
    const reasons: string[] = [];
    for (const [value, exists] of [[existing, true], [missing, false]] as const) {
      const x = value.replaceAll('{ROOT}', repo.root);
      // The pair is only a test if the outside path really exists with one value and not with the other.
      expect(existsSync(path.resolve(repo.root, outside.replaceAll('{X}', x))), `${outside} with ${x}`).toBe(exists);
      const verdict = await check(command.replaceAll('{X}', x));
      if (verdict.ok) throw new Error(`allowed: ${JSON.stringify(verdict.args)}`);
      reasons.push(verdict.reason.replaceAll(x, '{X}'));
    }
    expect(reasons[0]).toContain(fragment);
    expect(reasons[1]).toBe(reasons[0]);
  });
});

/** Every deny rule of every table: program, the flag as written on a command line, and the reason it gives. */
function denyRules(): Array<[string, string, string]> {
  const rules: Array<[string, string, string]> = [];
  for (const [program, policy] of Object.entries(PROGRAM_POLICIES)) {
    if (policy === FIND_EXPRESSION) {
      for (const [option, rule] of Object.entries(FIND_OPTIONS)) if (rule.type === 'deny') rules.push(['find', option, rule.reason]);
      for (const [primary, rule] of Object.entries(FIND_PRIMARIES)) if (rule.arity === 'deny') rules.push(['find', primary, rule.reason]);
      continue;
    }
    for (const [ch, rule] of Object.entries(policy.short)) if (rule.type === 'deny') rules.push([program, `-${ch}`, rule.reason]);
    for (const [name, rule] of Object.entries(policy.long)) if (rule.type === 'deny') rules.push([program, `--${name}`, rule.reason]);
  }
  return rules;
}

/** Whether a command's words use `flag` (a long flag alone or with `=value`, a short one alone or in a cluster). */
function uses(command: string, flag: string): boolean {
  return command.split(/\s+/).some((word) => {
    const bare = word.replace(/['"]/g, '');
    if (flag.startsWith('--') || bare === flag) return bare === flag || bare.startsWith(`${flag}=`);
    return /^-[A-Za-z0-9.]+$/.test(bare) && !bare.startsWith('--') && bare.slice(1).includes(flag.slice(1));
  });
}

describe('every deny rule has a table row', () => {
  it.each(denyRules())('%s %s', async (program, flag, reason) => {
    const rows = REFUSED.filter(([command]) => command.replace(/['"]/g, '').startsWith(`${program} `) && uses(command, flag));
    expect(rows.map(([command]) => command), `no REFUSED row uses ${program} ${flag}`).not.toEqual([]);
    const verdicts = await Promise.all(rows.map(([command]) => check(command)));
    expect(verdicts.some((v) => !v.ok && v.reason.includes(reason)), `no row for ${program} ${flag} is refused for: ${reason}`).toBe(true);
  });
});

/**
 * `d/` holds MAX_EXPANDED_ARGS paths of 255 bytes, 256 bytes each with its NUL: exactly MAX_EXPANDED_ARG_BYTES, and
 * one 256-byte path beside them; `e/` holds one short path more than MAX_EXPANDED_ARGS.
 */
function limitFiles(): Record<string, string> {
  const files: Record<string, string> = { [`d/b${'x'.repeat(253)}`]: '' };
  for (let i = 0; i < MAX_EXPANDED_ARGS; i += 1) files[`d/a${String(i).padStart(4, '0')}${'x'.repeat(248)}`] = '';
  for (let i = 0; i <= MAX_EXPANDED_ARGS; i += 1) files[`e/${i}`] = '';
  return files;
}

describe('expansion limits and special files', () => {
  const limits = useRepo(limitFiles());
  let socket: net.Server;
  beforeAll(async () => {
    socket = net.createServer();
    await new Promise<void>((resolve) => socket.listen(path.join(limits.root, 'sock'), resolve));
  });
  afterAll(async () => new Promise<void>((resolve) => socket.close(() => resolve())));

  it('the files of d/ reach both limits exactly', () => {
    expect(MAX_EXPANDED_ARGS * 256).toBe(MAX_EXPANDED_ARG_BYTES);
  });

  it.each<[string, string | null]>([
    // Each glob stays under the glob's own match cap (1000); the limits are on all the arguments together.
    ['cat d/a0* d/a10*', null],
    // One byte over: 1023 paths of 255 bytes and one of 256, each with its NUL.
    ['cat d/b* d/a0* d/a10[01]* d/a102[012]*', 'cat: the arguments expand to more than 256 KiB of paths; search a directory instead'],
    ['cat e/? e/?? e/??? e/????', `cat: the arguments expand to more than ${MAX_EXPANDED_ARGS} paths; search a directory instead`],
    ['cat sock', 'sock is a socket; only regular files and directories can be read'],
  ])('%j → %s', async (command, refusal) => {
    const verdict = await checkCommand(command, { root: limits.root, programs });
    if (refusal !== null) return expect(verdict).toMatchObject({ ok: false, reason: expect.stringContaining(refusal) });
    if (!verdict.ok) throw new Error(`refused: ${verdict.reason}`);
    expect(verdict.args).toHaveLength(MAX_EXPANDED_ARGS);
  });
});
