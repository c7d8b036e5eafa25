import type { Role, Parsed } from './flags.js';
import type { Word } from './lexer.js';
import { FIND_OPTIONS, FIND_PRIMARIES, lookup, type FindPrimary } from './tables.js';

/** `-newerXY ref`: X and Y pick timestamps; Y = t means the reference is a date string, not a file. */
const NEWER_XY = /^-newer([aBcm])([aBcmt])$/;

/** Tokens find treats as the start of its expression (GNU find's looks_like_expression). */
function startsExpression(text: string): boolean {
  return (text.startsWith('-') && text.length > 1) || text === '(' || text === ')' || text === '!' || text === ',';
}

/**
 * find has no flags in the getopt sense: leading options (-P, -H, -L), then starting points, then an expression in
 * which every test and action is a word. The primaries table is the policy; an unknown primary is refused.
 */
export function parseFind(words: readonly Word[]): Parsed {
  const roles: Role[] = [];
  let i = 0;
  for (; i < words.length; i += 1) {
    const text = (words[i] as Word).text;
    const option = lookup(FIND_OPTIONS, text);
    if (option === undefined) break;
    if (option.type === 'deny') return refuse(`find ${text} is refused: it ${option.reason}`);
    roles[i] = { kind: 'flag' };
  }
  for (; i < words.length && !startsExpression((words[i] as Word).text); i += 1) {
    if ((words[i] as Word).text === '-') return refuse('find: "-" (standard input) is not a starting point; give a directory such as .');
    roles[i] = { kind: 'operand', value: 'path' };
  }
  for (; i < words.length; i += 1) {
    const text = (words[i] as Word).text;
    const primary = primaryFor(text);
    if (primary === undefined) return refuse(unexpected(text));
    if (primary.arity === 'deny') return refuse(`find ${text} is refused: it ${primary.reason}`);
    roles[i] = { kind: 'flag' };
    if (primary.arity === 0) continue;
    const value = words[i + 1];
    if (value === undefined) return refuse(`find ${text} needs a value`);
    if (primary.choices !== undefined && !primary.choices.includes(value.text)) {
      return refuse(`find ${text} ${value.text} is not accepted; ${text} accepts only: ${primary.choices.join(', ')}`);
    }
    if (primary.numeric === true && !/^\d+$/.test(value.text)) {
      return refuse(`find ${text} ${value.text}: give the numeric id (${text} 1000): a name is looked up in the host's user or group database (/etc/passwd, /etc/group); find -printf '%U %G %p\\n' shows the ids`);
    }
    const badFormat = primary.format === true ? findFormatReason(value.text) : null;
    if (badFormat !== null) return refuse(`find ${text}: ${badFormat}`);
    roles[i + 1] = { kind: 'value', value: primary.value, flag: text };
    i += 1;
  }
  return { ok: true, roles };
}

function primaryFor(text: string): FindPrimary | undefined {
  const known = lookup(FIND_PRIMARIES, text);
  if (known !== undefined) return known;
  const newer = NEWER_XY.exec(text);
  if (newer === null) return undefined;
  return { arity: 1, value: newer[2] === 't' ? 'text' : 'path' };
}

function unexpected(text: string): string {
  if (text === '-L' || text === '-H' || text === '-P') {
    return `find ${text} must come before the starting points, and only -P is accepted (symlinks are not followed)`;
  }
  if (text.startsWith('-')) return `find ${text} is not an allowed test or action; use -name, -path, -type, -size, -mtime, -newer, -print, -printf …`;
  return `find: "${text}" is out of place — starting points come first, then the expression; quote patterns (-name '*.py')`;
}

function refuse(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}

/**
 * -printf directives that describe the file itself (its lstat, name and link text). Refused: %Y (below), the host's
 * facts %D (device number), %F (filesystem type) and %Z (security context), and the names %u %g, which come from the
 * host's user and group databases (%U %G are the numeric ids).
 */
const FORMAT_DIRECTIVE = /%[-+ #0]*\d*(?:\.\d+)?(?:[%abcdfGhHiklmMnpPsStUy]|[ACT][aAbBcCdDeFgGhHIjklmMnprRsStTuUVwWxXyY@+])/y;

/** Why each refused directive letter is refused. */
const REFUSED_DIRECTIVES: Readonly<Record<string, string>> = {
  Y: 'it reports the type of what a symbolic link points to, which can lie outside the repository; use %y (the link itself) and %l (its target)',
  u: "it prints the owner's name from the host's user database (/etc/passwd); use %U (the numeric id)",
  g: "it prints the group's name from the host's group database (/etc/group); use %G (the numeric id)",
  D: 'it prints the device number of the host filesystem the file is on',
  F: 'it prints the type of the host filesystem the file is on',
  Z: "it prints the file's security context, a label of the host",
};

/**
 * Every `%` of a -printf format must start a known directive. `%Y` is refused: it is the type of what a symbolic link
 * points to (or N when that does not exist), so it would tell whether a path outside the repository exists.
 */
export function findFormatReason(format: string): string | null {
  // A fresh sticky regex per call: lastIndex is state.
  const directive = new RegExp(FORMAT_DIRECTIVE.source, 'y');
  for (let at = format.indexOf('%'); at >= 0; at = format.indexOf('%', at)) {
    directive.lastIndex = at;
    const match = directive.exec(format);
    if (match === null) {
      const shown = format.slice(at, at + 2);
      const letter = /^%[-+ #0]*\d*(?:\.\d+)?([YugDFZ])/.exec(format.slice(at))?.[1];
      const why = letter === undefined ? undefined : REFUSED_DIRECTIVES[letter];
      if (letter !== undefined && why !== undefined) return `%${letter} is refused: ${why}`;
      return `the directive ${shown} is not accepted; use %p %P %f %h %s %y %l %m %M %U %G %t %T@ %TY-%Tm-%Td %d %k %n %i`;
    }
    at += match[0].length;
  }
  return null;
}
