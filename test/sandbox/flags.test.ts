import { describe, expect, it } from 'vitest';
import { parseFlags, type Parsed, type Role } from '../../src/sandbox/policy/flags.js';
import { lex } from '../../src/sandbox/policy/lexer.js';
import { lookup, PROGRAM_POLICIES, type ProgramPolicy } from '../../src/sandbox/policy/tables.js';

/** A command's flags parsed against its program's table, as checkCommand does before any path is looked at. */
function parse(command: string): Parsed {
  const lexed = lex(command);
  if (!lexed.ok) throw new Error(`the row does not lex: ${lexed.reason}`);
  const [head, ...words] = lexed.words;
  const policy = lookup<ProgramPolicy | string>(PROGRAM_POLICIES, head?.text ?? '');
  if (typeof policy !== 'object') throw new Error(`the row needs a program with a flag table: ${command}`);
  return parseFlags(head?.text ?? '', policy, words);
}

/**
 * A role as a row writes it: `flag`, `flag path=X` (a path attached to the flag, confined), `text for -n` (a flag's
 * separate value), `path` or `pattern` (an operand). Anything else, a hole included, shows as itself.
 */
function roleName(role: Role | undefined): string {
  if (role?.kind === 'flag') return role.attachedPath === undefined ? 'flag' : `flag path=${role.attachedPath}`;
  if (role?.kind === 'value') return `${role.value} for ${role.flag}`;
  if (role?.kind === 'operand') return role.value;
  return JSON.stringify(role) ?? 'hole';
}

describe('parseFlags: what each word is', () => {
  it.each<[string, string[]]>([
    ['ls', []],
    ['ls --all src', ['flag', 'path']],
    ['ls -la src', ['flag', 'path']],
    // --color's value is optional (GNU): only `--color=when`, so the next word is a path, not the value.
    ['ls --color src', ['flag', 'path']],
    ['cat -- -dash.txt', ['flag', 'path']],
    // An operand starting with + is a file name except to head and tail, whose obsolete +NUM is refused below.
    ['ls +1', ['path']],
    ['head a+1', ['path']],
    ['head +a+1', ['path']],
    ['tail my-f', ['path']],
    ['tail +foo', ['path']],
    ['head -20 README.md', ['flag', 'path']],
    ['head -n-5 README.md', ['flag', 'path']],
    ['grep -n needle README.md', ['flag', 'pattern', 'path']],
    ['grep -f=pats README.md', ['flag path==pats', 'path']],
    ['grep -d recurse needle', ['flag', 'text for -d', 'pattern']],
    ['rg -i', ['flag']],
    ['rg -m5 needle', ['flag', 'pattern']],
    ['rg -m 5 needle', ['flag', 'text for -m', 'pattern']],
    ['rg -f=pats src', ['flag path=pats', 'path']],
    ['rg -j 1 needle', ['flag', 'text for -j', 'pattern']],
    // tree: a value flag takes the next word even mid-cluster, and the cluster goes on.
    ['tree -La 2 src', ['flag', 'text for -L', 'path']],
  ])('%j: %j', (command, roles) => {
    const parsed = parse(command);
    if (!parsed.ok) throw new Error(`refused: ${parsed.reason}`);
    expect(Array.from(parsed.roles, roleName)).toEqual(roles);
    // One role per word and nothing else: a missing role would make policy.ts confine the word as a path.
    expect(Object.keys(parsed.roles)).toEqual(roles.map((_, i) => String(i)));
  });
});

describe('parseFlags: refusals', () => {
  it.each<[string, string | RegExp]>([
    ['ls --all=yes', 'ls --all takes no value; remove "=yes"'],
    ['ls -y', 'ls -y is not an allowed flag;'],
    ['ls -ly', 'ls -y (in -ly) is not an allowed flag;'],
    ['tail -x README.md', /allowed short flags: cnqvz$/],
    ['ls --=x', 'ls -- is not an allowed flag; check the spelling'],
    ['cat', 'cat would read standard input, which is not available; give it a file path'],
    ['grep -n needle', 'grep would read standard input, which is not available; give it a file or directory, or -r to search the repository'],
    ['grep -i', 'grep would read standard input'],
    ['grep -e needle', 'grep would read standard input'],
    ['grep -d read needle', 'grep would read standard input'],
    ['grep -d=recurse needle', 'grep -d =recurse is not accepted; -d accepts only: read, skip, recurse'],
    ['rg -j x5 needle', 'rg -j x5 is not accepted: it must be a number from 1 to 8'],
    ['head +5 README.md', 'head: the obsolete +5 form is not supported; use -n +5 (lines) or -c +5 (bytes)'],
    ['head -1-2 README.md', 'head -1-2 is not supported; use -n NUM (lines) or -c NUM (bytes)'],
    ['head -5F README.md', 'head -5F is not supported'],
    ['tail -5x README.md', 'tail -5x is not supported'],
    // -5F is not the obsolete first-word form (that ends in a lowercase f), but it still follows forever.
    ['tail -5F README.md', 'tail -5F is refused: it follows the file forever'],
    ['tail -n 5 -5f README.md', 'tail -5f is refused: it follows the file forever'],
    ['tree -Lo 2', 'tree -o (in -Lo) is refused: it writes files'],
    ['tree -LP', 'tree -L needs a value'],
  ])('%j is refused: %s', (command, fragment) => {
    const parsed = parse(command);
    if (parsed.ok) throw new Error(`allowed: ${JSON.stringify(Array.from(parsed.roles, roleName))}`);
    expect(parsed.reason).toMatch(fragment);
  });
});

describe('parseFlags: abbreviated long flags', () => {
  it.each<[string, string, string | null]>([
    ['ls --al', '--all or --almost-all', null],
    ['grep --colo=never needle README.md', '--color or --colour', null],
    // Some candidates refused and some not: the abbreviation is the problem, not one candidate's rule.
    ['rg --pr needle', '--pretty or --pre or --pre-glob', null],
    ['rg --fol needle', '--follow', 'follows symbolic links during traversal'],
  ])('%j names %s', (command, spelled, note) => {
    const parsed = parse(command);
    if (parsed.ok) throw new Error('allowed');
    expect(parsed.reason).toContain(`looks like an abbreviation of ${spelled}; abbreviated options are not accepted, spell them out`);
    if (note === null) expect(parsed.reason).toMatch(/spell them out$/);
    else expect(parsed.reason).toContain(`, and ${spelled} itself is refused: it ${note}`);
  });
});
