import { afterEach, describe, expect, it } from 'vitest';
import { chooseSandbox } from '../../src/sandbox/choose.js';
import { runCli } from '../support/cli.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

const probe = await chooseSandbox('required');
const WHY_SKIPPED = probe.ok ? '' : ` (skipped: ${probe.error})`;

let api: MockApi;
const repo = useRepo(APP_FILES);
afterEach(async () => {
  await api?.close();
});

async function ask(flags: string[], env: Record<string, string> = {}) {
  api = await startMockApi();
  api.enqueue(reply(toolUse('bash', { command: 'ls' })), reply(text('Done.')));
  const run = await runCli(['-C', repo.root, '--output-format', 'json', ...flags, 'q'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, ...env } });
  return { ...run, result: run.stdout === '' ? null : (JSON.parse(run.stdout) as { sandbox: string; is_error: boolean }) };
}

describe('--sandbox auto|required|off (and SPELUNK_SANDBOX): which sandbox ran is said in the result', () => {
  it.each([
    [['--sandbox', 'nope'], {}, '--sandbox (or SPELUNK_SANDBOX) must be auto, required or off (got "nope")'],
    [[], { SPELUNK_SANDBOX: 'strict' }, '--sandbox (or SPELUNK_SANDBOX) must be auto, required or off (got "strict")'],
  ])('%j %j is a usage error (exit 2)', async (flags, env, message) => {
    const run = await runCli(['-C', repo.root, ...flags, 'q'], { env: { ANTHROPIC_API_KEY: 'k', ...env } });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`spelunk: ${message}\n`);
  });

  it.each([
    [['--sandbox', 'off'], {}],
    [[], { SPELUNK_SANDBOX: 'off' }],
  ])('%j %j: tables, said on stderr on every run', async (flags, env) => {
    const run = await ask(flags, env);
    expect(run.code).toBe(0);
    expect(run.result?.sandbox).toBe('tables');
    expect(run.stderr).toContain('spelunk: --sandbox off: programs run without the kernel sandbox');
  });

  it.skipIf(!probe.ok).each([[[]], [['--sandbox', 'required']], [['--sandbox', 'auto']]])(`%j: kernel, silently${WHY_SKIPPED}`, async (flags) => {
    const run = await ask(flags);
    expect(run.code).toBe(0);
    expect(run.result?.sandbox).toBe('kernel');
    expect(run.stderr).not.toContain('sandbox');
  });

  it('the flag beats the environment', async () => {
    const run = await ask(['--sandbox', 'off'], { SPELUNK_SANDBOX: 'required' });
    expect(run.result?.sandbox).toBe('tables');
  });
});
