import { confine } from './paths.js';
import { lex } from './policy/lexer.js';
import {
  GIT_COMMON_DENY,
  GIT_GLOBAL_DENY,
  GIT_POLICIES,
  GIT_REFUSED_SUBCOMMANDS,
  type GitFlagRule,
  type GitPolicy,
} from './policy/git-tables.js';
import { checkHistoryPath, checkRevision, checkValue } from './policy/git-values.js';
import { KERNEL_RELAXED } from './policy/git-forms.js';
import { confinedPaths, confinedPolicy, confineRevisions, confinedVerbReason } from './policy/git-confine.js';
import { lookup } from './policy/tables.js';
import type { SandboxKind } from './kernel.js';

/** The outcome of checking a git command: the exact argv after `git`, or a refusal written for the model. */
type GitVerdict = { ok: true; subcommand: string; args: string[] } | { ok: false; reason: string };

type Subcommand = keyof typeof GIT_POLICIES;
type Step<T> = { ok: true; value: T } | { ok: false; reason: string };

interface Parsed {
  flags: string[];
  given: Set<string>;
  /** Operands before `--` (revisions, or paths that exist) and after it (paths). */
  before: string[];
  after: string[];
}

/**
 * Decides whether a model-supplied git command may run, and the argv it becomes. The command is split by the bash
 * tool's lexer (quote removal only); a leading `git` is optional. Default deny: the subcommand must be in
 * GIT_POLICIES and every flag in its table. The argv is rebuilt, not passed through: the forced flags come first,
 * every flag value is attached (`--author=x`, `-n5`) so git can never read a value as an operand, and revisions and
 * paths are separated by an explicit `--`, which makes git treat everything before it strictly as revisions.
 * `confined`: the root is a subdirectory of its repository, and the command is confined to it (policy/git-confine.ts).
 */
export async function checkGitCommand(
  command: string,
  root: string,
  sandbox: SandboxKind = 'tables',
  confined = false,
): Promise<GitVerdict> {
  const lexed = lex(command);
  if (!lexed.ok) return { ok: false, reason: lexed.reason };
  const globbed = lexed.words.find((word) => word.glob.some(Boolean));
  if (globbed !== undefined) {
    return {
      ok: false,
      reason: `${globbed.text} contains unquoted glob characters, which a shell would expand; put it in single quotes: '${globbed.text}'`,
    };
  }
  const words = lexed.words.map((word) => word.text);
  if (words[0] === 'git') words.shift();
  const [head, ...rest] = words;
  if (head === undefined) return { ok: false, reason: 'give a subcommand and its arguments, e.g. log --oneline -n 10 -- src/app.ts' };
  if (head.startsWith('-')) return { ok: false, reason: globalReason(head) };
  const found = lookup<GitPolicy>(GIT_POLICIES, head);
  if (found === undefined) return { ok: false, reason: subcommandReason(head) };
  if (found.kernelOnly === true && sandbox !== 'kernel') return { ok: false, reason: kernelOnlyReason(head) };
  const widened = sandbox === 'kernel' ? relaxed(head, found) : found;
  const policy = confined ? confinedPolicy(head, widened) : widened;
  const implied =
    policy.defaultVerb !== undefined && !['expire', 'delete', 'exists'].includes(rest[0] ?? '') && !policy.verbs?.includes(rest[0] ?? '');
  const verb = policy.verbs === undefined ? [] : implied ? [policy.defaultVerb] : [rest.shift()];
  if (policy.verbs !== undefined && !policy.verbs.includes(verb[0] ?? '')) {
    const shown = verb[0] === undefined ? head : `${head} ${verb[0]}`;
    return { ok: false, reason: `git ${shown} is refused: it ${policy.verbReason ?? 'is not a listing'}` };
  }
  const verbRefused = confined ? confinedVerbReason(head, verb[0]) : null;
  if (verbRefused !== null) return { ok: false, reason: verbRefused };
  const parsed = parseArgs(head, policy, rest);
  if (!parsed.ok) return parsed;
  const operands = await arrange(head as Subcommand, policy, parsed.value, root, confined);
  if (!operands.ok) return operands;
  const forced = policy.forcedUnless !== undefined && parsed.value.given.has(policy.forcedUnless) ? [] : policy.forced;
  return { ok: true, subcommand: head, args: [head, ...(verb as string[]), ...forced, ...parsed.value.flags, ...operands.value] };
}

/** Under the kernel sandbox diff, blame and grep may read the work tree and the index (KERNEL_RELAXED). */
function relaxed(sub: string, policy: GitPolicy): GitPolicy {
  const extra = lookup(KERNEL_RELAXED, sub);
  if (extra === undefined) return policy;
  return {
    ...policy,
    minRevisions: extra.minRevisions,
    long: { ...policy.long, ...extra.long },
    forced: [...policy.forced, ...(extra.forced ?? [])],
  };
}

function kernelOnlyReason(sub: string): string {
  const why = lookup(GIT_REFUSED_SUBCOMMANDS, sub);
  if (why !== undefined) return `git ${sub} is refused: it ${why}`;
  return `git ${sub} is refused: it reads the configuration, which may include files outside the repository; it runs only under the kernel sandbox`;
}

function globalReason(option: string): string {
  const name = option.includes('=') ? option.slice(0, option.indexOf('=')) : option;
  const why = lookup(GIT_GLOBAL_DENY, name);
  if (why !== undefined) return `git ${name} is refused: it ${why}; give the subcommand first, e.g. log --oneline -n 10`;
  return `git ${name}: options before the subcommand are not accepted; give the subcommand first, e.g. log --oneline -n 10`;
}

function subcommandReason(name: string): string {
  const allowed = Object.keys(GIT_POLICIES).join(', ');
  const why = lookup(GIT_REFUSED_SUBCOMMANDS, name);
  if (why !== undefined) return `git ${name} is refused: it ${why}. Allowed subcommands: ${allowed}`;
  return `git ${name} is not an allowed subcommand; allowed: ${allowed} (history only, never the work tree, index or network)`;
}

/** Splits flags from operands by the subcommand's table; flags come back rebuilt with their values attached. */
function parseArgs(sub: string, policy: GitPolicy, words: readonly string[]): Step<Parsed> {
  const parsed: Parsed = { flags: [], given: new Set(), before: [], after: [] };
  let endOfOptions = false;
  for (let i = 0; i < words.length; i += 1) {
    const text = words[i] as string;
    if (endOfOptions) parsed.after.push(text);
    else if (text === '--') endOfOptions = true;
    else if (text === '-') return refuse(`git ${sub} -: reading standard input is not supported; give the revisions and paths as arguments`);
    else if (!text.startsWith('-')) parsed.before.push(text);
    else if (isBoolCluster(policy, text)) {
      for (const ch of text.slice(1)) {
        parsed.flags.push(`-${ch}`);
        parsed.given.add(`-${ch}`);
      }
    } else {
      const step = text.startsWith('--') ? longFlag(sub, policy, words, i) : shortFlag(sub, policy, words, i);
      if (!step.ok) return step;
      parsed.flags.push(step.value.flag);
      parsed.given.add(step.value.name);
      i = step.value.next;
    }
  }
  return { ok: true, value: parsed };
}

/** `-sn` where the subcommand uses parse-options (which splits clusters) and every letter is a switch. */
function isBoolCluster(policy: GitPolicy, text: string): boolean {
  if (policy.clusters !== true || !/^-[A-Za-z]{2,}$/.test(text)) return false;
  return [...text.slice(1)].every((ch) => lookup(policy.short, ch)?.type === 'bool');
}

type Flag = Step<{ flag: string; name: string; next: number }>;

function longFlag(sub: string, policy: GitPolicy, words: readonly string[], i: number): Flag {
  const text = words[i] as string;
  const eq = text.indexOf('=');
  // The value written as `--name=value`, if any, like shortFlag's attached value.
  const attached = eq === -1 ? undefined : text.slice(eq + 1);
  const name = attached === undefined ? text.slice(2) : text.slice(2, eq);
  const flag = `--${name}`;
  const rule = lookup(policy.long, name) ?? lookup(GIT_COMMON_DENY, name);
  if (rule === undefined) return refuse(unknownLong(sub, policy, name));
  if (rule.type === 'deny') return refuse(`git ${sub} ${flag} is refused: it ${rule.reason}`);
  if (rule.type === 'bool') {
    if (attached !== undefined) return refuse(`git ${sub} ${flag} takes no value; remove "=${attached}"`);
    return { ok: true, value: { flag, name: flag, next: i } };
  }
  if (attached === undefined && rule.attachedOnly === true) return { ok: true, value: { flag, name: flag, next: i } };
  const value = attached ?? words[i + 1];
  if (value === undefined) return refuse(`git ${sub} ${flag} needs a value`);
  const bad = valueReason(sub, flag, rule, value);
  if (bad !== null) return refuse(bad);
  return { ok: true, value: { flag: `${flag}=${value}`, name: flag, next: attached === undefined ? i + 1 : i } };
}

function shortFlag(sub: string, policy: GitPolicy, words: readonly string[], i: number): Flag {
  const text = words[i] as string;
  if (policy.countShorthand === true && /^-\d{1,9}$/.test(text)) {
    return { ok: true, value: { flag: `-n${text.slice(1)}`, name: '-n', next: i } };
  }
  const ch = text.slice(1, 2);
  const flag = `-${ch}`;
  const rule = lookup(policy.short, ch);
  if (rule === undefined) return refuse(`git ${sub} ${flag} is not an allowed flag; allowed short flags: ${shortList(policy)}`);
  if (rule.type === 'deny') return refuse(`git ${sub} ${flag} is refused: it ${rule.reason}`);
  const attached = text.slice(2);
  if (rule.type === 'bool') {
    // git's revision parser does not take clusters (`-ps`); asking for separate flags keeps one meaning per word.
    if (attached !== '') return refuse(`git ${sub} ${text}: give short flags separately (-p -s, not -ps)`);
    return { ok: true, value: { flag, name: flag, next: i } };
  }
  if (attached === '' && rule.attachedOnly === true) return { ok: true, value: { flag, name: flag, next: i } };
  const value = attached !== '' ? attached : words[i + 1];
  if (value === undefined) return refuse(`git ${sub} ${flag} needs a value`);
  const bad = valueReason(sub, flag, rule, value);
  if (bad !== null) return refuse(bad);
  return { ok: true, value: { flag: `${flag}${value}`, name: flag, next: attached !== '' ? i : i + 1 } };
}

function valueReason(sub: string, flag: string, rule: Extract<GitFlagRule, { type: 'value' }>, value: string): string | null {
  if (rule.choices !== undefined && !rule.choices.includes(value)) {
    return `git ${sub} ${flag} ${value} is not accepted; ${flag} accepts only: ${rule.choices.join(', ')}`;
  }
  const bad = checkValue(rule.value, value, flag);
  return bad === null ? null : `git ${sub} ${bad}`;
}

/**
 * Orders the operands as git must read them and checks each: revisions (index forms refused), paths (confined by
 * their text), the revision counts that keep a command off the work tree (`diff A B`, `blame REV`, `grep … REV`).
 */
async function arrange(sub: Subcommand, policy: GitPolicy, parsed: Parsed, root: string, confined: boolean): Promise<Step<string[]>> {
  const where: Where = { confined, given: parsed.given };
  const required = policy.requires;
  if (required !== undefined && !required.some((flag) => parsed.given.has(flag))) {
    return refuse(`git ${sub} needs ${required.join(' or ')} here (for example ${sub} ${required[0]} HEAD)`);
  }
  switch (policy.operands) {
    case 'patterns':
      if (parsed.after.length > 0) return refuse(`git ${sub} takes patterns, not paths after --; drop the --`);
      if (policy.createsWithoutList !== undefined && parsed.before.length > 0 && !parsed.given.has('-l') && !parsed.given.has('--list')) {
        return refuse(`git ${sub} ${parsed.before[0]} is refused: it ${policy.createsWithoutList}`);
      }
      return { ok: true, value: parsed.before };
    case 'none':
      if (parsed.before.length + parsed.after.length > 0) return refuse(`git ${sub} takes no arguments here`);
      return { ok: true, value: [] };
    case 'paths': {
      const paths = [...parsed.before, ...parsed.after];
      for (const p of paths) {
        const bad = checkHistoryPath(p);
        if (bad !== null) return refuse(`git ${sub}: ${bad}`);
      }
      return { ok: true, value: ['--', ...(confined ? confinedPaths(sub, paths, parsed.given) : paths)] };
    }
    case 'object':
      if (parsed.before.length !== 1 || parsed.after.length > 0) {
        return refuse(`git ${sub} takes exactly one object, e.g. ${sub} -p HEAD:src/app.ts`);
      }
      // Stryker disable next-line ArrayDeclaration: an object's argv has no paths (revisions() drops them), and any plain word passes the path check.
      return revisions(sub, policy, parsed.before, [], where);
    case 'revs':
      if (parsed.after.length > 0) return refuse(`git ${sub} takes revisions only, no paths after --`);
      // Stryker disable next-line ArrayDeclaration: a revs-only argv has no paths (revisions() drops them), and any plain word passes the path check.
      return revisions(sub, policy, parsed.before, [], where);
    case 'tree-paths': {
      const [tree, ...paths] = parsed.before;
      const checked = await revisions(sub, policy, tree === undefined ? [] : [tree], [...paths, ...parsed.after], where);
      // ls-tree takes no `--` between tree and paths; `--` first ends its options so none can pass for one.
      return checked.ok ? { ok: true, value: ['--', ...checked.value.filter((w) => w !== '--')] } : checked;
    }
    case 'pattern-revs-paths': {
      const patternGiven = parsed.given.has('-e');
      const pattern = patternGiven ? undefined : parsed.before[0];
      const others = patternGiven ? parsed.before : parsed.before.slice(1);
      if (!patternGiven && pattern === undefined) {
        return refuse(`git ${sub} needs a pattern and a revision, e.g. grep -n 'createServer' HEAD -- src`);
      }
      const split = await splitOperands(others, root);
      const checked = await revisions(sub, policy, split.revs, [...split.paths, ...parsed.after], where);
      return checked.ok && pattern !== undefined ? { ok: true, value: ['-e', pattern, ...checked.value] } : checked;
    }
    case 'revs-paths': {
      const split = await splitOperands(parsed.before, root);
      const revs = split.revs.length === 0 && policy.defaultRevision !== undefined ? [policy.defaultRevision] : split.revs;
      return revisions(sub, policy, revs, [...split.paths, ...parsed.after], where);
    }
  }
}

/**
 * Before `--`, an operand that names an existing file or directory inside the root is a path, as git would read it;
 * anything else is a revision (a path that exists only in history must follow `--`, which git asks for too).
 */
async function splitOperands(words: readonly string[], root: string): Promise<{ revs: string[]; paths: string[] }> {
  const revs: string[] = [];
  const paths: string[] = [];
  for (const word of words) {
    const asPath = checkHistoryPath(word) === null && !/[~^@:]|\.\./.test(word) ? await confine(root, word, { mustExist: true }) : null;
    if (asPath?.ok === true) paths.push(word);
    else revs.push(word);
  }
  return { revs, paths };
}

/** Whether the command is confined to a subdirectory root, and the flags given (for its default pathspec). */
interface Where {
  confined: boolean;
  given: ReadonlySet<string>;
}

/**
 * Checks revisions and paths, the revision count, and returns `revs -- paths`; in a subdirectory root each revision
 * and the paths are confined to it (git-confine.ts).
 */
function revisions(sub: Subcommand, policy: GitPolicy, revs: readonly string[], paths: readonly string[], where: Where): Step<string[]> {
  for (const rev of revs) {
    const bad = checkRevision(rev);
    if (bad !== null) return refuse(`git ${sub}: ${bad}`);
  }
  for (const p of paths) {
    const bad = checkHistoryPath(p);
    if (bad !== null) return refuse(`git ${sub}: ${bad}`);
  }
  // A range (A..B, A...B) names both ends of a diff.
  const count = sub === 'diff' ? revs.reduce((n, rev) => n + (rev.includes('..') ? 2 : 1), 0) : revs.length;
  if (count < (policy.minRevisions ?? 0) || count > (policy.maxRevisions ?? Infinity)) return refuse(countReason(sub));
  const end = END_OF_OPTIONS.has(sub) ? ['--end-of-options'] : [];
  const shown = where.confined ? confineRevisions(sub, revs) : { ok: true as const, value: [...revs] };
  if (!shown.ok) return shown;
  if (policy.operands === 'object' || policy.operands === 'revs') return { ok: true, value: [...end, ...shown.value] };
  return { ok: true, value: [...end, ...shown.value, '--', ...(where.confined ? confinedPaths(sub, paths, where.given) : paths)] };
}


/**
 * Subcommands whose revisions follow `--end-of-options`, so none can ever be read as an option. git 2.39's blame,
 * grep and rev-parse do not take it (grep and blame fail on it, rev-parse prints it): their revisions still cannot
 * start with `-`, since parseArgs reads every such word as a flag and checks it against the table.
 */
const END_OF_OPTIONS: ReadonlySet<Subcommand> = new Set<Subcommand>([
  'log',
  'show',
  'diff',
  'cat-file',
  'rev-list',
  'merge-base',
  'describe',
  'name-rev',
  'shortlog',
]);

function countReason(sub: Subcommand): string {
  switch (sub) {
    case 'diff':
      return 'git diff needs exactly two revisions (diff A B or diff A..B, paths after --): with fewer it compares against the work tree or the index, which the git tool never reads; use rg and read_file for the current files';
    case 'blame':
      return 'git blame needs one revision (blame HEAD -- path): without one it reads the file of the work tree';
    case 'grep':
      return "git grep needs a revision (grep -n 'pattern' HEAD -- path): without one it searches the work tree; use rg for that";
    case 'ls-tree':
      return 'git ls-tree needs one tree, e.g. ls-tree -r --name-only HEAD src';
    default:
      return `git ${sub} needs a revision, e.g. ${sub} HEAD`;
  }
}

function unknownLong(sub: string, policy: GitPolicy, name: string): string {
  const candidates = Object.keys(policy.long).filter((known) => name !== '' && known.startsWith(name));
  if (candidates.length > 0) return `git ${sub} --${name} looks like an abbreviation of ${candidates.map((c) => `--${c}`).join(' or ')}; spell options out`;
  return `git ${sub} --${name} is not an allowed flag here; check the spelling, or see the tool description for what ${sub} accepts`;
}

function shortList(policy: GitPolicy): string {
  return Object.entries(policy.short).filter(([, rule]) => rule.type !== 'deny').map(([ch]) => ch).join('') || '(none)';
}

function refuse(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}
