import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { KERNEL, WHY_SKIPPED } from '../support/git-layers.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { clearMarkers, configure, makeSubmodulePlant, markersLeft, type SubmodulePlant } from '../support/submodule-plant.js';

/**
 * Third red team, F1 with no model at all: `spelunk audit --diff HEAD~1` on a repository whose submodule (git directory
 * inside the root) has a diff driver, with `diff.submodule=diff` in the superproject. audit's own git diff must not
 * enter the submodule in either layer; the marker directory is outside the root and not under a private /tmp.
 */
let plant: SubmodulePlant;
let api: MockApi | undefined;

beforeAll(async () => {
  plant = await makeSubmodulePlant();
  configure(plant, 'super', 'diff.submodule', 'diff');
  configure(plant, 'sub', 'diff.pwn.command', plant.command('audit'));
});
afterAll(async () => plant.cleanup());
afterEach(async () => {
  await api?.close();
  api = undefined;
  await clearMarkers(plant);
});

describe('spelunk audit --diff HEAD~1 on the F1 plant runs nothing of the submodule', () => {
  it.each([
    ['off', false],
    ['required', true],
  ] as const)('SPELUNK_SANDBOX=%s', async (mode, needsKernel) => {
    if (needsKernel && KERNEL === null) return expect(WHY_SKIPPED).not.toBe('');
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('report_findings', { verdict: 'pass', summary: 's', findings: [] })), reply(text('Done.')));
    // Only F1's submodule here: vsub/.git leads outside the root, which the start-up walk refuses (the row below).
    const outside = path.join(plant.root, 'vsub', '.git');
    await fs.rename(outside, `${outside}.away`);
    const run = await runCli(['audit', '-C', plant.root, '--diff', 'HEAD~1', '--output-format', 'json', 'is it safe?'], {
      env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, SPELUNK_SANDBOX: mode },
      cwd: plant.base,
    }).finally(() => fs.rename(`${outside}.away`, outside));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).not.toContain('PWNED');
    expect(await markersLeft(plant)).toEqual([]);
    const first = JSON.stringify(api.requests.find((r) => r.path === '/v1/messages')?.body?.messages ?? '');
    expect(first).not.toContain('PWNED');
    // The gitlink's move is in the diff the model reads, as two commit ids.
    expect(first).toMatch(/Subproject commit [0-9a-f]{40}/);
  });

  it('with vsub/.git leading to another repository, the run is refused before anything runs (F2, F8)', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    const run = await runCli(['audit', '-C', plant.root, '--diff', 'HEAD~1', '--output-format', 'json', 'is it safe?'], {
      env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, SPELUNK_SANDBOX: 'off' },
      cwd: plant.base,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/vsub\/\.git is a \.git file whose gitdir points outside the repository root/);
    expect(api.requests).toHaveLength(0);
    expect(await markersLeft(plant)).toEqual([]);
  });

  it('control: plain git diff HEAD~1...HEAD runs the submodule\'s driver', async () => {
    const run = spawnSync('/usr/bin/git', ['--no-pager', 'diff', '--no-ext-diff', '--no-textconv', 'HEAD~1...HEAD'], { cwd: plant.root, env: { PATH: '/usr/bin:/bin', HOME: plant.base, GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' });
    expect(run.stderr).toContain('PWNED-audit');
    expect(await markersLeft(plant)).toEqual(['audit']);
  });
});
