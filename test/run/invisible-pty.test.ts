import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runBinary } from '../support/binary.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { PtySession } from '../support/pty.js';

// F14: bidi, invisible and tag characters in answers, locate's lines, file names and the Sources block reach the
// terminal only as escapes, on a real terminal (the built binary in a pty) and on plain stdout.
const ALM = '\u061c';
const TAG_A = '\u{e0041}';
const INVISIBLE = [ALM, TAG_A, '\u{e0042}', '\u00ad', '\u2062', '\u206a', '\ufff9', '\u180e', '\u2066', '\u202e'];
const BIDI_FILE = `src/bi${ALM}di.ts`;
const TAG_FILE = `src/tag${TAG_A}.ts`;

let api: MockApi | undefined;
let parent: string;
let root: string;
let pty: PtySession | null = null;

beforeAll(() => {
  parent = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'spelunk-invisible-')));
  root = path.join(parent, 'repo');
  mkdirSync(path.join(root, 'src'), { recursive: true });
  writeFileSync(path.join(root, BIDI_FILE), 'export function exportedBidi() {}\n');
  writeFileSync(path.join(root, TAG_FILE), 'export function exportedTag() {}\n');
});
afterAll(() => rmSync(parent, { recursive: true, force: true }));
afterEach(async () => {
  pty?.kill();
  pty = null;
  await api?.close();
  api = undefined;
});

function rawCharacters(output: string): string[] {
  return INVISIBLE.filter((c) => output.includes(c)).map((c) => `U+${c.codePointAt(0)!.toString(16)}`);
}

describe('invisible characters on the way to a person', () => {
  it('locate on stdout: file names with U+061C and a tag character are escaped', async () => {
    const run = await runBinary(['locate', '-C', root, 'exported function'], { cwd: root, env: { HOME: parent } });
    expect(run.code).toBe(0);
    expect(rawCharacters(run.stdout + run.stderr)).toEqual([]);
    expect(run.stdout).toContain('src/bi\\u061cdi.ts');
    expect(run.stdout).toContain('src/tag\\u{e0041}.ts');
  });

  const answer = `Defined in ${BIDI_FILE}:1 and ${TAG_FILE}:1. Hidden: ${TAG_A}\u{e0042}, soft\u00adhyphen, a\u2062b, \u206aold, \ufff9note, m\u180en, \u2066iso\u2069, \u202edesrever.`;

  it.each([[['--no-render']], [[]]])('the answer, the tool line and the Sources block in a pty (%j)', async (flags) => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('bash', { command: 'ls src' })), reply(text(answer)));
    pty = new PtySession(['-C', root, ...flags, 'where are the exported functions?'], {
      ANTHROPIC_API_KEY: 'k',
      ANTHROPIC_BASE_URL: api.url,
      HOME: parent,
      XDG_STATE_HOME: parent,
    });
    expect(await pty.exited).toBe(0);
    expect(rawCharacters(pty.output)).toEqual([]);
    const screen = pty.screen();
    expect(screen).toContain('bi\\u061cdi.ts');
    expect(screen).toContain('\\u{e0041}\\u{e0042}');
    expect(screen).toContain('soft\\xadhyphen');
    expect(screen).toContain('\\u202edesrever');
    // The Sources block names both files, escaped.
    expect(screen).toMatch(/Sources[\s\S]*src\/bi\\u061cdi\.ts:1/);
    expect(screen).toMatch(/Sources[\s\S]*src\/tag\\u\{e0041\}\.ts:1/);
  });

  it('json on stdout keeps the answer as JSON text (escaped by JSON, not altered)', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(text(answer)));
    const run = await runBinary(['-C', root, '--output-format', 'json', 'where?'], {
      cwd: root,
      env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, HOME: parent, XDG_STATE_HOME: parent },
    });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).result).toBe(answer);
    expect(rawCharacters(run.stderr)).toEqual([]);
  });
});
