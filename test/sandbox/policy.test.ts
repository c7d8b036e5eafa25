import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCommand } from '../../src/sandbox/policy.js';
import { resolvePrograms, WHITELIST, type Programs } from '../../src/sandbox/programs.js';
import { FIND_EXPRESSION, FIND_OPTIONS, FIND_PRIMARIES, PROGRAM_POLICIES } from '../../src/sandbox/policy/tables.js';
import { ALLOWED, OUTSIDE_PAIRS, REFUSED } from './policy-cases.js';
import { installedHere } from '../support/installed.js';
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
    expect(verdict).toMatchObject({ ok: false, reason: expect.stringContaining('tree is not installed') });
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
