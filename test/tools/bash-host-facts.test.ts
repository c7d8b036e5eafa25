import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolvePrograms, type Programs } from '../../src/sandbox/programs.js';
import { createBashTool } from '../../src/tools/bash.js';
import type { ToolOutcome } from '../../src/tools/tool.js';
import { installedHere } from '../support/installed.js';

/**
 * The bash tool's answers hold facts about the repository's files only: owners as numbers (never names from the host's
 * /etc/passwd), no device, mount point or filesystem of the host, and xxd never gets an output file (red team 3, F3 and F9).
 */

let root: string;
let programs: Programs;
const uid = process.getuid?.() ?? 0;
const user = os.userInfo().username;

beforeAll(async () => {
  programs = await resolvePrograms();
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-host-facts-')));
  await fs.writeFile(path.join(root, 'a.txt'), 'alpha\nbeta\n');
});
afterAll(async () => fs.rm(root, { recursive: true, force: true }));

async function run(command: string): Promise<ToolOutcome> {
  const bash = createBashTool(programs);
  const parsed = bash.parse({ command });
  if (!parsed.ok) throw new Error(parsed.error);
  return bash.run(parsed.value, { root, signal: new AbortController().signal, timeoutMs: 30_000 });
}

/** The output lines between the echoed command and the status line. */
function body(outcome: ToolOutcome): string {
  return outcome.content.split('\n').filter((line) => !line.startsWith('$ ') && !/^\[exit \d+\]$/.test(line)).join('\n');
}

describe('owners are numbers, and the host filesystem is not described', () => {
  it.each([
    ['ls -l a.txt', new RegExp(`^-\\S+ +1 +${uid} +\\d+ +11 `, 'm')],
    ['ls -la', new RegExp(`^-\\S+ +1 +${uid} +\\d+ +11 .* a\\.txt$`, 'm')],
    ['ls -o a.txt', new RegExp(`^-\\S+ +1 +${uid} +11 `, 'm')],
    ['stat a.txt', new RegExp(`^Access: \\(0\\d{3}/-\\S+\\)  Uid: ${uid}  Gid: \\d+$`, 'm')],
    ['stat -t a.txt', new RegExp(`^a\\.txt 11 \\d+ [0-9a-f]+ ${uid} \\d+ \\d+ 1 \\d+ \\d+ \\d+ \\d+$`, 'm')],
    ["find . -name a.txt -printf '%U %G %s %p\\n'", new RegExp(`^${uid} \\d+ 11 \\./a\\.txt$`, 'm')],
  ])('%j prints numeric owners and no host facts', async (command, shape) => {
    const outcome = await run(command);
    expect(outcome.isError, outcome.content).toBe(false);
    const text = body(outcome);
    expect(text).toMatch(shape);
    // The name never stands where an owner does (a note may say "root" in its own sense).
    if (!/^\d+$/.test(user)) expect(text).not.toMatch(new RegExp(`^\\S+ +\\d+ +${user} |Uid: \\( *\\d+/ *${user}\\)|^${user} `, 'm'));
    expect(text).not.toMatch(/Device:|IO Block|Blocks free|Type: /);
  });

  it.each([
    ['stat -f .', 'reports the host filesystem'], ["stat -c '%m %d' .", 'the directive %m'], ["stat -c '%U' a.txt", 'the directive %U'],
    ['find . -ls', 'user database'], ["find . -printf '%u'", '%u is refused'], ['find . -fstype ext4', 'host filesystem'],
    ['sort -S 1 a.txt', 'from 64M'], ["jq -n '$ ENV'", '$ENV'], ["jq -n '$ __loc__'", '$__loc__'],
  ])('%j is refused (%s)', async (command, fragment) => {
    const outcome = await run(command);
    expect(outcome.isError).toBe(true);
    expect(outcome.content).toContain(fragment);
  });

  const tree = installedHere('tree');
  it.skipIf(!tree)(`tree -u is refused (names from /etc/passwd)${tree ? '' : ' [skipped: tree is not installed]'}`, async () => {
    expect((await run('tree -u')).content).toContain('owner names');
  });
});

const xxd = installedHere('xxd');
describe.skipIf(!xxd)(`xxd never writes its second operand${xxd ? '' : ' [skipped: xxd is not installed]'}`, () => {
  it.each([['xxd a.txt -u'], ['xxd a.txt -c5'], ['xxd -- a.txt -u'], ['xxd a.txt out']])('%j is refused and creates nothing', async (command) => {
    const before = (await fs.readdir(root)).sort();
    const outcome = await run(command);
    expect(outcome.isError).toBe(true);
    expect(outcome.content).toContain('output file');
    expect((await fs.readdir(root)).sort()).toEqual(before);
  });

  it('xxd -u a.txt (the flag before the file) dumps in upper case', async () => {
    const outcome = await run('xxd -u -c 16 a.txt');
    expect(body(outcome)).toContain('00000000: 616C 7068 610A 6265 7461 0A');
  });
});
