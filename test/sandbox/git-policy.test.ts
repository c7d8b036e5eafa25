import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkGitCommand } from '../../src/sandbox/git-policy.js';
import { GIT_SUBCOMMANDS } from '../../src/sandbox/policy/git-values.js';
import { GIT_COMMON_DENY, GIT_GLOBAL_DENY, GIT_POLICIES, GIT_REFUSED_SUBCOMMANDS } from '../../src/sandbox/policy/git-tables.js';
import { makeRepo } from '../support/temp-repo.js';
import { GIT_ALLOWED, GIT_KERNEL_ALLOWED, GIT_KERNEL_REFUSED, GIT_REFUSED } from './git-policy-cases.js';

let repo: Awaited<ReturnType<typeof makeRepo>>;
beforeAll(async () => {
  repo = await makeRepo({ 'src/a.ts': 'export const a = "needle";\n', 'README.md': '# r\n' });
});
afterAll(async () => repo.cleanup());

const check = (command: string) => checkGitCommand(command, repo.root);
const checkKernel = (command: string) => checkGitCommand(command, repo.root, 'kernel');

describe('under the kernel sandbox the work tree, the index and remote -v are read too', () => {
  it.each(GIT_KERNEL_ALLOWED)('%j → %j (and refused under the tables alone)', async (command, args) => {
    const verdict = await checkKernel(command);
    if (!verdict.ok) throw new Error(`refused: ${verdict.reason}`);
    expect(verdict.args).toEqual(args);
    const tables = await check(command);
    if (tables.ok) throw new Error(`allowed without the kernel sandbox: ${JSON.stringify(tables.args)}`);
    expect(tables.reason).toMatch(/work tree|the index|kernel sandbox/);
  });

  it.each(GIT_KERNEL_REFUSED)('%j is refused (%s)', async (command, fragment) => {
    const verdict = await checkKernel(command);
    if (verdict.ok) throw new Error(`allowed: ${JSON.stringify(verdict.args)}`);
    expect(verdict.reason).toContain(fragment);
  });

  it.each(GIT_ALLOWED)('%j is accepted under the kernel sandbox as well', async (command) => {
    expect((await checkKernel(command)).ok).toBe(true);
  });
});

describe('git commands the tool accepts', () => {
  it.each(GIT_ALLOWED)('%j → %j', async (command, args) => {
    const verdict = await check(command);
    if (!verdict.ok) throw new Error(`refused: ${verdict.reason}`);
    expect(verdict.args).toEqual(args);
  });

  it('forces --no-textconv --no-ext-diff on every subcommand that can produce a diff, whatever the model wrote', async () => {
    for (const command of ['log -p', 'show HEAD', 'diff HEAD HEAD', 'log --stat', 'show --no-textconv HEAD']) {
      const verdict = await check(command);
      if (!verdict.ok) throw new Error(verdict.reason);
      expect(verdict.args.slice(0, 5)).toEqual(expect.arrayContaining(['--no-textconv', '--no-ext-diff', '-O/dev/null']));
    }
  });
});

describe('git commands the tool refuses', () => {
  it.each(GIT_REFUSED)('%j is refused (%s)', async (command, fragment) => {
    const verdict = await check(command);
    if (verdict.ok) throw new Error(`allowed: ${JSON.stringify(verdict.args)}`);
    expect(verdict.reason).toContain(fragment);
    expect(verdict.reason).not.toMatch(/\n/);
  });
});

/** Every deny rule of the git tables, as [table, the word as written, the reason it must give]. */
function denyRules(): Array<[string, string, string]> {
  const rules: Array<[string, string, string]> = [];
  for (const [name, why] of Object.entries(GIT_REFUSED_SUBCOMMANDS)) rules.push(['subcommand', name, `git ${name} is refused: it ${why}`]);
  for (const [option, why] of Object.entries(GIT_GLOBAL_DENY)) rules.push(['global', option, `git ${option} is refused: it ${why}`]);
  for (const [flag, rule] of Object.entries(GIT_COMMON_DENY)) if (rule.type === 'deny') rules.push(['common', `--${flag}`, rule.reason]);
  for (const [sub, policy] of Object.entries(GIT_POLICIES)) {
    for (const [ch, rule] of Object.entries(policy.short)) if (rule.type === 'deny') rules.push([sub, `-${ch}`, `git ${sub} -${ch} is refused: it ${rule.reason}`]);
    for (const [flag, rule] of Object.entries(policy.long)) if (rule.type === 'deny') rules.push([sub, `--${flag}`, `git ${sub} --${flag} is refused: it ${rule.reason}`]);
  }
  return rules;
}

/** Whether a refused row exercises `word` in `table` (the subcommand, or a flag alone or with a value). */
function exercises(command: string, table: string, word: string): boolean {
  const words = command.replace(/^git /, '').split(/\s+/);
  if (table === 'subcommand' || table === 'global') return words[0] === word || words[0]?.startsWith(`${word}=`) === true;
  const sub = table === 'common' ? words[0] : table;
  return words[0] === sub && words.slice(1).some((w) => w === word || w.startsWith(`${word}=`) || (!word.startsWith('--') && w.startsWith(word)));
}

describe('every deny rule of the git tables has a refused row that is refused for that rule', () => {
  it.each(denyRules())('%s %s', async (table, word, reason) => {
    const rows = [...GIT_REFUSED, ...GIT_KERNEL_REFUSED].filter(([command]) => exercises(command, table, word));
    expect(rows.map(([c]) => c), `no GIT_REFUSED row uses ${table} ${word}`).not.toEqual([]);
    const verdicts = await Promise.all(rows.flatMap(([command]) => [check(command), checkKernel(command)]));
    expect(verdicts.some((v) => !v.ok && v.reason.includes(reason)), `no row for ${table} ${word} is refused for: ${reason}`).toBe(true);
  });

  it('every refusal says why and what to do instead (a reason, then a suggestion after "; ")', () => {
    const bare = denyRules().filter(([, , reason]) => !reason.includes('; '));
    expect(bare.map(([table, word]) => `${table} ${word}`)).toEqual([]);
  });

  it('the tool description lists exactly the subcommands of the tables (GIT_SUBCOMMANDS is their start-up copy)', () => {
    expect([...GIT_SUBCOMMANDS]).toEqual(Object.keys(GIT_POLICIES));
  });

  it('the table is the size the closing note gives', () => {
    const flags = Object.values(GIT_POLICIES).reduce((n, p) => n + Object.keys(p.short).length + Object.keys(p.long).length, 0);
    expect({ subcommands: Object.keys(GIT_POLICIES).length, denyRules: denyRules().length, refusedRows: GIT_REFUSED.length, allowedRows: GIT_ALLOWED.length, flags }).toMatchSnapshot();
  });
});
