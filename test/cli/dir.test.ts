import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

const repo = useRepo(APP_FILES);
const KEY = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' };

/** Every command that takes a root resolves --dir in one place (roots.ts realRoot), so each mistake reads the same. */
describe('--dir: one resolver, one message per mistake, whichever command', () => {
  const commands: [string, string[]][] = [
    ['ask', ['q']],
    ['audit', ['audit', 'q']],
    ['locate', ['locate', 'q']],
    ['mcp', ['mcp']],
    ['the session listing', ['--resume']],
  ];
  const mistakes: [string, string, string][] = [
    ['a missing directory', '/definitely/not/here', 'spelunk: --dir /definitely/not/here: no such directory; pass the repository root with -C <path>'],
    ['a file', '/etc/hostname', 'spelunk: --dir /etc/hostname: not a directory; pass the repository root with -C <path>'],
    ['a kernel interface', '/proc', 'spelunk: the root /proc is /proc, a kernel interface, not a repository; pass -C a repository directory'],
  ];
  const rows = commands.flatMap(([name, argv]) => mistakes.map(([what, dir, line]) => [name, what, [...argv, '-C', dir], line] as const));
  it.each(rows)('%s, %s', async (_name, _what, argv, line) => {
    const run = await runCli([...argv], { env: KEY, cwd: repo.root });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`${line}\n`);
  });
});
