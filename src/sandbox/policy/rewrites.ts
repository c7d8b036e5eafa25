import type { Role } from './flags.js';

/**
 * Arguments rewritten after a command is accepted, so its output holds facts about the files in the repository only:
 * never the host's user names, its filesystem or the directory above the root. Each rewrite adds a note saying what
 * ran instead.
 */

/** The argv after a rewrite and what the model should be told about it. */
interface Rewritten {
  args: string[];
  notes: string[];
}

/** The flags, as the tables name them, that make ls print a long listing (with owners). */
const LS_LONG = ['-l', '-g', '-o', '--format=long', '--format=verbose', '--full-time'];

/**
 * ls -a lists `..`, and the `..` of the root is the directory above the repository (its link count and times change
 * with what lies beside the repository), so -a runs as -A (everything but `.` and `..`), with a note. A long listing
 * shows owners by name, read from the host's user and group databases (/etc/passwd, /etc/group): it runs with -n
 * (numeric ids), so the answer is the same with and without the kernel sandbox, which has no such files.
 */
export function rewriteLs(args: readonly string[], roles: readonly Role[], given: ReadonlySet<string>): Rewritten {
  const LS_VALUE_FLAGS = 'wTI';
  const out = args.map((arg, i) => {
    if (roles[i]?.kind !== 'flag' || !arg.startsWith('-')) return arg;
    if (arg === '--all') return '--almost-all';
    if (arg.startsWith('--')) return arg;
    const valueAt = [...arg].findIndex((ch, k) => k > 0 && LS_VALUE_FLAGS.includes(ch));
    const end = valueAt < 0 ? arg.length : valueAt;
    return arg.slice(0, end).replaceAll('a', 'A') + arg.slice(end);
  });
  const notes: string[] = [];
  if (out.some((arg, i) => arg !== args[i])) notes.push('ls -a ran as ls -A: the .. entry of the root is the directory above the repository, which is not shown');
  const long = LS_LONG.some((flag) => given.has(flag));
  if (!long || given.has('-n') || given.has('--numeric-uid-gid')) return { args: out, notes };
  return { args: ['--numeric-uid-gid', ...out], notes };
}

/**
 * stat's default and terse outputs hold the device of the host filesystem, its preferred I/O size and owner names
 * from the host's user database; without a format of the model's own, stat runs with one that leaves those out.
 */
const STAT_LONG =
  '  File: %N\\n  Size: %s\\tBlocks: %b\\t%F\\n Inode: %i\\tLinks: %h\\nAccess: (%04a/%A)  Uid: %u  Gid: %g\\n' +
  'Access: %x\\nModify: %y\\nChange: %z\\n Birth: %w\\n';
const STAT_TERSE = '%n %s %b %f %u %g %i %h %X %Y %Z %W\\n';

/** stat with its default or terse format replaced by one without the host's facts (see STAT_LONG). */
export function rewriteStat(args: readonly string[], given: ReadonlySet<string>): Rewritten {
  if (['-c', '--format', '--printf'].some((flag) => given.has(flag))) return { args: [...args], notes: [] };
  const terse = given.has('-t') || given.has('--terse');
  return { args: [`--printf=${terse ? STAT_TERSE : STAT_LONG}`, ...args], notes: [] };
}
