import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/args.js';
import { resolveConfig, type Config } from '../../src/config.js';
import { exitCodeFor } from '../../src/output/result.js';
import { runQuestion } from '../../src/run/run-question.js';
import { openSession, type Session, type SessionOptions } from '../../src/run/session.js';
import { chooseSandbox } from '../../src/sandbox/choose.js';
import { currentSandbox, useSandbox } from '../../src/sandbox/exec.js';
import { TABLES_ONLY, type SandboxKind } from '../../src/sandbox/kernel.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { Tool } from '../../src/tools/tool.js';
import type { ProofChange, ReadOnlyProof } from '../../src/sandbox/readonly.js';
import { attribute, PROVEN_BY_KERNEL, PROVEN_BY_TIMING, PROVEN_BY_WALK, type Window } from '../../src/run/concurrent.js';
import { runCli, TEST_STATE_HOME } from '../support/cli.js';
import { reply, startMockApi, text, toolUse, type MockApi, type Scripted } from '../support/mock-api.js';
import { APP_FILES, appFinding, useRepo } from '../support/temp-repo.js';

const probe = await chooseSandbox('required');
const WHY_SKIPPED = probe.ok ? '' : ` (skipped: ${probe.error})`;

describe('attribute: which of the proof\'s changes could be spelunk\'s', () => {
  const change = (p: string | null, ctimeMs: number | null): ProofChange => ({ text: `changed: ${p ?? 'HEAD'}`, path: p, ctimeMs });
  const proof = (changes: ProofChange[], complete = true): ReadOnlyProof => ({
    verified: changes.length === 0 && complete,
    detail: changes.length === 0 ? (complete ? null : 'the read-only check did not finish within 120 s') : changes.map((c) => c.text).join('; '),
    changes,
    complete,
    head: null,
  });
  const tool: Window[] = [{ start: 1_000, end: 2_000 }];
  const none = async (): Promise<Set<string>> => new Set();
  const ignoring = (...paths: string[]) => async (): Promise<Set<string>> => new Set(paths);

  it.each<[string, 'kernel' | 'tables', ReadOnlyProof, { verified: boolean; how: string | null; paths?: string[]; ignored?: { path: string; entries: number }[] }]>([
    ['nothing changed, kernel', 'kernel', proof([]), { verified: true, how: PROVEN_BY_KERNEL }],
    ['nothing changed, tables', 'tables', proof([]), { verified: true, how: PROVEN_BY_WALK }],
    ['kernel: a change during a tool call is still another program\'s (no child can write)', 'kernel', proof([change('a.ts', 1_500)]), { verified: true, how: PROVEN_BY_KERNEL, paths: ['a.ts'] }],
    ['kernel: a walk that did not finish proves nothing about others, the mounts prove spelunk', 'kernel', proof([], false), { verified: true, how: PROVEN_BY_KERNEL, paths: [] }],
    ['tables: a change between tool calls is another program\'s', 'tables', proof([change('a.ts', 3_000)]), { verified: true, how: PROVEN_BY_TIMING, paths: ['a.ts'] }],
    ['tables: a change before the first tool call', 'tables', proof([change('a.ts', 900)]), { verified: true, how: PROVEN_BY_TIMING, paths: ['a.ts'] }],
    ['tables: a change during a tool call fails', 'tables', proof([change('a.ts', 1_500)]), { verified: false, how: null }],
    ['tables: within the clock margin after a tool call fails', 'tables', proof([change('a.ts', 2_040)]), { verified: false, how: null }],
    ['tables: within the clock margin before a tool call fails', 'tables', proof([change('a.ts', 960)]), { verified: false, how: null }],
    ['tables: one inside among many outside fails', 'tables', proof([change('a.ts', 3_000), change('b.ts', 1_999)]), { verified: false, how: null, paths: ['a.ts'] }],
    ['tables: HEAD (no ctime) with a complete walk is timed by the walk\'s .git entries', 'tables', proof([change(null, null), change('.git/', 3_000)]), { verified: true, how: PROVEN_BY_TIMING, paths: ['HEAD'], ignored: [{ path: '.git/', entries: 1 }] }],
    ['tables: no walk (no find): a change without a ctime cannot be timed', 'tables', proof([change('gone.ts', null)], false), { verified: false, how: null }],
    ['tables: a walk that did not finish is no proof', 'tables', proof([], false), { verified: false, how: null }],
  ])('%s', async (_name, sandbox, given, expected) => {
    const got = await attribute(given, { sandbox, windows: tool, coarse: false, reads: [], ignored: none });
    expect({ verified: got.verified, how: got.how }).toEqual({ verified: expected.verified, how: expected.how });
    if (expected.paths) expect(got.concurrent?.paths).toEqual(expected.paths);
    if (expected.ignored) expect(got.concurrent?.ignored).toEqual(expected.ignored);
    if (!expected.verified) expect(got.detail).toContain(given.changes.length > 0 ? 'while a tool call of spelunk ran' : 'did not finish');
  });

  it('a tool call still running at the end (no tool_end) counts until the end', async () => {
    const got = await attribute(proof([change('a.ts', 10_000)]), { sandbox: 'tables', windows: [{ start: 1_000, end: Infinity }], coarse: false, reads: [], ignored: none });
    expect(got.verified).toBe(false);
  });

  it('on a filesystem of whole seconds the margin is two seconds', async () => {
    const opts = { sandbox: 'tables' as const, windows: tool, reads: [], ignored: none };
    expect((await attribute(proof([change('a.ts', 3_500)]), { ...opts, coarse: false })).verified).toBe(true);
    expect((await attribute(proof([change('a.ts', 3_500)]), { ...opts, coarse: true })).verified).toBe(false);
  });

  it('gitignored output is summarised by its outermost ignored directory, not listed; a directory changed only by it is folded in', async () => {
    const changes = [
      change('./', 3_000),
      change('target/', 3_000),
      change('target/debug/', 3_000),
      change('target/debug/a.o', 3_000),
      change('target/debug/b.o', 3_000),
      change('src/', 3_000),
      change('src/__pycache__/', 3_000),
      change('src/__pycache__/m.pyc', 3_000),
      change('src/main.rs', 3_000),
    ];
    const got = await attribute(proof(changes), { sandbox: 'kernel', windows: tool, coarse: false, reads: ['src/main.rs'], ignored: ignoring('target', 'src/__pycache__') });
    // ./ and src/ changed because target/ and src/__pycache__/ were created in them: counted with those.
    expect(got.concurrent).toEqual({
      paths: ['src/main.rs'],
      more: 0,
      ignored: [{ path: 'target/', entries: 5 }, { path: 'src/__pycache__/', entries: 3 }],
    });
    expect(got.readChanged).toEqual(['src/main.rs']);
  });

  it('lists at most 20 paths and counts the rest', async () => {
    const changes = Array.from({ length: 25 }, (_, i) => change(`f${i}.ts`, 3_000));
    const got = await attribute(proof(changes), { sandbox: 'kernel', windows: [], coarse: false, reads: [], ignored: none });
    expect(got.concurrent?.paths).toHaveLength(20);
    expect(got.concurrent?.more).toBe(5);
  });
});

/**
 * A writer running during the answer, through the whole CLI in both layers: the fake API holds its response while
 * the writer edits the repository, so every change falls between tool calls, as an editor's save or a build's would.
 */
describe('edits by other programs during the answer are information, not failures', () => {
  let api: MockApi;
  const repo = useRepo({ ...APP_FILES, '.gitignore': 'target/\n__pycache__/\n' }, { git: true });
  afterEach(async () => {
    await api?.close();
    rmSync(path.join(repo.root, 'target'), { recursive: true, force: true });
    rmSync(path.join(repo.root, 'src', '__pycache__'), { recursive: true, force: true });
    // Give the files back what the next test expects (an edit made by a test is undone).
    for (const rel of ['src/server.js', 'src/router.js', 'src/auth.js']) writeFileSync(path.join(repo.root, rel), APP_FILES[rel]!);
    await new Promise((resolve) => setTimeout(resolve, 120));
  });

  /** The answer, held 400 ms while `write` runs 150 ms into it (between the tool calls, never during one). */
  const during = (write: () => void, answer: string): Scripted => () => {
    setTimeout(write, 150);
    return { ...reply(text(answer)), delayMs: 400 } as ReturnType<typeof reply>;
  };
  const writers: [string, () => void, (c: { paths: string[]; ignored: { path: string; entries: number }[] }) => void][] = [
    [
      'ignored build output (target/, __pycache__/)',
      () => {
        mkdirSync(path.join(repo.root, 'target', 'debug'), { recursive: true });
        for (let i = 0; i < 30; i++) writeFileSync(path.join(repo.root, 'target', 'debug', `o${i}.o`), 'x');
        mkdirSync(path.join(repo.root, 'src', '__pycache__'), { recursive: true });
        writeFileSync(path.join(repo.root, 'src', '__pycache__', 'auth.pyc'), 'x');
      },
      (c) => {
        expect(c.paths).toEqual([]);
        expect(c.ignored).toEqual([{ path: 'target/', entries: 33 }, { path: 'src/__pycache__/', entries: 3 }]);
      },
    ],
    [
      'a tracked file edited',
      () => writeFileSync(path.join(repo.root, 'src', 'server.js'), '// saved by an editor\n'),
      (c) => expect(c.paths).toEqual(['src/server.js']),
    ],
    [
      'a file the model read edited',
      () => writeFileSync(path.join(repo.root, 'src', 'router.js'), '// saved by an editor\n'),
      (c) => expect(c.paths).toEqual(['src/router.js']),
    ],
  ];
  const layers: [string, string[], boolean][] = [
    ['tables', ['--sandbox', 'off'], true],
    [`kernel${WHY_SKIPPED}`, ['--sandbox', 'required'], probe.ok],
  ];

  describe.each(layers)('%s', (_layer, flags, runs) => {
    it.skipIf(!runs).each(writers)('%s: answered, exit 0, the change in concurrent_changes and one warning', async (_name, write, check) => {
      api = await startMockApi({ minCacheTokens: 256 });
      api.enqueue(reply(toolUse('read_file', { path: 'src/router.js' })), during(write, 'Routes are in src/router.js:1.'));
      const run = await runCli(['-C', repo.root, ...flags, '--output-format', 'json', 'where are routes?'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } });
      const result = JSON.parse(run.stdout);
      expect(run.code).toBe(0);
      expect(result).toMatchObject({ subtype: 'success', is_error: false, readonly_verified: true, result: 'Routes are in src/router.js:1.' });
      expect(result.readonly_proof).toBe(flags.includes('off') ? PROVEN_BY_TIMING : PROVEN_BY_KERNEL);
      check(result.concurrent_changes);
      const warnings = run.stderr.split('\n').filter((l) => l.includes('other programs changed the repository'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('(not spelunk: ');
    });

    it.skipIf(!runs)('stream-json carries them in its result line, and text mode warns once on stderr', async () => {
      api = await startMockApi({ minCacheTokens: 256 });
      const edit = (): void => writeFileSync(path.join(repo.root, 'src', 'server.js'), '// saved\n');
      api.enqueue(reply(toolUse('read_file', { path: 'src/router.js' })), during(edit, 'One.'), reply(toolUse('read_file', { path: 'src/router.js' })), during(edit, 'Two.'));
      const env = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url };
      const stream = await runCli(['-C', repo.root, ...flags, '--output-format', 'stream-json', 'q'], { env });
      expect(stream.code).toBe(0);
      const last = JSON.parse(stream.stdout.trim().split('\n').at(-1)!);
      expect(last).toMatchObject({ type: 'result', readonly_verified: true, concurrent_changes: { paths: ['src/server.js'] } });
      const textRun = await runCli(['-C', repo.root, ...flags, 'q'], { env });
      expect(textRun.code).toBe(0);
      expect(textRun.stdout).toBe('Two.\n');
      expect(textRun.stderr.match(/other programs changed the repository during the run: src\/server\.js \(not spelunk: /g)).toHaveLength(1);
      expect(textRun.stderr).not.toContain('the repository changed during the run');
    });

    it.skipIf(!runs)('an audit whose evidence moved (a file it read changed) is inconclusive, exit 5', async () => {
      api = await startMockApi({ minCacheTokens: 256 });
      const edit = (): void => writeFileSync(path.join(repo.root, 'src', 'auth.js'), '// rewritten\n');
      const report = reply(toolUse('report_findings', { verdict: 'fail', summary: 'login shells out', findings: [appFinding()] }));
      // The edit comes after the report was filed (its finding checked against the file as the model saw it).
      api.enqueue(reply(toolUse('read_file', { path: 'src/auth.js' })), report, during(edit, 'Reported.'));
      const run = await runCli(['-C', repo.root, ...flags, 'audit', '--output-format', 'json', 'does login shell out?'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } });
      const result = JSON.parse(run.stdout);
      expect(run.code).toBe(5);
      expect(result.audit).toMatchObject({ verdict: 'inconclusive', findings: [expect.objectContaining({ path: 'src/auth.js' })] });
      expect(result.warnings).toContainEqual(expect.stringMatching(/^audit inconclusive: files it read changed during the run \(src\/auth\.js\); its fail verdict/));
    });
  });
});

/**
 * Under the tables alone, a change made while a tool call runs could be that tool's: it still fails the run. No
 * allowed program can write, so the test stands in a tool that does (a child that got past the tables).
 */
describe('under the tables, a change during a tool call still fails the run', () => {
  let api: MockApi;
  const repo = useRepo(APP_FILES, { git: true });
  afterEach(async () => {
    useSandbox(previous);
    await api?.close();
    rmSync(path.join(repo.root, 'src', 'escaped.js'), { force: true });
  });
  const previous = currentSandbox();

  it('tables: failed, exit 1, the change named once without repeating itself', () => escapeRun('tables', false));
  it.skipIf(!probe.ok)(`kernel: no child can write there, so the same change is another program's${WHY_SKIPPED}`, () => escapeRun('kernel', true));

  async function escapeRun(kind: SandboxKind, verified: boolean): Promise<void> {
    useSandbox(kind === 'kernel' && probe.ok ? probe.sandbox : TABLES_ONLY);
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('escape', {})), reply(text('Done.')));
    const parsed = await parseArgs(['-C', repo.root, '--output-format', 'json', 'q'], undefined);
    if (parsed.kind !== 'run') throw new Error('not a run');
    const env = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, HOME: '/nonexistent-home', XDG_STATE_HOME: TEST_STATE_HOME };
    const config = await resolveConfig(parsed.flags, env, repo.root, parsed.audit);
    const open = async (c: Config, opts: SessionOptions): Promise<Session> => {
      const session = await openSession(c, opts);
      const escape: Tool<Record<string, never>> = {
        name: 'escape',
        description: 'writes a file, as no allowed program can',
        inputSchema: { type: 'object', properties: {} },
        parse: () => ({ ok: true, value: {} }),
        display: () => 'escape',
        run: async () => {
          await opts.toolsReady;
          writeFileSync(path.join(repo.root, 'src', 'escaped.js'), 'written by a tool\n');
          return { content: 'wrote', summary: 'wrote', isError: false };
        },
      };
      return { ...session, registry: new ToolRegistry([escape]) };
    };
    const outcome = await runQuestion({ question: 'q', open, env, front: 'cli' }, config, {}, new AbortController().signal);
    expect(outcome.result.readonly_verified).toBe(verified);
    if (verified) {
      expect(outcome.result.concurrent_changes?.paths).toEqual(['src/', 'src/escaped.js']);
      expect(exitCodeFor(outcome.result)).toBe(0);
      return;
    }
    expect(exitCodeFor(outcome.result)).toBe(1);
    expect(outcome.result.error?.message).toMatch(/^the repository changed during the run: .*changed: src\/escaped\.js.* \(while a tool call of spelunk ran\)$/);
    expect(outcome.result.error?.message.match(/the repository changed/g)).toHaveLength(1);
  }
});
