import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { reply, startMockApi, text, type MockApi, type Reply } from '../support/mock-api.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

let api: MockApi;
const repo = useRepo(APP_FILES, { git: true });

afterEach(async () => {
  await api?.close();
});

describe('the REPL asks each question through the run service', () => {
  it('proves each answer read-only on its own: a change during the first is said once, the second is clean', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    const planted = path.join(repo.root, 'src', 'planted.js');
    // Held 400 ms while an editor writes 150 ms into it: another program's change, said once, never a failure.
    const changeRepo = (): Reply => {
      setTimeout(() => writeFileSync(planted, 'changed while the REPL answered\n'), 150);
      return { kind: 'slow', delayMs: 400, then: reply(text('First answer.')) };
    };
    api.enqueue(changeRepo, reply(text('Second answer.')));
    const run = await runCli(['-C', repo.root, '-i', 'first?'], { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url }, stdin: 'second?\n' });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('First answer.\nSecond answer.\n');
    const warnings = run.stderr.split('\n').filter((l) => l.startsWith('warning: other programs changed the repository during the run'));
    expect(warnings).toEqual([expect.stringContaining('planted.js')]);
    // The warning belongs to the first answer: it comes before the second question's request line.
    expect(run.stderr.indexOf(warnings[0]!)).toBeLessThan(run.stderr.lastIndexOf('↳'));
  });
});
