import type { Word } from './lexer.js';
import type { Parsed, Role } from './roles.js';
import { parseXxd } from './xxd.js';
import { lookup, type FlagRule, type ProgramPolicy } from './tables.js';

export type { Parsed, Role } from './roles.js';

interface State {
  policy: ProgramPolicy;
  roles: Role[];
  /** Flags given, as the tables name them (`-l`, `--format`, `--format=long`), for conflicts and requirements. */
  given: Set<string>;
  operands: number[];
  pattern: boolean;
  noPattern: boolean;
  recursive: boolean;
}

/** Parses arguments the way the program itself does (getopt_long, lexopt or tree's loop), against its table. */
export function parseFlags(program: string, policy: ProgramPolicy, words: readonly Word[]): Parsed {
  if (policy.style === 'xxd') return parseXxd(policy, words);
  const first = words[0]?.text;
  if (policy.obsoleteFollow && first !== undefined && /^[-+]\d*[bcl]?f$/.test(first)) {
    return refuse(`${program} ${first} is refused: GNU tail reads the obsolete ${first} as "follow forever" and would hang; use tail -n N FILE to read the end once`);
  }
  // binutils expands every word that starts with @ (a flag's value and a word after -- too) before it parses options.
  const response = policy.noResponseFiles ? words.find((word) => word.text.startsWith('@')) : undefined;
  if (response !== undefined) {
    return refuse(`${program}: ${response.text} would be read as a file of further options; give the options directly`);
  }
  const state: State = { policy, roles: [], given: new Set(), operands: [], pattern: false, noPattern: false, recursive: false };
  let endOfOptions = false;
  for (let i = 0; i < words.length; i += 1) {
    const text = (words[i] as Word).text;
    if (endOfOptions || text === '-' || !text.startsWith('-')) {
      if (policy.countShorthand && /^\+\d/.test(text)) {
        return refuse(`${program}: the obsolete ${text} form is not supported; use -n ${text} (lines) or -c ${text} (bytes)`);
      }
      state.roles[i] = { kind: 'operand', value: 'path' };
      state.operands.push(i);
      continue;
    }
    if (text === '--') {
      if (policy.noEndBeforePattern && !state.pattern && state.operands.length === 0) {
        return refuse(`${program}: -- before the filter is refused (${program} 1.6 fails on it); give the filter first: ${program} '.' FILE`);
      }
      state.roles[i] = { kind: 'flag' };
      endOfOptions = true;
      continue;
    }
    const step = text.startsWith('--')
      ? parseLong(program, policy, words, i, state)
      : parseShortCluster(program, policy, words, i, state);
    if (typeof step === 'string') return refuse(step);
    i = step;
  }
  return finish(program, policy, state, words);
}

function finish(program: string, policy: ProgramPolicy, state: State, words: readonly Word[]): Parsed {
  const takesPattern = policy.operands === 'pattern-then-paths' && !state.pattern && !state.noPattern;
  const first = state.operands[0];
  if (takesPattern && first !== undefined) {
    state.roles[first] = { kind: 'operand', value: 'pattern' };
    const bad = policy.script?.((words[first] as Word).text) ?? null;
    if (bad !== null) return refuse(`${program}: ${bad}`);
  }
  if (policy.operands === 'none' && state.operands.length > 0) return refuse(`${program} takes no arguments`);
  const notPath = policy.notPaths === undefined ? undefined : state.operands.find((i) => policy.notPaths?.pattern.test((words[i] as Word).text));
  if (notPath !== undefined) return refuse(`${program} ${(words[notPath] as Word).text}: ${policy.notPaths?.reason}`);
  if (policy.operands === 'text') for (const i of state.operands) state.roles[i] = { kind: 'operand', value: 'pattern' };
  const paths = policy.operands === 'text' ? 0 : state.operands.length - (takesPattern && first !== undefined ? 1 : 0);
  const needs = policy.needsPath;
  if (paths === 0 && (needs === 'always' || (needs === 'unless-recursive' && !state.recursive))) {
    const alt = needs === 'always' ? 'give it a file path' : (policy.needsPathHint ?? 'give it a file or directory, or -r to search the repository (rg is preferred)');
    return refuse(`${program} would read standard input, which is not available; ${alt}`);
  }
  if (policy.maxPaths !== undefined && paths > policy.maxPaths.count) {
    return refuse(`${program} takes at most ${policy.maxPaths.count} file${policy.maxPaths.count === 1 ? '' : 's'} here: ${policy.maxPaths.why}`);
  }
  const missing = policy.requires;
  if (missing !== undefined && !missing.flags.some((flag) => state.given.has(flag))) return refuse(`${program}: ${missing.reason}`);
  for (const rule of policy.conflicts ?? []) {
    const a = rule.when.find((flag) => state.given.has(flag));
    const b = rule.with.find((flag) => state.given.has(flag));
    if (a !== undefined && b !== undefined) return refuse(`${program} ${a} with ${b} is refused: ${rule.reason}`);
  }
  return { ok: true, roles: state.roles, given: state.given };
}

/** `--name`, `--name=value` or `--name value`; only exact spellings, so GNU abbreviations are refused. */
function parseLong(program: string, policy: ProgramPolicy, words: readonly Word[], i: number, state: State): number | string {
  const text = (words[i] as Word).text;
  const eq = text.indexOf('=');
  const name = eq < 0 ? text.slice(2) : text.slice(2, eq);
  const flag = `--${name}`;
  const rule = lookup(policy.long, name);
  if (rule === undefined) return unknownLong(program, policy, name);
  if (rule.type === 'deny') return `${program} ${flag} is refused: it ${rule.reason}`;
  if (policy.noLongEquals && eq >= 0) return `${program} ${text}: ${program} reads ${flag} ${rule.type === 'value' ? 'VALUE as two words' : 'alone'}, never with =`;
  state.given.add(flag);
  if (eq >= 0) state.given.add(`${flag}=${text.slice(eq + 1)}`);
  else if (rule.type === 'value' && !rule.optional && words[i + 1] !== undefined) state.given.add(`${flag}=${(words[i + 1] as Word).text}`);
  if (rule.type === 'bool') {
    if (eq >= 0) return `${program} ${flag} takes no value; remove "=${text.slice(eq + 1)}"`;
    apply(state, rule, undefined);
    state.roles[i] = { kind: 'flag' };
    return i;
  }
  if (eq >= 0) return attached(program, flag, rule, text.slice(eq + 1), i, state) ?? i;
  if (rule.optional) {
    state.roles[i] = { kind: 'flag' };
    return i;
  }
  return separate(program, flag, rule, words, i, i + 1, state);
}

/** `-abc`, `-m5`, `-f/x`; in tree a value flag takes the next word and the cluster goes on. */
function parseShortCluster(program: string, policy: ProgramPolicy, words: readonly Word[], i: number, state: State): number | string {
  const text = (words[i] as Word).text;
  if (policy.countShorthand && /^-\d/.test(text)) {
    if (policy.obsoleteFollow && /^-\d+[bcl]?$/.test(text) && !tailObsolete(words, i)) {
      return `tail ${text} works only as the first word before a single file (GNU tail reads it in no other place); use tail -n ${text.slice(1)} FILE…`;
    }
    return countShorthand(program, text, i, state);
  }
  let next = i;
  state.roles[i] = { kind: 'flag' };
  for (let j = 1; j < text.length; j += 1) {
    const ch = text[j] as string;
    const rule = lookup(policy.short, ch);
    const where = text.length > 2 ? ` (in ${text})` : '';
    if (rule === undefined) return `${program} -${ch}${where} is not an allowed flag; allowed short flags: ${shortList(policy)}`;
    if (rule.type === 'deny') return `${program} -${ch}${where} is refused: it ${rule.reason}`;
    state.given.add(`-${ch}`);
    if (rule.type === 'bool') {
      apply(state, rule, undefined);
      continue;
    }
    const rest = text.slice(j + 1);
    // A GNU optional argument (`-w`, `-L`) is only ever attached; alone, the next word is not its value.
    if (rule.optional && rest === '') continue;
    if (policy.style !== 'tree' && rest !== '') {
      const value = policy.style === 'rg' && rest.startsWith('=') ? rest.slice(1) : rest;
      return attached(program, `-${ch}`, rule, value, i, state) ?? i;
    }
    const taken = separate(program, `-${ch}`, rule, words, i, next + 1, state);
    if (typeof taken === 'string') return taken;
    next = taken;
  }
  return next;
}

/**
 * GNU tail reads `-NUM` only as its first argument, followed by at most one file or by `--` and one file
 * (parse_obsolete_option); anywhere else it fails with "option used in invalid context".
 */
function tailObsolete(words: readonly Word[], i: number): boolean {
  const second = words[1]?.text;
  if (i !== 0) return false;
  if (words.length === 1) return true;
  if (second === '--') return words.length <= 3;
  return words.length === 2 && !(second !== undefined && second.startsWith('-') && second.length > 1);
}

function countShorthand(program: string, text: string, i: number, state: State): number | string {
  if (/^-\d+[bcl]?$/.test(text)) {
    state.roles[i] = { kind: 'flag' };
    return i;
  }
  if (program === 'tail' && /[fF]/.test(text)) {
    return `tail ${text} is refused: it follows the file forever and would hang; use tail -n N to read the end once`;
  }
  return `${program} ${text} is not supported; use -n NUM (lines) or -c NUM (bytes)`;
}

function attached(
  program: string,
  flag: string,
  rule: Extract<FlagRule, { type: 'value' }>,
  value: string,
  i: number,
  state: State,
): string | null {
  const bad = badChoice(program, flag, rule, value, state.policy);
  if (bad !== null) return bad;
  apply(state, rule, value);
  state.roles[i] = rule.value === 'path' ? { kind: 'flag', attachedPath: value } : { kind: 'flag' };
  return null;
}

function separate(
  program: string,
  flag: string,
  rule: Extract<FlagRule, { type: 'value' }>,
  words: readonly Word[],
  i: number,
  at: number,
  state: State,
): number | string {
  const word = words[at];
  if (word === undefined) return `${program} ${flag} needs a value`;
  const bad = badChoice(program, flag, rule, word.text, state.policy);
  if (bad !== null) return bad;
  apply(state, rule, word.text);
  state.roles[i] = { kind: 'flag' };
  state.roles[at] = { kind: 'value', value: rule.value, flag };
  return at;
}

function badChoice(
  program: string,
  flag: string,
  rule: Extract<FlagRule, { type: 'value' }>,
  value: string,
  policy: ProgramPolicy,
): string | null {
  const bound = policy.bounds === undefined ? undefined : lookup(policy.bounds, flag.replace(/^--?/, ''));
  if (typeof bound === 'number') {
    // Not a number counts as 0: below every bound.
    const n = sizeValue(value) ?? 0;
    if (n < 1 || n > bound) {
      return `${program} ${flag} ${value} is not accepted: it must be a number from 1 to ${bound} (one call may not take the machine)`;
    }
  }
  if (bound !== undefined && typeof bound !== 'number') {
    const n = sortSize(value);
    if (n === null || n < bound.min || n > bound.max) {
      return `${program} ${flag} ${value} is not accepted: give a size from ${mebibytes(bound.min)} to ${mebibytes(bound.max)}, such as ${mebibytes(bound.min)} (${bound.why})`;
    }
  }
  if (rule.sets === 'pattern' && rule.value === 'pattern' && policy.script !== undefined) {
    const bad = policy.script(value);
    if (bad !== null) return `${program} ${flag}: ${bad}`;
  }
  const checked = rule.check?.(value) ?? null;
  if (checked !== null) return `${program} ${flag}: ${checked}`;
  if (rule.choices === undefined || rule.choices.includes(value)) return null;
  return `${program} ${flag} ${value} is not accepted; ${flag} accepts only: ${rule.choices.join(', ')}`;
}

/** `8`, `10M`, `1G` (ripgrep's suffixes, powers of 1024) → a number; null when it is not one. */
function sizeValue(value: string): number | null {
  const match = /^(\d{1,12})([KMG]?)$/.exec(value);
  if (match === null) return null;
  const scale = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[match[2] as '' | 'K' | 'M' | 'G'];
  return Number(match[1]) * scale;
}

/** GNU sort's `-S` size in bytes: no suffix means KiB, `b` bytes, K M G T P E Z Y R Q powers of 1024; null otherwise (`%` too). */
function sortSize(value: string): number | null {
  const match = /^(\d{1,15})([bkKmMgGtTPEZYRQ]?)$/.exec(value);
  if (match === null) return null;
  const power = 'bkmgtpezyrq'.indexOf((match[2] as string).toLowerCase());
  return Number(match[1]) * 1024 ** (match[2] === '' ? 1 : power);
}

function mebibytes(bytes: number): string {
  return `${bytes / 1024 ** 2}M`;
}

function apply(state: State, rule: Exclude<FlagRule, { type: 'deny' }>, value: string | undefined): void {
  if (rule.type === 'value' && rule.setsWhen !== undefined && rule.setsWhen !== value) return;
  if (rule.sets === 'pattern') state.pattern = true;
  if (rule.sets === 'noPattern') state.noPattern = true;
  if (rule.sets === 'recursive') state.recursive = true;
}

function unknownLong(program: string, policy: ProgramPolicy, name: string): string {
  const candidates = Object.keys(policy.long).filter((known) => known.startsWith(name) && name !== '');
  if (candidates.length === 0) return `${program} --${name} is not an allowed flag; check the spelling or use another flag`;
  const spelled = candidates.map((c) => `--${c}`).join(' or ');
  const denied = candidates
    .map((c) => [c, lookup(policy.long, c)] as const)
    .filter((entry): entry is readonly [string, Extract<FlagRule, { type: 'deny' }>] => entry[1]?.type === 'deny');
  const note =
    denied.length === candidates.length && denied[0] !== undefined
      ? `, and --${denied[0][0]} itself is refused: it ${denied[0][1].reason}`
      : '';
  return `${program} --${name} looks like an abbreviation of ${spelled}; abbreviated options are not accepted, spell them out${note}`;
}

function shortList(policy: ProgramPolicy): string {
  return Object.entries(policy.short).filter(([, rule]) => rule.type !== 'deny').map(([ch]) => ch).join('');
}

function refuse(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}
