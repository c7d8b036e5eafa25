import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AgentEvent, Usage } from '../../src/agent/events.js';
import { hasAnsi } from '../support/ansi.js';
import { createTextRenderer, type TextRendererOptions } from '../../src/output/text.js';
import { formatUsageLine, UsageLedger } from '../../src/output/usage.js';

interface Captured {
  write(chunk: string): boolean;
  isTTY?: boolean;
  text: string;
}

function capture(isTTY: boolean): Captured {
  const stream: Captured = {
    text: '',
    write(chunk: string) {
      stream.text += chunk;
      return true;
    },
  };
  if (isTTY) stream.isTTY = true;
  return stream;
}

function setup(over: Partial<Omit<TextRendererOptions, 'stdout' | 'stderr' | 'ledger'>> & { tty?: [boolean, boolean] } = {}) {
  const [outTty, errTty] = over.tty ?? [false, false];
  const stdout = capture(outTty);
  const stderr = capture(errTty);
  const ledger = new UsageLedger();
  const renderer = createTextRenderer({
    stdout,
    stderr,
    ledger,
    color: over.color ?? false,
    verbose: over.verbose ?? false,
    showThinking: over.showThinking ?? false,
    spinner: over.spinner ?? false,
    ...(over.quiet === undefined ? {} : { quiet: over.quiet }),
  });
  // As the run service does: the ledger counts each event before the renderer reads it.
  const feed = (events: AgentEvent[]): void =>
    events.forEach((e) => {
      ledger.handle(e);
      renderer.handle(e);
    });
  return { stdout, stderr, ledger, renderer, feed };
}

const U1: Usage = { input_tokens: 412, cache_creation_input_tokens: 1203, cache_read_input_tokens: 11_870, output_tokens: 96 };
const U2: Usage = { input_tokens: 300, cache_creation_input_tokens: 500, cache_read_input_tokens: 13_000, output_tokens: 150 };
const MODEL = 'claude-sonnet-5-5';
const RG = 'rg -n "createServer" lib';

const ok = (summary: string, content = 'line one\nline two\n') => ({ content, summary, isError: false });
const denied = { content: 'pipes are not supported; run the commands separately', summary: 'denied: pipes are not supported', isError: true };

/** Two requests: some text, two concurrent tools (one denied, finishing out of order), then the answer. */
function script(done: AgentEvent = { type: 'done', stop: 'end_turn', text: 'The router is built in lib/app.js:12.\nDone', turns: 2 }): AgentEvent[] {
  return [
    { type: 'request_start', turn: 1 },
    { type: 'first_token', turn: 1 },
    { type: 'thinking', text: 'secret plan' },
    { type: 'text', text: 'Let me look.' },
    { type: 'tool_start', id: 't1', name: 'bash', input: { command: RG }, display: RG },
    { type: 'tool_start', id: 't2', name: 'read_file', input: { path: 'lib/app.js' }, display: 'lib/app.js:1-120' },
    { type: 'tool_end', id: 't2', name: 'read_file', input: {}, outcome: ok('34 lines'), durationMs: 12.4 },
    { type: 'tool_end', id: 't1', name: 'bash', input: {}, outcome: denied, durationMs: 1 },
    { type: 'usage', turn: 1, model: MODEL, usage: U1, durationMs: 900, requestId: 'req_1' },
    { type: 'request_start', turn: 2 },
    { type: 'retry', message: 'overloaded (529); retrying in 2 s' },
    { type: 'first_token', turn: 2 },
    { type: 'text', text: 'The router is built in lib/app.js:12.' },
    { type: 'text', text: '\nDone' },
    { type: 'usage', turn: 2, model: MODEL, usage: U2, durationMs: 800, requestId: 'req_2' },
    done,
  ];
}

const line = (u: Usage) => formatUsageLine(MODEL, u, { color: false });

describe('createTextRenderer', () => {
  afterEach(() => vi.useRealTimers());

  it('puts exactly the final answer on stdout and all activity, commentary included, on stderr', () => {
    const { stdout, stderr, ledger, feed, renderer } = setup();
    feed(script());
    renderer.close();
    expect(stdout.text).toBe('The router is built in lib/app.js:12.\nDone\n');
    expect(stderr.text).toBe(
      [
        'Let me look.',
        `● bash ${RG}`,
        '● read_file lib/app.js:1-120',
        '  ⎿ 34 lines · 12 ms',
        `  ⎿ denied: pipes are not supported  (bash ${RG})`,
        line(U1),
        'overloaded (529); retrying in 2 s',
        line(U2),
        '  Σ 2 requests · in 712 · cache write 1,703 · cache read 24,870 (91%) · out 246 · ~$0.0131',
        '',
      ].join('\n'),
    );
    expect(ledger.rows().map((r) => [r.turn, r.model, r.durationMs])).toEqual([
      [1, MODEL, 900],
      [2, MODEL, 800],
    ]);
  });

  it('ends an open answer line on a shared terminal before writing activity, and only there', () => {
    const shared = setup({ tty: [true, true] });
    shared.feed(script());
    expect(shared.stdout.text).toBe('Let me look.\nThe router is built in lib/app.js:12.\nDone\n');

    const stdoutOnlyTty = setup({ tty: [true, false] });
    stdoutOnlyTty.feed(script());
    expect(stdoutOnlyTty.stdout.text).toBe('Let me look.The router is built in lib/app.js:12.\nDone\n');
  });

  it('adds no newline to stdout when the answer already ends with one, and none at all without an answer', () => {
    const a = setup();
    a.feed([{ type: 'text', text: 'answer\n' }, { type: 'done', stop: 'end_turn', text: 'answer\n', turns: 1 }]);
    a.renderer.close();
    expect(a.stdout.text).toBe('answer\n');

    const b = setup();
    b.feed([{ type: 'request_start', turn: 1 }, { type: 'done', stop: 'aborted', text: '', turns: 1 }]);
    b.renderer.close();
    expect(b.stdout.text).toBe('');
    expect(b.stderr.text).toBe('cancelled\n');
  });

  it('shows full tool output indented under the summary with --verbose', () => {
    const { stderr, feed } = setup({ verbose: true });
    feed(script());
    expect(stderr.text).toContain('  ⎿ 34 lines · 12 ms\n    line one\n    line two\n');
    expect(stderr.text).toContain('    pipes are not supported; run the commands separately\n');
    const quiet = setup();
    quiet.feed(script());
    expect(quiet.stderr.text).not.toContain('line one');
  });

  it('hides thinking unless showThinking, and then shows it on stderr only', () => {
    const hidden = setup();
    hidden.feed(script());
    expect(hidden.stderr.text + hidden.stdout.text).not.toContain('secret plan');

    const shown = setup({ showThinking: true });
    shown.feed(script());
    expect(shown.stderr.text).toContain('✻ secret plan\nLet me look.\n● bash');
    expect(shown.stdout.text).not.toContain('secret plan');
  });

  it('colours the error summary red on a colour stream, and writes no ANSI at all with colour off', () => {
    const colored = setup({ color: true, showThinking: true, verbose: true });
    colored.feed(script());
    expect(colored.stderr.text).toContain('\x1b[31mdenied: pipes are not supported\x1b[39m');

    const plain = setup({ color: false, showThinking: true, verbose: true, tty: [true, true] });
    plain.feed([...script(), { type: 'warning', message: 'AGENTS.md truncated' }]);
    plain.feed([{ type: 'done', stop: 'api_error', text: '', turns: 1, error: 'error: 500 api_error (req_9)' }]);
    expect(hasAnsi(plain.stdout.text)).toBe(false);
    expect(hasAnsi(plain.stderr.text)).toBe(false);
    expect(plain.stderr.text).toContain('warning: AGENTS.md truncated\n');
  });

  it.each([
    ['max_turns', { limit: 'maxTurns', value: 25, requests: 25 }, 'stopped after 25 model requests (--max-turns 25)'],
    ['max_tokens', { limit: 'maxTokens', value: 1000 }, 'the answer was cut at --max-tokens 1000 output tokens'],
    ['refusal', {}, 'the model declined'],
  ] as const)('reports a %s stop on stderr after the total line, and leaves the cut answer off stdout', (stop, facts, expected) => {
    const { stdout, stderr, feed, renderer } = setup();
    feed([
      { type: 'request_start', turn: 1 },
      { type: 'text', text: 'partial' },
      { type: 'usage', turn: 1, model: MODEL, usage: U1, durationMs: 1, requestId: null },
      { type: 'done', stop, text: 'partial', turns: 1, ...facts },
    ]);
    renderer.close();
    expect(stdout.text).toBe('');
    expect(stderr.text).toContain(`partial\n(the answer above was cut (${stop}), so it was not written to stdout)\n`);
    const lines = stderr.text.trimEnd().split('\n');
    expect(lines.at(-2)).toMatch(/^ {2}Σ 1 request · /);
    expect(lines.at(-1)).toContain(expected);
  });

  it.each<[string, number, boolean, boolean]>([
    ['a tenth of a second: not said (no jargon on every run)', 100, false, false],
    ['just under a second: not said', 999, false, false],
    ['a second: said', 1_000, false, true],
    ['a tenth of a second with --verbose: said', 100, true, true],
  ])('the tools\' wait for the start-of-run state: %s', (_name, durationMs, verbose, said) => {
    const { stderr, feed, renderer } = setup({ verbose });
    feed([{ type: 'tools_waited', durationMs }]);
    renderer.close();
    expect(stderr.text.includes('the first tool waited')).toBe(said);
    expect(stderr.text).not.toContain('snapshot');
  });

  it('marks an interrupted request in its usage line and the ledger, and says once that tools waited (a felt wait)', () => {
    const { stderr, ledger, feed, renderer } = setup();
    feed([
      { type: 'tools_waited', durationMs: 1_240 },
      { type: 'usage', turn: 1, model: MODEL, usage: U1, durationMs: 900, requestId: 'req_1', interrupted: true },
      { type: 'done', stop: 'aborted', text: '', turns: 1 },
    ]);
    renderer.close();
    expect(stderr.text.split('\n').slice(0, 2)).toEqual(['  the first tool waited 1.2 s while spelunk recorded the repository\'s state', `${line(U1)} · interrupted`]);
    expect(ledger.rows()[0]!.interrupted).toBe(true);
  });

  it('totals each question separately when one renderer serves a session', () => {
    const { stderr, feed } = setup();
    feed(script());
    stderr.text = '';
    feed([
      { type: 'request_start', turn: 1 },
      { type: 'text', text: 'Second answer.' },
      { type: 'usage', turn: 1, model: 'unknown-model', usage: U2, durationMs: 1, requestId: null },
      { type: 'done', stop: 'end_turn', text: 'Second answer.', turns: 1 },
    ]);
    expect(stderr.text).toContain('  Σ 1 request · in 300 · cache write 500 · cache read 13,000 (94%) · out 150 · cost unknown\n');
    expect(stderr.text).toContain('  ↳ in 300 · cache write 500 · cache read 13,000 (94%) · out 150 · cost unknown\n');
  });

  it('keeps terminal control sequences from tool displays and summaries off the screen', () => {
    const { stderr, feed } = setup({ verbose: true });
    feed([
      { type: 'tool_start', id: 'x', name: 'bash', input: {}, display: 'rg "\x1b[2J"\nls' },
      { type: 'tool_end', id: 'x', name: 'bash', input: {}, outcome: ok('1 line', 'evil \x1b]0;title\x07 text\r\n'), durationMs: 1500 },
    ]);
    expect(hasAnsi(stderr.text)).toBe(false);
    expect(stderr.text).toBe('● bash rg "\\x1b[2J"↵ls\n  ⎿ 1 line · 1.5 s\n    evil \\x1b]0;title\\x07 text\n');
  });

  it('never writes a spinner when spinner is false', () => {
    const { stderr, feed } = setup({ tty: [true, true] });
    feed(script());
    expect(stderr.text).not.toContain('thinking…');
    expect(stderr.text).not.toContain('\r');
  });

  it('spins on stderr while waiting and clears itself before any other output', () => {
    vi.useFakeTimers();
    const { stdout, stderr, renderer } = setup({ spinner: true, tty: [true, true] });
    renderer.handle({ type: 'request_start', turn: 1 });
    expect(stderr.text).toBe('\r⠋ thinking…');
    vi.advanceTimersByTime(160);
    expect(stderr.text).toBe('\r⠋ thinking…\r⠙ thinking…\r⠹ thinking…');
    renderer.handle({ type: 'warning', message: 'slow' });
    expect(stderr.text.endsWith('\r\x1b[Kwarning: slow\n')).toBe(true);
    renderer.handle({ type: 'first_token', turn: 1 });
    renderer.handle({ type: 'text', text: 'hi' });
    const settled = stderr.text;
    vi.advanceTimersByTime(1000);
    expect(stderr.text).toBe(settled);
    expect(stdout.text).toBe('hi');
  });

  it.each([
    ['tool_start', { type: 'tool_start', id: 'a', name: 'bash', input: {}, display: 'ls' }],
    ['usage', { type: 'usage', turn: 1, model: MODEL, usage: U1, durationMs: 1, requestId: null }],
    ['done', { type: 'done', stop: 'end_turn', text: '', turns: 1 }],
    ['first_token', { type: 'first_token', turn: 1 }],
  ] as const)('stops the spinner on %s, and close() stops it too', (_name, event) => {
    vi.useFakeTimers();
    const { stderr, renderer } = setup({ spinner: true, tty: [false, true] });
    renderer.handle({ type: 'request_start', turn: 1 });
    renderer.handle(event as AgentEvent);
    expect(stderr.text.startsWith('\r⠋ thinking…\r\x1b[K')).toBe(true);
    const settled = stderr.text;
    vi.advanceTimersByTime(1000);
    expect(stderr.text).toBe(settled);

    renderer.handle({ type: 'request_start', turn: 2 });
    renderer.close();
    const closed = stderr.text;
    expect(closed.endsWith('\r\x1b[K')).toBe(true);
    vi.advanceTimersByTime(1000);
    expect(stderr.text).toBe(closed);
  });

  it('keeps the indicator up while hidden thinking streams', () => {
    vi.useFakeTimers();
    const { stderr, renderer } = setup({ spinner: true, tty: [true, true] });
    renderer.handle({ type: 'request_start', turn: 1 });
    renderer.handle({ type: 'first_token', turn: 1 });
    renderer.handle({ type: 'thinking', text: 'hmm' });
    vi.advanceTimersByTime(80);
    expect(stderr.text.endsWith('thinking…')).toBe(true);
    expect(stderr.text).not.toContain('hmm');
    renderer.close();
  });
});

describe('paragraph break between requests', () => {
  it.each([
    [[true, true], 'Let me look.\n\nThe answer.\n'],
    [[false, false], 'The answer.\n'],
  ] as const)('stdout/stderr TTY %j: exactly one blank line before the next request’s text', (tty, expected) => {
    const { stdout, feed, renderer } = setup({ tty: [...tty] as [boolean, boolean] });
    feed([
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_start', id: 't1', name: 'bash', input: {}, display: 'ls' },
      { type: 'tool_end', id: 't1', name: 'bash', input: {}, outcome: ok('2 lines'), durationMs: 3 },
      { type: 'text', text: '\n\n' },
      { type: 'text', text: 'The answer.' },
      { type: 'done', stop: 'end_turn', text: 'The answer.', turns: 2 },
    ]);
    renderer.finishAnswer(null);
    expect(stdout.text).toBe(expected);
  });
});

describe('createTextRenderer with quiet (--quiet)', () => {
  it('writes the answer and nothing on stderr; the ledger (fed by the run service, not the renderer) is complete', () => {
    const { stdout, stderr, ledger, feed } = setup({ quiet: true, showThinking: true, verbose: true });
    feed([...script().slice(0, -1), { type: 'warning', message: 'AGENTS.md truncated' }, { type: 'tools_waited', durationMs: 300 }, script().at(-1)!]);
    const loud = setup({ showThinking: true, verbose: true });
    loud.feed(script());
    expect(stdout.text).toBe(loud.stdout.text);
    expect(loud.stderr.text).not.toBe('');
    expect(stderr.text).toBe('');
    expect(ledger.rows()).toHaveLength(2);
  });

  it.each<[AgentEvent, string]>([
    [{ type: 'done', stop: 'api_error', text: '', turns: 1, error: 'API 500 api_error: boom' }, 'API 500 api_error: boom'],
    [{ type: 'done', stop: 'max_turns', text: '', turns: 1, limit: 'maxTurns', value: 1, requests: 1 }, 'stopped after 1 model request (--max-turns 1)'],
  ])('still says how a question ended when it failed: %j', (done, fragment) => {
    const { stderr, feed } = setup({ quiet: true });
    feed(script(done));
    expect(stderr.text.trim().split('\n')).toHaveLength(1);
    expect(stderr.text).toContain(fragment);
  });
});

describe('issue 24: the text view on a terminal', () => {
  it.each([
    ['\x1b]0;pwned\x07', '\\x1b]0;pwned\\x07'],
    ['\x1b[2J', '\\x1b[2J'],
    ['\x9b31m', '\\x9b31m'],
    ['\u202eevil', '\\u202eevil'],
  ])('--no-render (plain text to a terminal): %j from a repository is escaped, never sent raw', (raw, shown) => {
    const { stdout, feed } = setup({ tty: [true, true] });
    feed([{ type: 'text', text: `quoted ${raw} here\n` }, { type: 'done', stop: 'end_turn', text: `quoted ${raw} here\n`, turns: 1 }]);
    expect(stdout.text).toBe(`quoted ${shown} here\n`);
  });

  it('the git tool shows as ● git log …, other tools with their name', () => {
    const { stderr, feed } = setup();
    feed([
      { type: 'tool_start', id: 't1', name: 'git', display: 'git log -3 --stat', input: {} },
      { type: 'tool_start', id: 't2', name: 'bash', display: 'ls src', input: {} },
      { type: 'tool_start', id: 't3', name: 'read_file', display: 'src/a.js', input: {} },
    ] as AgentEvent[]);
    expect(stderr.text.split('\n').filter((l) => l.startsWith('● '))).toEqual(['● git log -3 --stat', '● bash ls src', '● read_file src/a.js']);
  });
});
