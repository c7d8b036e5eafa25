import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confine, isInside } from '../../src/sandbox/paths.js';
import { makeHostileRepo, type HostileRepo } from '../support/hostile-repo.js';
import { useRepo } from '../support/temp-repo.js';

let repo: HostileRepo;
beforeAll(async () => {
  repo = await makeHostileRepo({ big: false });
});
afterAll(async () => {
  await repo?.cleanup();
});

// `{root}` and `{parent}` are replaced with the fixture's real paths.
type Row = [label: string, input: string, mustExist: boolean, expected: { rel: string; exists?: boolean } | { refused: string }];

const rows: Row[] = [
  ['relative file', 'src/a.ts', true, { rel: 'src/a.ts' }],
  ['./ prefix', './src/a.ts', true, { rel: 'src/a.ts' }],
  ['doubled slash', 'src//a.ts', true, { rel: 'src/a.ts' }],
  ['.. that stays inside', 'src/deep/../b.ts', true, { rel: 'src/b.ts' }],
  ['absolute inside', '{root}/src/a.ts', true, { rel: 'src/a.ts' }],
  ['absolute root with trailing slash', '{root}/', true, { rel: '.' }],
  ['dot is the root', '.', true, { rel: '.' }],
  ['empty string is the root (tools reject it in parse)', '', true, { rel: '.' }],
  ['directory with trailing slash', 'src/', true, { rel: 'src' }],
  ['absolute outside', '/etc/passwd', true, { refused: 'outside the repository root' }],
  ['absolute outside, not required to exist', '/etc/does-not-exist', false, { refused: 'outside the repository root' }],
  ['.. escape', '../repo-old/secret.txt', true, { refused: 'outside' }],
  ['.. escape to the parent', '..', true, { refused: 'outside' }],
  ['.. escape after descending', 'src/../../repo-old/secret.txt', true, { refused: 'outside' }],
  ['deep .. escape to /', '../../../../../../../../etc/passwd', true, { refused: 'outside' }],
  ['sibling prefix, absolute', '{parent}/repo-old/secret.txt', true, { refused: 'outside' }],
  ['sibling prefix as root + "-old"', '{root}-old/secret.txt', true, { refused: 'outside' }],
  ['sibling prefix dir', '{root}-old', true, { refused: 'outside' }],
  ['absolute with .. back out', '{root}/../repo-old/secret.txt', true, { refused: 'outside' }],
  ['absolute with /./ among the root\'s components', '{parent}/./repo/src/a.ts', true, { rel: 'src/a.ts' }],
  ['absolute with // among the root\'s components', '{parent}//repo/src/a.ts', true, { rel: 'src/a.ts' }],
  ['absolute, a parent of the root', '{parent}', true, { refused: 'outside the repository root' }],
  ['symlink to /etc', 'link-etc', true, { refused: 'outside' }],
  ['file under symlink to /etc', 'link-etc/passwd', true, { refused: 'outside' }],
  ['missing under symlink to /etc', 'link-etc/nope', false, { refused: 'outside' }],
  ['missing under symlink to sibling dir', 'escape-dir/new.txt', false, { refused: 'outside' }],
  ['existing under symlink to sibling dir', 'escape-dir/secret.txt', true, { refused: 'outside' }],
  ['symlink chain escape', 'chain1', true, { refused: 'outside' }],
  ['middle of the chain', 'chain2', false, { refused: 'outside' }],
  ['symlink to ..', 'up', true, { refused: 'outside' }],
  ['through up to the secret', 'up/repo-old/secret.txt', true, { refused: 'outside' }],
  // Leaving the root and coming back would let a path probe what exists outside: refused at the first step out.
  ['through up and back in', 'up/repo/src/a.ts', true, { refused: 'outside' }],
  ['.. out and back in', '../repo/src/a.ts', true, { refused: 'outside' }],
  ['symlink to .', 'self', true, { rel: '.' }],
  ['through self', 'self/self/src/a.ts', true, { rel: 'src/a.ts' }],
  ['symlink inside', 'link-inside', true, { rel: 'src/a.ts' }],
  ['absolute symlink inside', 'link-abs-inside', true, { rel: 'src/b.ts' }],
  // The kernel follows link-nested (→ nested/deeper) before applying `..`; lexical normalisation would look for
  // <root>/sibling.txt, which does not exist.
  ['link/.. follows the link first', 'link-nested/../sibling.txt', true, { rel: 'nested/sibling.txt' }],
  // Lexically this is the repository's decoy etc/passwd; the kernel opens /etc/passwd. Must be refused.
  ['link/.. escape with an inside decoy', 'link-etc/../etc/passwd', true, { refused: 'outside' }],
  ['symlink loop', 'loop-a', true, { refused: 'symlink loop' }],
  ['symlink loop, not required to exist', 'loop-a', false, { refused: 'symlink loop' }],
  ['below a symlink loop', 'loop-b/x', false, { refused: 'symlink loop' }],
  // Whether the target exists outside is never looked up, so the answer cannot tell.
  ['dangling symlink pointing outside', 'dangling', true, { refused: 'outside the repository root' }],
  ['dangling symlink, not required to exist', 'dangling', false, { refused: 'outside the repository root' }],
  ['dangling symlink with trailing slash', 'dangling/', false, { refused: 'outside the repository root' }],
  ['below a dangling symlink', 'dangling/x/y', false, { refused: 'outside the repository root' }],
  ['existing outside file, absolute', '{parent}/repo-old/secret.txt', true, { refused: 'secret.txt is outside the repository root' }],
  ['missing outside file, absolute', '{parent}/repo-old/nope.txt', true, { refused: 'nope.txt is outside the repository root' }],
  ['existing outside file through a link', 'escape-dir/secret.txt', true, { refused: 'secret.txt is outside the repository root' }],
  ['missing outside file through a link', 'escape-dir/nope.txt', true, { refused: 'nope.txt is outside the repository root' }],
  ['dangling symlink inside', 'dangling-inside', true, { refused: 'no such file' }],
  ['dangling symlink inside, may be missing', 'dangling-inside', false, { rel: 'nope/missing.txt', exists: false }],
  ['link through /proc/self/cwd', 'link-proc-cwd/etc/passwd', true, { refused: '/proc is never readable' }],
  ['link whose target walks through /proc', 'link-proc-dotdot', true, { refused: '/proc is never readable' }],
  ['link to an absolute path inside with .. in the root part', 'link-abs-dotdot', true, { refused: 'outside' }],
  ['file followed by ..', 'src/a.ts/..', true, { refused: 'not a directory' }],
  ['symlink to a file with a trailing slash', 'link-inside/', true, { refused: 'not a directory' }],
  ['/proc/self/environ', '/proc/self/environ', true, { refused: '/proc is never readable' }],
  ['/proc via ..', '../../../../../../../../proc/self/environ', true, { refused: '/proc' }],
  ['symlink to /proc/self/environ', 'link-proc', true, { refused: '/proc is never readable' }],
  ['/dev/stdin', '/dev/stdin', true, { refused: '/dev is never readable' }],
  ['/dev/zero, not required to exist', '/dev/zero', false, { refused: '/dev is never readable' }],
  ['symlink to /dev/zero', 'link-dev', true, { refused: '/dev is never readable' }],
  ['/sys', '/sys/kernel', true, { refused: '/sys is never readable' }],
  ['/sys itself', '/sys', false, { refused: '/sys is never readable' }],
  ['NUL byte', 'src/a.ts\0.png', true, { refused: 'NUL byte' }],
  ['missing, must exist', 'missing.txt', true, { refused: 'no such file or directory: missing.txt' }],
  ['missing, may be missing', 'missing.txt', false, { rel: 'missing.txt', exists: false }],
  ['missing nested dirs', 'new/dir/file.ts', false, { rel: 'new/dir/file.ts', exists: false }],
  // NAME_MAX is 255 bytes: lstat answers ENAMETOOLONG, not ENOENT, so even a path that may be missing is refused.
  ['name too long', 'x'.repeat(300), true, { refused: 'the path is too long' }],
  ['name too long, may be missing', `src/${'x'.repeat(300)}`, false, { refused: 'the path is too long' }],
  ['missing, then .. back out', 'nope/../../repo-old/secret.txt', false, { refused: 'outside' }],
  // Below a missing directory nothing more is looked up: the kernel answers ENOENT there too, link or no link.
  ['missing, then .. back to a link out', 'nope/../link-etc', true, { refused: 'no such file or directory: nope/../link-etc' }],
  ['file used as a directory', 'src/a.ts/x', true, { refused: 'not a directory' }],
  ['file with trailing slash', 'src/a.ts/', true, { refused: 'not a directory' }],
  ['file with trailing slash, may be missing', 'src/a.ts/', false, { refused: 'not a directory' }],
  ['unicode name', 'café.txt', true, { rel: 'café.txt' }],
  ['CJK name', '日本.md', true, { rel: '日本.md' }],
  ['space in name', 'with space.txt', true, { rel: 'with space.txt' }],
  ['space in dir name', 'dir with space/inner.ts', true, { rel: 'dir with space/inner.ts' }],
  ['newline in name', 'new\nline.txt', true, { rel: 'new\nline.txt' }],
  ['leading dash', '-n.txt', true, { rel: '-n.txt' }],
  ['dotfile', '.env', true, { rel: '.env' }],
  ['FIFO is inside (type checks are the caller\'s job)', 'pipe.fifo', true, { rel: 'pipe.fifo' }],
];

describe('confine', () => {
  it.each(rows)('%s: %j (mustExist %s)', async (_label, raw, mustExist, expected) => {
    const input = raw.replaceAll('{root}', repo.root).replaceAll('{parent}', repo.parent);
    const got = await confine(repo.root, input, { mustExist });
    if ('refused' in expected) {
      expect(got.ok).toBe(false);
      if (!got.ok) expect(got.reason).toContain(expected.refused);
      return;
    }
    expect(got).toEqual({ ok: true, rel: expected.rel, abs: path.join(repo.root, expected.rel), exists: expected.exists ?? true });
  });

  it('refuses symlinks to /dev/stdin whatever stdin is', async () => {
    // /dev/stdin resolves to /proc/self/fd/0, then to a pty, a pipe or /dev/null: refused in every case.
    await expect(confine(repo.root, '/dev/stdin', { mustExist: false })).resolves.toMatchObject({ ok: false });
  });
});

// hop0 → hop1 → … → hop39 → target.txt: exactly MAX_LINK_HOPS links; hop-extra adds one more.
const HOPS = 40;
const chain = useRepo({ 'target.txt': 'end of the chain\n' });

describe('confine: links followed and the filesystem root as root', () => {
  beforeAll(async () => {
    for (let i = 0; i < HOPS; i += 1) await fs.symlink(i === HOPS - 1 ? 'target.txt' : `hop${i + 1}`, path.join(chain.root, `hop${i}`));
    await fs.symlink('hop0', path.join(chain.root, 'hop-extra'));
    // A relative link that climbs exactly to / and goes down into /proc: it never leaves a root of /.
    const depth = chain.root.split('/').filter((p) => p !== '').length;
    await fs.symlink(`${'../'.repeat(depth)}proc/no-such-entry-spelunk`, path.join(chain.root, 'rel-proc'));
  });

  it(`follows a chain of ${HOPS} links, the kernel's limit`, async () => {
    await expect(confine(chain.root, 'hop0', { mustExist: true })).resolves.toEqual({ ok: true, rel: 'target.txt', abs: path.join(chain.root, 'target.txt'), exists: true });
  });

  it(`refuses a chain of ${HOPS + 1} links as a loop`, async () => {
    const got = await confine(chain.root, 'hop-extra', { mustExist: true });
    expect(got).toMatchObject({ ok: false, reason: expect.stringContaining('symlink loop') });
  });

  it('confines below / when / is the repository root', async () => {
    const rel = `${chain.root.slice(1)}/target.txt`;
    await expect(confine('/', rel, { mustExist: true })).resolves.toEqual({ ok: true, rel, abs: `/${rel}`, exists: true });
  });

  it('refuses a relative link into /proc when / is the repository root', async () => {
    // The link's text is relative and its own path lies outside /proc: only where the walk ends says /proc.
    const got = await confine('/', `${chain.root.slice(1)}/rel-proc`, { mustExist: false });
    expect(got).toEqual({ ok: false, reason: '/proc is never readable', outside: true });
  });
});

describe('isInside', () => {
  it.each([
    ['/x/repo', '/x/repo', true],
    ['/x/repo', '/x/repo/a', true],
    ['/x/repo', '/x/repo/a/b/../c', true],
    ['/x/repo', '/x/repo/..a', true],
    ['/x/repo', '/x/repo-old', false],
    ['/x/repo', '/x/repo-old/secret.txt', false],
    ['/x/repo', '/x/repository', false],
    ['/x/repo', '/x', false],
    ['/x/repo', '/x/repo/..', false],
    ['/x/repo', '/', false],
    ['/x/repo', '/etc/passwd', false],
  ] as const)('isInside(%s, %s) = %s', (root, target, inside) => {
    expect(isInside(root, target)).toBe(inside);
  });
});
