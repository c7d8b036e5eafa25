import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCommand } from '../../src/sandbox/policy.js';
import { resolvePrograms, WHITELIST, type Programs } from '../../src/sandbox/programs.js';
import { ALLOWED, REFUSED } from './policy-cases.js';
import { buildHostileRepo, type HostileRepo } from './sandbox-fixture.js';

let repo: HostileRepo;
let programs: Programs;

beforeAll(async () => {
  repo = await buildHostileRepo();
  programs = await resolvePrograms();
});
afterAll(async () => repo.cleanup());

/** `{ROOT}` in a row stands for the fixture's real root, so absolute and sibling-prefix paths can be written down. */
const check = (command: string) => checkCommand(command.replaceAll('{ROOT}', repo.root), { root: repo.root, programs });

describe('resolvePrograms', () => {
  it('finds every whitelisted program (CI installs tree and file; a missing one must fail here, not skip)', () => {
    expect([...programs.keys()]).toEqual([...WHITELIST]);
    for (const [name, file] of programs) {
      if (name === 'rg') expect(file).toMatch(/@vscode\/ripgrep.*\/bin\/rg$/);
      else expect(file).toMatch(new RegExp(`^/(usr/)?bin/${name}$`));
    }
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
