import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runBinary } from '../support/binary.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { makeMonorepo, SECRET, type Monorepo } from '../support/monorepo.js';

/**
 * Issue 24, item 3, through the built binary (the kernel sandbox where bwrap works, `--sandbox auto`): a root that is
 * a subdirectory of a monorepo clone gets the git tool and `audit --diff`, both confined to it.
 */
let mono: Monorepo;
let home: string;
let api: MockApi | undefined;

beforeAll(async () => {
  mono = await makeMonorepo();
  home = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-audit-subdir-home-'));
});
afterAll(async () => {
  await mono.cleanup();
  await fs.rm(home, { recursive: true, force: true });
});
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const FINDING = { rule_id: 'r', severity: 'high', title: 'a3 added', message: 'line 3 is new', path: 'app.txt', start_line: 3 };

function run(args: string[]) {
  const env = { HOME: home, XDG_STATE_HOME: home, XDG_CACHE_HOME: home, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api!.url };
  return runBinary(['-C', mono.root, ...args], { cwd: mono.root, env, stdin: '' });
}

describe('a subdirectory root (spelunk -C packages/a in a monorepo)', () => {
  it('audit --diff HEAD~1 diffs packages/a only, paths relative to it; the finding on the changed line fails the run', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('report_findings', { verdict: 'fail', summary: 's', findings: [FINDING] })), reply(text('Done.')));
    const sarif = path.join(home, 'out.sarif');
    const result = await run(['audit', '--diff', 'HEAD~1', '--output-format', 'json', '--sarif', sarif, 'what changed?']);
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr).toContain(`git history: the repository at ${mono.top}, confined to packages/a/ (only the history of files under this root)`);
    const first = JSON.stringify(api.requests.find((r) => r.path === '/v1/messages')?.body.messages?.[0]?.content);
    expect(first).toContain('This audit is scoped to a change (HEAD~1...HEAD): 1 file(s)');
    expect(first).toContain('- app.txt: 3');
    expect(first).not.toContain(SECRET);
    expect(first).not.toContain('packages/b');
    const json = JSON.parse(result.stdout);
    expect(json.audit.findings.map((f: { diff_class: string }) => f.diff_class)).toEqual(['changed-line']);
    const log = JSON.parse(await fs.readFile(sarif, 'utf8'));
    expect(log.runs[0].results[0].locations[0].physicalLocation.artifactLocation.uri).toBe('app.txt');
  });

  it('the git tool runs confined: log -p shows a\'s changes, never b\'s content; b\'s file through ../ is refused', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(
      reply(toolUse('git', { command: 'log -p --format=%s' }, 'toolu_1')),
      reply(toolUse('git', { command: 'show HEAD:../b/secret.txt' }, 'toolu_2')),
      reply(text('Only app.txt changed here.')),
    );
    const result = await run(['--output-format', 'text', 'what changed?']);
    expect(result.code, result.stderr).toBe(0);
    const messages = api.requests.filter((r) => r.path === '/v1/messages');
    const afterLog = JSON.stringify(messages[1]?.body.messages?.at(-1));
    expect(afterLog).toContain('+a3');
    expect(afterLog).toContain('touch both');
    expect(afterLog).not.toContain('touch b\\n');
    const afterShow = JSON.stringify(messages[2]?.body.messages?.at(-1));
    expect(afterShow).toContain('outside the repository root');
    expect(JSON.stringify(messages.map((m) => m.body))).not.toContain(SECRET);
  });
});
