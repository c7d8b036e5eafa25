import path from 'node:path';
import type { GitValue } from './git-tables.js';

/**
 * Checks for the words of a git command that are not flags: revisions, history paths and flag values. Each returns
 * null when the word is accepted, or the reason (written for the model) when it is not. Every check is a single
 * left-to-right scan or an anchored regular expression without nested quantifiers: linear in the word's length.
 */

/**
 * Diffs run with these: a configured textconv or external diff driver is a program the repository chose, a
 * configured `diff.orderFile` is a file git would read from anywhere (`-O/dev/null` replaces it), and a submodule is
 * another repository, which `--submodule=diff` or `log` would enter with a git of its own (its configuration, its diff
 * drivers, or another repository's history): `short` prints the two commit ids and reads nothing of it. The isolation
 * options set the same (sandbox/git.ts); on the command line they hold whatever a configuration file says.
 */
export const NO_DIFF_PROGRAMS = ['--no-textconv', '--no-ext-diff', '-O/dev/null', '--submodule=short'] as const;

/** The subcommands of the git tool, in the order its description lists them (GIT_POLICIES' keys; a test checks). */
export const GIT_SUBCOMMANDS = ['log', 'show', 'diff', 'blame', 'grep', 'ls-tree', 'cat-file', 'rev-parse', 'rev-list', 'merge-base',
  'describe', 'name-rev', 'shortlog', 'tag', 'branch', 'for-each-ref', 'stash', 'worktree', 'notes', 'bisect', 'remote', 'reflog', 'show-ref', 'count-objects', 'cherry', 'status', 'ls-files'] as const;

/** `git log --format` placeholders that read commit data only: no signatures (`%G…`, gpg), no `%(describe)` (runs git), no colour. */
const LOG_PLACEHOLDER = /%(?:[%nHhTtPpdDsfbBemS]|x[0-9a-fA-F]{2}|[ac][nNeElLdDrtiIsh])/;
export const LOG_PLACEHOLDERS = '%H %h %T %t %P %p %an %ae %aN %aE %al %ad %ar %at %ai %aI %as %ah (and %c… for the committer) %d %D %s %f %b %B %e %m %S %n %% %xNN';

/** for-each-ref atoms that read ref and object data; no `%(describe)`, `%(signature)` or `%(worktreepath)`. */
const REF_ATOMS = ['refname', 'objectname', 'objecttype', 'objectsize', 'subject', 'body', 'contents', 'authorname', 'authoremail',
  'authordate', 'committername', 'committeremail', 'committerdate', 'taggername', 'taggeremail', 'taggerdate', 'creator', 'creatordate',
  'upstream', 'push', 'HEAD', 'symref', 'parent', 'tree', 'numparent', 'object', 'type', 'tag'];
const REF_PLACEHOLDER = new RegExp(`%(?:%|x[0-9a-fA-F]{2}|\\((?:${REF_ATOMS.join('|')})(?::[A-Za-z0-9=,.-]*)?\\))`);

/** Named `--pretty` styles built into git (a `pretty.<name>` alias from the repository's configuration is not one). */
const PRETTY_NAMES = ['oneline', 'short', 'medium', 'full', 'fuller', 'reference'];
const DATE_STYLE = /^(?:(?:relative|local|default|iso|iso8601|iso-strict|iso8601-strict|rfc|rfc2822|short|raw|human|unix)(?:-local)?|format(?:-local)?:.*)$/s;

/** The reason a flag value is refused, or null. `flag` is how the model wrote the flag, for the message. */
export function checkValue(kind: GitValue, value: string, flag: string): string | null {
  switch (kind) {
    case 'count':
      return /^\d{1,9}$/.test(value) ? null : `${flag} ${value} is not accepted: it must be a whole number`;
    case 'rev':
      return checkRevision(value);
    case 'path':
      return checkHistoryPath(value);
    case 'pretty':
      return checkPretty(value, flag);
    case 'ref-format':
      return placeholders(value, REF_PLACEHOLDER, `${flag}: `, `allowed: %(atom) or %(atom:option) with atom one of ${REF_ATOMS.join(', ')}; %% and %xNN`);
    case 'line-range':
      return checkLineRange(value, flag);
    case 'date':
      return DATE_STYLE.test(value) ? null : `${flag} ${value} is not a date style; use relative, iso, short, unix, human or format:…`;
    case 'text':
      return null;
  }
}

/**
 * A revision: anything git's revision syntax reads from history (`HEAD~2`, `v1.0^{}`, `main@{1}`, `:/message`,
 * `rev:path`). Index forms (`:path`, `:0:path`) read the staging area, which the tool never does; the path of
 * `rev:path` is confined by its text like any other history path.
 */
export function checkRevision(rev: string): string | null {
  if (rev === '') return 'an empty revision is not accepted; name one, e.g. HEAD';
  if (rev.startsWith(':') && !rev.startsWith(':/')) {
    // git reads `:N:` as a stage only for N in 0-3 followed by a colon (`:2024.md` is the path 2024.md).
    return `${rev} names a file in the index (staging area), which the git tool never reads; name a revision, e.g. HEAD${rev.replace(/^:[0-3]:/, ':')}`;
  }
  const colon = rev.indexOf(':', 1);
  if (colon === -1 || rev.startsWith(':/')) return null;
  const inner = rev.slice(colon + 1);
  return inner === '' ? null : checkHistoryPath(inner, rev);
}

/**
 * A path in history: it may no longer exist in the work tree, so it is confined by its text (git matches it against
 * tree entries and never follows a link of the work tree): relative, no `..` above the root, no pathspec magic.
 */
export function checkHistoryPath(p: string, shown = p): string | null {
  if (p === '') return 'an empty path is not accepted; give a path relative to the repository root';
  if (p.startsWith(':')) return `${shown}: pathspec magic (:(…), :!, :/) is not supported; give a plain path relative to the repository root`;
  if (path.posix.isAbsolute(p)) return `${shown} is an absolute path; give a path relative to the repository root`;
  const normal = path.posix.normalize(p);
  if (normal === '..' || normal.startsWith('../')) return `${shown} is outside the repository root`;
  return null;
}

/**
 * `--pretty=` and `--format=` alike: `format:`/`tformat:` or any value with a `%` is a format string of whitelisted
 * placeholders; anything else is a format name, and git resolves a name it does not build in through the repository's
 * `pretty.<name>` aliases (and by prefix), so only the built-in names, spelled out, are accepted.
 */
function checkPretty(value: string, flag: string): string | null {
  // The `format:`/`tformat:` prefix holds no `%`, so the whole value is scanned as it is.
  if (/^t?format:/.test(value) || value.includes('%')) {
    return placeholders(value, LOG_PLACEHOLDER, `${flag}: `, `allowed placeholders: ${LOG_PLACEHOLDERS}`);
  }
  if (PRETTY_NAMES.includes(value)) return null;
  return `${flag}=${value} is not accepted; use ${PRETTY_NAMES.join(', ')} or format:… with allowed placeholders`;
}

/** `-L START,END:PATH` or `-L :FUNCNAME:PATH`: the path (after the last colon) is a history path. */
function checkLineRange(value: string, flag: string): string | null {
  const colon = value.lastIndexOf(':');
  if (colon <= 0) return `${flag} ${value} is not accepted; use ${flag} START,END:PATH or ${flag} :FUNCNAME:PATH`;
  return checkHistoryPath(value.slice(colon + 1));
}

/** Every `%` of `text` must start a whitelisted placeholder (sticky regex at each `%`, so the scan is linear). */
function placeholders(text: string, pattern: RegExp, prefix: string, list: string): string | null {
  // A fresh sticky regex per call: lastIndex is state, and a shared one would be module-level mutable state.
  const allowed = new RegExp(pattern.source, 'y');
  for (let at = text.indexOf('%'); at >= 0; at = text.indexOf('%', at)) {
    allowed.lastIndex = at;
    const match = allowed.exec(text);
    if (match === null) return `${prefix}the placeholder ${text.slice(at, at + 3)}… is not allowed (signatures, colours, %(describe) and padding are refused); ${list}`;
    at += match[0].length;
  }
  return null;
}
