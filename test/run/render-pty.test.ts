import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { PtySession } from '../support/pty.js';
import { REAL_ANSWERS } from '../support/real-answers.js';
import { APP_FILES, makeRepo } from '../support/temp-repo.js';

// Issue 33 on a real terminal: the built binary in a pseudo-terminal of 60, 80, 100 and 200 columns, answers shaped
// like real Rust, C++, Ruby and Python ones: inline code exact, tables and Sources lines within the width.
let api: MockApi | undefined;
let repo: { root: string; cleanup(): Promise<void> };
let state: string;
let pty: PtySession | null = null;

const DEEP = `src/${'a_rather_long_directory_name/'.repeat(4)}deep.rs`;

beforeAll(async () => {
  repo = await makeRepo({ ...APP_FILES, [DEEP]: 'pub fn deep() -> u32 {\n    42\n}\n' });
  state = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-render-state-'));
});
afterAll(async () => {
  await repo.cleanup();
  await fs.rm(state, { recursive: true, force: true });
});
afterEach(async () => {
  pty?.kill();
  pty = null;
  await api?.close();
  api = undefined;
});

async function ask(answer: string, columns: number, flags: string[] = []): Promise<{ code: number | null; lines: string[]; screen: string }> {
  api = await startMockApi({ minCacheTokens: 256 });
  api.enqueue(reply(toolUse('read_file', { path: 'src/server.js' })), reply(text(answer)));
  const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, XDG_STATE_HOME: state, HOME: state };
  pty = new PtySession(['-C', repo.root, ...flags, 'how does it run?'], env, { columns });
  const code = await pty.exited;
  const screen = pty.screen().replace(/\r/g, '');
  // Each \r-drawn spinner frame is gone once stripped of \r; the lines are what the terminal shows.
  return { code, screen, lines: screen.split('\n') };
}

describe('answers on a terminal of each width', () => {
  const sources = `\n\nSee src/server.js:4 and ${DEEP}:1 and src/router.js:999.`;
  it.each(REAL_ANSWERS.flatMap((a) => [60, 80, 100, 200].map((columns) => [a.language, columns, a] as const)))(
    '%s at %i columns: code spans exact, nothing wider than the terminal (answer, tables, Sources)',
    async (_language, columns, answer) => {
      const { code, lines, screen } = await ask(answer.markdown + sources, columns);
      expect(code).toBe(0);
      expect(screen).not.toContain('#COLON');
      // The answer, its tables and the Sources lines each fit (the spinner's \r-drawn frames and the per-request usage
      // lines, spelunk's own statistics, are not part of this check).
      const drawn = lines.filter((l) => !/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/.test(l) && !/^ {2}[↳Σ] /.test(l));
      for (const line of drawn) expect([...line].length, line).toBeLessThanOrEqual(columns);
      if (columns === 200) {
        const flat = screen.replace(/\s+/g, ' ');
        for (const span of answer.exact) expect(flat).toContain(span.replace(/\s+/g, ' '));
      }
      expect(screen).toContain('Sources');
      expect(screen).toMatch(/✗ src\/router\.js:999/);
    },
  );

  it('-q: the answer alone, no Sources block', async () => {
    const { code, screen } = await ask(`Listen is in src/server.js:4.`, 80, ['-q']);
    expect(code).toBe(0);
    expect(screen).toContain('Listen is in src/server.js:4.');
    expect(screen).not.toContain('Sources');
    expect(screen).not.toContain('✓');
  });
});
