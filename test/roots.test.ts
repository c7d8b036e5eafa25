import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import { homeInside, parseMountinfo, realRoot, systemRootProblem, type Mount } from '../src/roots.js';

// F5 of the third red team and issue 32 part 2: roots that are not repositories.
const HOST: Mount[] = [
  { point: '/', type: 'ext4' },
  { point: '/proc', type: 'proc' },
  { point: '/sys', type: 'sysfs' },
  { point: '/sys/fs/cgroup', type: 'cgroup2' },
  { point: '/dev', type: 'devtmpfs' },
  { point: '/dev/pts', type: 'devpts' },
  { point: '/dev/shm', type: 'tmpfs' },
  { point: '/home', type: 'ext4' },
  { point: '/srv/chroot/proc', type: 'proc' },
  { point: '/srv/chroot/dev/pts', type: 'devpts' },
  { point: '/mnt/data', type: 'xfs' },
  { point: '/mnt/data/jail/sys', type: 'sysfs' },
  { point: '/media/p', type: 'proc' },
  { point: '/opt/tracing', type: 'tracefs' },
];

describe('systemRootProblem', () => {
  it.each<[string, Mount[] | null, string | null]>([
    ['/', HOST, 'is the whole filesystem'],
    ['/', null, 'is the whole filesystem'],
    ['/proc', HOST, 'is /proc, a kernel interface'],
    ['/proc/self', null, 'is inside /proc'],
    ['/proc/1/root/home', null, 'is inside /proc'],
    ['/sys', null, 'is /sys'],
    ['/sys/fs/cgroup', HOST, 'is inside /sys'],
    ['/dev', null, 'is /dev'],
    ['/dev/shm', HOST, 'is inside /dev'],
    ['/srv/chroot', HOST, 'contains a proc mount at /srv/chroot/proc'],
    ['/srv', HOST, 'contains a proc mount at /srv/chroot/proc'],
    ['/mnt/data', HOST, 'contains a sysfs mount at /mnt/data/jail/sys'],
    ['/mnt/data/jail', HOST, 'contains a sysfs mount'],
    ['/media/p/1', HOST, 'is on a proc filesystem'],
    ['/media/p', HOST, 'is on a proc filesystem'],
    ['/opt', HOST, 'contains a tracefs mount'],
    ['/home/me/repo', HOST, null],
    ['/home', HOST, null],
    ['/mnt/data/projects', HOST, null],
    ['/srv/chroot-other', HOST, null],
    ['/procfiles', HOST, null],
    ['/device', null, null],
    ['/srv/chroot', null, null],
  ])('%s (mounts: %s) → %s', (root, mounts, problem) => {
    const found = systemRootProblem(root, mounts);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toContain(problem);
  });
});

describe('parseMountinfo', () => {
  it('reads the mount point and the type after the separator, optional fields and escapes included', () => {
    const text = [
      '22 27 0:21 / /proc rw,relatime shared:5 - proc proc rw',
      '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw',
      '90 27 0:50 / /tmp/a\\040b/proc rw master:1 propagate_from:2 - proc proc rw',
      'garbage',
      '',
    ].join('\n');
    expect(parseMountinfo(text)).toEqual([
      { point: '/proc', type: 'proc' },
      { point: '/', type: 'ext4' },
      { point: '/tmp/a b/proc', type: 'proc' },
    ]);
  });

  it("this machine's table names / (where there is one)", async () => {
    const { readMounts } = await import('../src/roots.js');
    const mounts = readMounts();
    if (mounts !== null) expect(mounts.some((m) => m.point === '/')).toBe(true);
    expect(readMounts('/nonexistent/mountinfo')).toBeNull();
  });
});

describe('realRoot', () => {
  const scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'spelunk-roots-')));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it.each([
    ['/', 'the root / is the whole filesystem'],
    ['/proc', 'the root /proc is /proc, a kernel interface'],
    ['/proc/self', 'is inside /proc'],
    ['/proc/self/root', 'the root /proc/self/root (/) is the whole filesystem'],
    ['/sys', 'the root /sys is /sys'],
    ['/dev', 'the root /dev is /dev'],
    ['/dev/shm', 'is inside /dev'],
  ])('-C %s is refused: %s', async (dir, message) => {
    const error = await realRoot(dir, scratch).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toContain(message);
    expect((error as Error).message).toMatch(/; pass -C a repository directory$/);
  });

  it('a link to / is refused by what it resolves to', async () => {
    symlinkSync('/', path.join(scratch, 'to-root'));
    await expect(realRoot('to-root', scratch)).rejects.toThrow('the root to-root (/) is the whole filesystem');
  });

  it('an ordinary directory is its real path', async () => {
    mkdirSync(path.join(scratch, 'repo'));
    await expect(realRoot('repo', scratch)).resolves.toBe(path.join(scratch, 'repo'));
  });
});

describe('homeInside', () => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'spelunk-home-')));
  const home = path.join(base, 'home', 'me');
  mkdirSync(path.join(home, 'src', 'repo'), { recursive: true });
  symlinkSync(home, path.join(base, 'home-link'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it.each([
    ['the home directory itself', () => home, () => home, true],
    ['a parent of it', () => path.join(base, 'home'), () => home, true],
    ['a grandparent of it', () => base, () => home, true],
    ['the home named through a link', () => home, () => path.join(base, 'home-link'), true],
    ['a repository below it', () => path.join(home, 'src', 'repo'), () => home, false],
    ['a sibling', () => path.join(base, 'home', 'other'), () => home, false],
    ['HOME unset (only the account home counts)', () => home, () => undefined, false],
    ['HOME relative (ignored)', () => home, () => 'me', false],
  ])('%s', (_what, root, HOME, inside) => {
    const found = homeInside(root(), { HOME: HOME() });
    if (inside) expect(found).toBe(home);
    // The account's own home (the password database) may still contain a scratch root; it never does here.
    else expect(found === null || !found.startsWith(base)).toBe(true);
  });
});
