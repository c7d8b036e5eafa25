import { describe, expect, it } from 'vitest';
import type { GitValue } from '../../src/sandbox/policy/git-tables.js';
import { checkHistoryPath, checkRevision, checkValue } from '../../src/sandbox/policy/git-values.js';

/**
 * The word checks on their own: git-policy.test.ts reaches them through whole commands; these rows pin the edges a
 * command row cannot (value kinds no table uses yet, the exact suggestion of a refusal). `null` means accepted.
 */

describe('checkRevision', () => {
  it.each<[string, string | null]>([
    ['HEAD', null],
    ['HEAD~2', null],
    ['HEAD:src/a.ts', null],
    // `rev:` with no path names the root tree of the revision.
    ['HEAD:', null],
    // `..` alone is HEAD..HEAD, a range, not a path above the root.
    ['..', null],
    // `:/text` searches commit messages; a colon in the text is part of the search, not a path.
    [':/fix:../x', null],
    [':/fix: see /etc/passwd', null],
    ['', 'an empty revision is not accepted; name one, e.g. HEAD'],
    ['HEAD:../x', 'HEAD:../x is outside the repository root'],
    ['HEAD:/etc/passwd', 'HEAD:/etc/passwd is an absolute path'],
    ['HEAD:..', 'HEAD:.. is outside the repository root'],
  ])('%j → %j', (rev, expected) => {
    const reason = checkRevision(rev);
    if (expected === null) expect(reason).toBeNull();
    else expect(reason).toContain(expected);
  });

  // The suggestion names the same path in HEAD: git reads `:N:` as a stage only for N in 0-3 followed by a colon.
  it.each([
    [':src/a.ts', 'HEAD:src/a.ts'],
    [':0:src/a.ts', 'HEAD:src/a.ts'],
    [':3:src/a.ts', 'HEAD:src/a.ts'],
    [':2024-notes.md', 'HEAD:2024-notes.md'],
    [':1x', 'HEAD:1x'],
    [':4:x', 'HEAD:4:x'],
    ['::x', 'HEAD::x'],
    [':x:0:y', 'HEAD:x:0:y'],
  ])('the index form %j is refused with the suggestion %j', (rev, suggestion) => {
    const reason = checkRevision(rev);
    expect(reason).toContain(`${rev} names a file in the index (staging area)`);
    expect(reason).toMatch(new RegExp(`e\\.g\\. ${suggestion.replace(/[.*]/g, '\\$&')}$`));
  });
});

describe('checkHistoryPath', () => {
  it.each<[string, string | null]>([
    ['src/a.ts', null],
    ['src/..', null],
    ['./src', null],
    ['..x', null],
    ['', 'an empty path is not accepted; give a path relative to the repository root'],
    ['..', '.. is outside the repository root'],
    ['src/../..', 'src/../.. is outside the repository root'],
    ['../x', '../x is outside the repository root'],
    ['/etc/passwd', '/etc/passwd is an absolute path'],
    [':!src', 'pathspec magic'],
  ])('%j → %j', (p, expected) => {
    const reason = checkHistoryPath(p);
    if (expected === null) expect(reason).toBeNull();
    else expect(reason).toContain(expected);
  });
});

describe('checkValue', () => {
  it.each<[GitValue, string, string, string | null]>([
    ['count', '-n', '5', null],
    ['count', '-n', '123456789', null],
    ['count', '-n', '1234567890', '-n 1234567890 is not accepted: it must be a whole number'],
    ['count', '-n', '5x', '-n 5x is not accepted: it must be a whole number'],
    ['count', '-n', 'x5', 'must be a whole number'],
    ['count', '-n', '', 'must be a whole number'],
    // A `rev` value is a revision (index forms refused), not a path.
    ['rev', '--contains', 'HEAD', null],
    ['rev', '--contains', ':src/a.ts', 'names a file in the index'],
    ['rev', '--contains', 'HEAD:../x', 'HEAD:../x is outside the repository root'],
    // No table uses `path` yet; a flag that gets it is confined like an operand.
    ['path', '--f', 'src/a.ts', null],
    ['path', '--f', '../x', '../x is outside the repository root'],
    ['path', '--f', '/etc', '/etc is an absolute path'],
    ['pretty', '--format', 'oneline', null],
    ['pretty', '--format', '%h %s', null],
    ['pretty', '--format', 'commit %h by %an', null],
    ['pretty', '--format', 'format:plain text', null],
    ['pretty', '--format', 'tformat:%h', null],
    ['pretty', '--format', 'tformat:plain', null],
    // A name with `format:` inside is not a format string: git looks it up as a pretty.<name> alias.
    ['pretty', '--format', 'evilformat:x', '--format=evilformat:x is not accepted; use oneline'],
    ['pretty', '--format', 'tformat', '--format=tformat is not accepted'],
    ['pretty', '--format', '%G?', '--format: the placeholder %G?… is not allowed'],
    ['pretty', '--format', 'format:%h %GK', '--format: the placeholder %GK… is not allowed'],
    ['pretty', '--format', '%C(red)', 'allowed placeholders: %H %h %T'],
    ['ref-format', '--format', '%(refname:short) %(objectname)', null],
    ['ref-format', '--format', 'x %%', null],
    ['ref-format', '--format', '%(describe)', '--format: the placeholder %(d… is not allowed'],
    ['ref-format', '--format', '%(describe)', 'allowed: %(atom) or %(atom:option) with atom one of refname, objectname, objecttype'],
    ['line-range', '-L', '1,2:src/a.ts', null],
    ['line-range', '-L', ':greet:src/a.ts', null],
    ['line-range', '-L', ':greet', '-L :greet is not accepted; use -L START,END:PATH or -L :FUNCNAME:PATH'],
    ['line-range', '-L', '1,2', '-L 1,2 is not accepted'],
    ['line-range', '-L', '1,2:../x', '../x is outside the repository root'],
    ['date', '--date', 'short', null],
    ['date', '--date', 'evil', '--date evil is not a date style'],
    ['text', '--grep', '%G? ../x', null],
  ])('%s %s %j → %j', (kind, flag, value, expected) => {
    const reason = checkValue(kind, value, flag);
    if (expected === null) expect(reason).toBeNull();
    else expect(reason).toContain(expected);
  });
});
