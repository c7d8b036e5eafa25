import { describe, expect, it } from 'vitest';
import { createPalette, shouldUseColor } from '../../src/output/color.js';
import { hasAnsi, stripAnsi } from '../support/ansi.js';

const tty = { write: () => true, isTTY: true };
const file = { write: () => true };
const pipe = { write: () => true, isTTY: false };

describe('shouldUseColor', () => {
  it.each([
    // [case, stream, env, flag, expected]
    ['TTY, nothing set', tty, {}, undefined, true],
    ['file, nothing set', file, {}, undefined, false],
    ['pipe with isTTY false', pipe, {}, undefined, false],
    ['TTY, --color default true does not matter', tty, {}, true, true],
    ['file, flag true never forces colour', file, {}, true, false],
    ['TTY, --no-color', tty, {}, false, false],
    ['--no-color beats FORCE_COLOR', tty, { FORCE_COLOR: '1' }, false, false],
    ['TTY, NO_COLOR=1', tty, { NO_COLOR: '1' }, undefined, false],
    ['TTY, NO_COLOR=0 is still non-empty', tty, { NO_COLOR: '0' }, undefined, false],
    ['TTY, empty NO_COLOR is ignored', tty, { NO_COLOR: '' }, undefined, true],
    ['NO_COLOR beats FORCE_COLOR', tty, { NO_COLOR: 'yes', FORCE_COLOR: '1' }, undefined, false],
    ['file, FORCE_COLOR=1', file, { FORCE_COLOR: '1' }, undefined, true],
    ['file, FORCE_COLOR=true', file, { FORCE_COLOR: 'true' }, undefined, true],
    ['file, FORCE_COLOR=3', file, { FORCE_COLOR: '3' }, undefined, true],
    ['TTY, FORCE_COLOR=0', tty, { FORCE_COLOR: '0' }, undefined, false],
    ['TTY, FORCE_COLOR=false', tty, { FORCE_COLOR: 'false' }, undefined, false],
    ['file, empty FORCE_COLOR is ignored', file, { FORCE_COLOR: '' }, undefined, false],
    ['TTY, empty FORCE_COLOR is ignored', tty, { FORCE_COLOR: '' }, undefined, true],
    ['TTY, TERM=dumb', tty, { TERM: 'dumb' }, undefined, false],
    ['TERM=dumb, FORCE_COLOR=1', tty, { TERM: 'dumb', FORCE_COLOR: '1' }, undefined, true],
    ['TTY, TERM=xterm', tty, { TERM: 'xterm-256color' }, undefined, true],
  ] as const)('%s → %s', (_case, stream, env, flag, expected) => {
    expect(shouldUseColor(stream, env, flag)).toBe(expected);
  });
});

describe('createPalette', () => {
  const styles = ['dim', 'bold', 'red', 'yellow', 'green', 'cyan'] as const;

  it.each(styles)('%s returns its input unchanged when colour is off', (style) => {
    expect(createPalette(false)[style]('x · y')).toBe('x · y');
  });

  it.each(styles)('%s wraps its input in ANSI codes when colour is on', (style) => {
    const out = createPalette(true)[style]('x · y');
    expect(hasAnsi(out)).toBe(true);
    expect(stripAnsi(out)).toBe('x · y');
  });

  it('closes each style with its own reset so nesting keeps the outer style', () => {
    const p = createPalette(true);
    expect(p.red(`a ${p.bold('b')} c`)).toBe('\x1b[31ma \x1b[1mb\x1b[22m c\x1b[39m');
  });

  it('leaves empty strings empty', () => {
    expect(createPalette(true).red('')).toBe('');
  });
});
