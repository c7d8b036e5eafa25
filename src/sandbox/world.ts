import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';

/**
 * The world of one program under the kernel sandbox: the files it needs to run and nothing else — its binary, the
 * shared objects the dynamic loader maps for it, the loader itself, and the data files it provably reads. No shell,
 * no other program: a program that tries to start another gets "No such file or directory".
 */
export type World = { ok: true; files: readonly string[] } | { ok: false; error: string };

/** Runs the loader's listing; injected so this module needs no spawner (exec.ts imports it). */
export type ListRunner = (loader: string, args: readonly string[]) => Promise<{ stdout: string; stderr: string; exitCode: number | null }>;

/** The bytes of an ELF header and program header table spelunk reads (64-bit headers are 64 bytes, entries 56). */
const ELF_HEADER_BYTES = 64;
const MAX_PROGRAM_HEADERS = 256;
const PT_INTERP = 3;
const MAX_INTERP_BYTES = 4096;

/**
 * The UTF-8 locale CHILD_ENV names (`C.UTF-8`). glibc (2.36 here) does not build it in: without its files
 * setlocale fails and `wc -m` counts bytes, so every program that loads the locale gets its directory (the first that
 * exists; an archive only where the distribution keeps locales there).
 */
const LOCALE_CANDIDATES = ['/usr/lib/locale/C.utf8', '/usr/lib/locale/C.UTF-8', '/usr/lib/locale/locale-archive'];

/**
 * Programs that never load the UTF-8 locale: git runs with `LC_ALL=C` (git.ts), so its world has no locale data.
 * Keyed by the binary's base name.
 */
const NO_LOCALE = new Set(['git']);

/**
 * Data files per program beyond the locale, by base name, each a function of what the program says it reads:
 * `file` reads its magic database from the list `file --version` prints (`magic file from /etc/magic:/usr/share/misc/
 * magic`), each path as itself or with `.mgc` (the compiled form libmagic tries first).
 */
const DATA_FILES: Readonly<Record<string, (run: ListRunner, binary: string) => Promise<string[]>>> = {
  file: async (run, binary) => {
    const said = await run(binary, ['--version']);
    const line = /magic file from (.+)/.exec(`${said.stdout}\n${said.stderr}`)?.[1] ?? '';
    return line
      .split(':')
      .filter((entry) => entry.startsWith('/'))
      .flatMap((entry) => [`${entry}.mgc`, entry]);
  },
};

/**
 * The world of `binary` (an absolute, real path): resolved once per program per process, since the listing costs a
 * process start and the answer cannot change while spelunk runs (a refusal is asked again next time). `run` starts the loader (outside any sandbox, with
 * the fixed environment: a caller's LD_LIBRARY_PATH would otherwise change the answer). Never rejects.
 */
export function programWorld(binary: string, run: ListRunner): Promise<World> {
  const known = worlds.get(binary);
  if (known !== undefined) return known;
  const resolving = resolveWorld(binary, run)
    .catch((error: unknown): World => ({ ok: false, error: error instanceof Error ? error.message : String(error) }))
    .then((world) => {
      // A refusal is not kept: a listing that timed out on a loaded machine must not refuse the program for good.
      if (!world.ok) worlds.delete(binary);
      return world;
    });
  worlds.set(binary, resolving);
  return resolving;
}

/**
 * Worlds by binary, for the life of the process (one entry per program spelunk starts: about thirty at most). Module
 * state on purpose: the answer is a fact about the machine, like TRUSTED_PATH, not about a call.
 */
const worlds = new Map<string, Promise<World>>();

async function resolveWorld(binary: string, run: ListRunner): Promise<World> {
  const loader = await elfInterpreter(binary);
  if (typeof loader !== 'string' && loader !== null) return loader;
  const data = await dataFiles(binary, run, loader !== null);
  // Static (rg from @vscode/ripgrep is static-pie, Rust on musl: no glibc locale): the binary alone, and its data.
  if (loader === null) return { ok: true, files: [binary, ...data] };
  const libraries = await loaderListing(loader, binary, run);
  if (!Array.isArray(libraries)) return libraries;
  return { ok: true, files: [...new Set([binary, loader, ...libraries, ...data])] };
}

/**
 * The shared objects `binary` loads, as the loader itself lists them (`ld.so --inhibit-cache --list`), rather than
 * read from the ELF dynamic section here: the loader's search (RUNPATH, `$ORIGIN`, the glibc-hwcaps subdirectories,
 * the multiarch directories) is the one that will run, and a second implementation of it is where the two would
 * differ. `--inhibit-cache` because the sandbox has no /etc/ld.so.cache: the listing then searches exactly as the
 * loader inside will, over the same files at the same paths, so it finds the same ones; a library only the cache
 * knows is "not found" here, and the program refused with that line rather than failing inside.
 */
async function loaderListing(loader: string, binary: string, run: ListRunner): Promise<string[] | World> {
  const listed = await run(loader, ['--inhibit-cache', '--list', binary]);
  if (listed.exitCode !== 0) {
    return { ok: false, error: `its loader could not list its libraries (${firstLine(listed.stderr) || `exit ${listed.exitCode ?? 'unknown'}`})` };
  }
  const files: string[] = [];
  for (const line of listed.stdout.split('\n')) {
    if (/=>\s*not found/.test(line)) return { ok: false, error: `library ${line.trim().split(/\s/)[0] ?? ''} not found outside the loader's cache` };
    // `libz.so.1 => /lib/…/libz.so.1 (0x…)`, the loader as `/lib64/ld-linux-x86-64.so.2 (0x…)`; the vDSO has no path.
    const file = /(?:=>\s*|^\s*)(\/\S+)\s+\(0x[0-9a-f]+\)/.exec(line)?.[1];
    if (file !== undefined) files.push(file);
  }
  return files;
}

/**
 * The locale (for a program linked against the C library's loader, unless it never loads it) and the program's own
 * data files, those that exist.
 */
async function dataFiles(binary: string, run: ListRunner, dynamic: boolean): Promise<string[]> {
  const name = path.basename(binary);
  const locale = !dynamic || NO_LOCALE.has(name) ? [] : LOCALE_CANDIDATES.filter((candidate) => existsSync(candidate)).slice(0, 1);
  const own = (await DATA_FILES[name]?.(run, binary)) ?? [];
  return [...locale, ...own.filter((file) => existsSync(file))];
}

/**
 * The program interpreter (PT_INTERP) named in the ELF program headers of `binary`: null for a static binary, a
 * refusal for a file that is not ELF (a script would need its interpreter, which no world holds).
 */
async function elfInterpreter(binary: string): Promise<string | null | World> {
  const handle = await fs.open(binary, 'r');
  try {
    const header = Buffer.alloc(ELF_HEADER_BYTES);
    await handle.read(header, 0, ELF_HEADER_BYTES, 0);
    if (header.readUInt32BE(0) !== 0x7f454c46) return { ok: false, error: 'not an ELF executable (the sandbox holds no interpreter for scripts)' };
    const wide = header[4] === 2;
    const little = header[5] === 1;
    const u16 = (buf: Buffer, at: number): number => (little ? buf.readUInt16LE(at) : buf.readUInt16BE(at));
    const u32 = (buf: Buffer, at: number): number => (little ? buf.readUInt32LE(at) : buf.readUInt32BE(at));
    const word = (buf: Buffer, at: number): number =>
      wide ? Number(little ? buf.readBigUInt64LE(at) : buf.readBigUInt64BE(at)) : u32(buf, at);
    const tableAt = word(header, wide ? 0x20 : 0x1c);
    const entrySize = u16(header, wide ? 0x36 : 0x2a);
    const count = Math.min(u16(header, wide ? 0x38 : 0x2c), MAX_PROGRAM_HEADERS);
    const table = Buffer.alloc(entrySize * count);
    await handle.read(table, 0, table.length, tableAt);
    for (let i = 0; i < count; i++) {
      const entry = table.subarray(i * entrySize, (i + 1) * entrySize);
      if (u32(entry, 0) !== PT_INTERP) continue;
      const size = Math.min(word(entry, wide ? 0x20 : 0x10), MAX_INTERP_BYTES);
      const name = Buffer.alloc(size);
      await handle.read(name, 0, size, word(entry, wide ? 0x08 : 0x04));
      return name.toString('utf8').replace(/\0.*$/s, '');
    }
    return null;
  } finally {
    await handle.close();
  }
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}
