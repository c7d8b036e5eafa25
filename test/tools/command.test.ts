import { describe, expect, it } from 'vitest';
import { createBashTool } from '../../src/tools/bash.js';
import { printableCommand, refusal } from '../../src/tools/command.js';
import { createGitTool } from '../../src/tools/git.js';

// The input, refusal and display rules both command tools share, through the real tools (made inside each test, so
// that mutation testing sees which tests cover the tools' definitions).
const tools = () => ({ bash: createBashTool(new Map([['rg', '/usr/bin/rg']])), git: createGitTool('/usr/bin/git') });

describe('the {command} input of bash and git', () => {
  it.each<[string, unknown, string]>([
    ['bash', null, `expected an object like {"command": "rg -n 'pattern' src"}`],
    ['bash', 'rg x', `expected an object like {"command": "rg -n 'pattern' src"}`],
    ['bash', ['rg x'], `expected an object like {"command": "rg -n 'pattern' src"}`],
    ['bash', 7, `expected an object like {"command": "rg -n 'pattern' src"}`],
    ['bash', {}, `"command" must be a string, e.g. "rg -n 'pattern' src"`],
    ['bash', { command: ['rg'] }, `"command" must be a string, e.g. "rg -n 'pattern' src"`],
    ['bash', { command: ' \t\n' }, `"command" is empty; give a program and its arguments, e.g. "rg -n 'pattern' src"`],
    ['bash', { command: 'rg x', timeout: 5, cwd: '/' }, 'unexpected field timeout, cwd; bash takes only {"command": "…"}'],
    ['git', null, 'expected an object like {"command": "log --oneline -n 10"}'],
    ['git', [], 'expected an object like {"command": "log --oneline -n 10"}'],
    ['git', { command: null }, '"command" must be a string, e.g. "log --oneline -n 10"'],
    ['git', { command: '' }, '"command" is empty; give a subcommand, e.g. "log --oneline -n 10"'],
    ['git', { command: 'log', args: [] }, 'unexpected field args; git takes only {"command": "…"}'],
  ])('%s refuses %j', (tool, input, error) => {
    expect(tools()[tool as 'bash' | 'git'].parse(input)).toEqual({ ok: false, error });
  });

  it.each([['bash', "rg -n 'x' src"], ['git', 'log -1'], ['git', '  show HEAD ']])('%s takes %j as it is', (tool, command) => {
    expect(tools()[tool as 'bash' | 'git'].parse({ command })).toEqual({ ok: true, value: { command } });
  });
});

describe('refusal', () => {
  const long = 'x'.repeat(101);
  it.each<[string, string]>([
    ['pipes are not supported; run one command per call', 'denied: pipes are not supported'],
    ['no clause separator here', 'denied: no clause separator here'],
    ['; starts with the separator', 'denied: '],
    ['x'.repeat(100), `denied: ${'x'.repeat(100)}`],
    [long, `denied: ${'x'.repeat(97)}…`],
    [`${long}; more`, `denied: ${'x'.repeat(97)}…`],
  ])('%j → summary %j', (reason, summary) => {
    expect(refusal(reason)).toEqual({ content: `Command refused: ${reason}`, summary, isError: true });
  });
});

describe('the command shown to the person', () => {
  it.each<[string, string]>([
    ["rg -n 'x' src", "rg -n 'x' src"],
    ['rg \u001b[2J\u202ex', 'rg \\x1b[2J\\u202ex'],
    ['y'.repeat(300), 'y'.repeat(300)],
    ['y'.repeat(301), `${'y'.repeat(299)}…`],
    // The cut counts the escaped form: 150 ESC bytes are 600 shown characters.
    ['\u001b'.repeat(150), `${'\\x1b'.repeat(74)}\\x1…`],
  ])('%j → %j', (command, shown) => {
    expect(printableCommand(command)).toBe(shown);
    expect(tools().bash.display({ command })).toBe(shown);
  });

  it.each<[string, string]>([
    ['log -1', 'git log -1'],
    ['git log -1', 'git log -1'],
    ['gitk', 'git gitk'],
    ['show \u001b[31m', 'git show \\x1b[31m'],
    ['z'.repeat(300), `git ${'z'.repeat(295)}…`],
  ])('git shows %j as %j', (command, shown) => {
    expect(tools().git.display({ command })).toBe(shown);
  });
});
