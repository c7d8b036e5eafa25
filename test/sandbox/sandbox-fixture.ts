import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A hostile repository for the bash tool's tests, with its surroundings. */
export interface HostileRepo {
  /** Temp directory holding the repo, its sibling and the outside files. */
  base: string;
  /** Real path of the repository root. */
  root: string;
  /** Created by the planted `bin/rg` if it is ever run. */
  marker: string;
  cleanup(): Promise<void>;
}

export const OUTSIDE_SECRET = 'OUTSIDE-SECRET-7f3a';
export const SIBLING_SECRET = 'SIBLING-SECRET-91c2';
/** An absolute directory that does not exist (links/dangling points at it). */
const MISSING_OUTSIDE_DIR = '/spelunk-no-such-dir-5e1b';

/**
 * Builds <base>/repo with symlinks out of the root (to /etc, to .., chains, dangling ones), the sibling-prefix directory
 * <base>/repo-old holding a secret, a FIFO, a planted executable bin/rg, binary files and awkward file names.
 */
export async function buildHostileRepo(opts: { bigFileBytes?: number } = {}): Promise<HostileRepo> {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-bash-')));
  const root = path.join(base, 'repo');
  const marker = path.join(base, 'PLANTED-RG-RAN');
  const files: Record<string, string | Buffer> = {
    'README.md': 'hello world\nneedle here\n',
    'src/a.ts': 'export const a = "needle";\n',
    'src/b.ts': 'export const b = 2;\n',
    'src/c.js': 'module.exports = "needle";\n',
    'src/nested/d.ts': 'export const d = "needle";\n',
    '.hidden.ts': 'const hidden = "needle";\n',
    '.gitignore': 'ignored.txt\n',
    'patterns.txt': 'needle\n',
    'name with space.txt': 'spaced needle\n',
    'ünïcode.txt': 'unicode needle\n',
    'new\nline.txt': 'newline needle\n',
    '-dash.txt': 'dash needle\n',
    '+5f': 'plus file\n',
    'binary.bin': Buffer.from([0, 1, 2, 3, 0, 255, 254, 0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65]),
    'bin/rg': `#!/bin/sh\ntouch '${marker}'\necho PLANTED\n`,
  };
  for (const [rel, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await fs.writeFile(path.join(root, rel), content);
  }
  await fs.chmod(path.join(root, 'bin/rg'), 0o755);
  if (opts.bigFileBytes) await fs.writeFile(path.join(root, 'big.txt'), bigText(opts.bigFileBytes));

  await fs.mkdir(path.join(base, 'repo-old'));
  await fs.writeFile(path.join(base, 'repo-old/secret.txt'), `${SIBLING_SECRET}\n`);
  await fs.mkdir(path.join(base, 'outside'));
  await fs.writeFile(path.join(base, 'outside/secret.txt'), `${OUTSIDE_SECRET}\n`);

  await fs.mkdir(path.join(root, 'links'));
  await fs.symlink('/etc', path.join(root, 'links/etc'));
  await fs.symlink('../..', path.join(root, 'links/dotdot'));
  await fs.symlink('..', path.join(root, 'up'));
  await fs.symlink('chain2', path.join(root, 'links/chain1'));
  await fs.symlink('../../outside/secret.txt', path.join(root, 'links/chain2'));
  await fs.symlink('../../repo-old', path.join(root, 'links/sibling'));
  await fs.symlink('../src/a.ts', path.join(root, 'links/inside'));
  await fs.symlink('/etc/passwd', path.join(root, '.evil'));
  await fs.symlink('/proc/self/environ', path.join(root, 'procself'));
  // In spelunk's process /proc/self/cwd is spelunk's directory; in a child it is the root: refused by its text.
  await fs.symlink('/proc/self/cwd', path.join(root, 'link-proc-cwd'));
  // Links to outside directories that do not exist: a refusal must read the same as for links/etc and links/sibling.
  await fs.symlink(MISSING_OUTSIDE_DIR, path.join(root, 'links/dangling'));
  await fs.symlink('../../nothere', path.join(root, 'links/dangling-rel'));
  // A chain that only a child process would resolve to /: z → <cwd>/code/proj → sub/proj → /.
  await fs.mkdir(path.join(root, 'sub'));
  await fs.symlink('/', path.join(root, 'sub/proj'));
  await fs.symlink('sub', path.join(root, 'code'));
  await fs.symlink('/proc/self/cwd/code/proj', path.join(root, 'z'));
  execFileSync('/usr/bin/mkfifo', [path.join(root, 'fifo')]);

  return { base, root, marker, cleanup: () => fs.rm(base, { recursive: true, force: true }) };
}

function bigText(bytes: number): Buffer {
  // No search term of the tests occurs in it, so searches scan all of it without flooding the output.
  const line = 'a fairly ordinary line of filler text\n';
  return Buffer.alloc(bytes, line);
}

/** Every entry under `dir`: type, mode, size, and a content hash or symlink target, keyed by relative path. */
export async function snapshot(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (rel: string): Promise<void> => {
    const abs = path.join(dir, rel);
    const stat = await fs.lstat(abs);
    const mode = (stat.mode & 0o7777).toString(8);
    if (stat.isSymbolicLink()) {
      out.set(rel, `link ${mode} -> ${await fs.readlink(abs)}`);
    } else if (stat.isDirectory()) {
      out.set(rel, `dir ${mode}`);
      for (const name of (await fs.readdir(abs)).sort()) await walk(path.join(rel, name));
    } else if (stat.isFile()) {
      const hash = createHash('sha256').update(await fs.readFile(abs)).digest('hex');
      out.set(rel, `file ${mode} ${stat.size} ${hash}`);
    } else {
      out.set(rel, `special ${mode} ${stat.isFIFO() ? 'fifo' : 'other'}`);
    }
  };
  await walk('.');
  return out;
}
