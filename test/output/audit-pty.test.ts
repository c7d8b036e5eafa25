import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { textWidth } from '../../src/output/audit.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { BIN, stripAnsi } from '../support/pty.js';
import { APP_FILES, appFinding, useRepo } from '../support/temp-repo.js';

// Issue 24 on the built binary: `spelunk audit` in a pseudo-terminal of 80, 100 and 220 columns (stty sets the
// window size, which the binary reads from its stdout) lays its findings out to that width.
const DEEP = 'packages/server/src/middlewares/transform-request-handlers/internal/deeply/nested/resolution/cache-keys.js';
const MESSAGE =
  'login() builds a shell command by concatenating the user name it was given, then runs it with exec; a name such as "x; rm -rf ~" runs a second command with the privileges of the server process.';
const repo = useRepo({ ...APP_FILES, [DEEP]: 'const a = 1;\nconst b = 2;\nconst c = 3;\n' });
let api: MockApi;
let home: string;

beforeAll(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), 'spelunk-audit-pty-'));
});
afterAll(async () => {
  await fs.rm(home, { recursive: true, force: true });
});
afterEach(async () => {
  await api?.close();
});

/** The binary in a pseudo-terminal `cols` wide; resolves with the screen text when it exits. */
function inTerminal(cols: number, args: string[]): Promise<{ code: number | null; screen: string }> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = `stty cols ${cols} rows 50 && exec ${[process.execPath, BIN, ...args].map(quote).join(' ')}`;
  const env = { PATH: '/usr/bin:/bin', TERM: 'xterm', HOME: home, XDG_STATE_HOME: home, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url };
  const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: repo.root, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, screen: stripAnsi(output) })));
}

describe('spelunk audit in a terminal (the built binary, a pseudo-terminal)', () => {
  it.each([80, 100, 220])('at %i columns: every finding shows severity, rule, full path:line, title and message, within the width', async (cols) => {
    api = await startMockApi({ minCacheTokens: 256 });
    const findings = [appFinding({ message: MESSAGE }), appFinding({ rule_id: 'cache-key', severity: 'medium', title: 'Cache keys ignore the query', message: 'Short.', path: DEEP, start_line: 2 })];
    api.enqueue(reply(toolUse('report_findings', { verdict: 'fail', summary: 'Two problems.', findings })), reply(text('Done.')));
    const { code, screen } = await inTerminal(cols, ['audit', '--quiet', 'is user input passed to a shell?']);
    expect(code).toBe(4);
    const lines = screen.split('\n');
    const start = lines.findIndex((l) => l.startsWith('verdict: FAIL'));
    expect(start, screen).toBeGreaterThanOrEqual(0);
    const block = lines.slice(start).filter((l) => l.trim() !== '');
    for (const line of block) expect(textWidth(line), line).toBeLessThanOrEqual(cols);
    const words = block.map((l) => l.trim()).join(' ');
    expect(words).toContain('HIGH  shell-injection  src/auth.js:4');
    expect(words).toContain('User input reaches exec');
    expect(words).toContain(MESSAGE);
    expect(block.map((l) => l.trim()).join('')).toContain(`${DEEP}:2`);
    expect(screen).not.toContain('…');
    if (cols === 220) expect(block).toContain(`MEDIUM  cache-key  ${DEEP}:2`);
  });
});
