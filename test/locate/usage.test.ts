import { describe, expect, it } from 'vitest';
import { usageErrorJson, wantsLocateJson } from '../../src/locate/usage.js';

describe('which usage errors are answered as json', () => {
  it.each([
    [['locate', '--output-format', 'json', 'q'], true],
    [['locate', '--output-format=json'], true],
    [['-C', 'dir', 'locate', '--output-format', 'json'], true],
    [['--output-format', 'json', 'locate', 'q'], true],
    [['locate', '--output-format', 'text', 'q'], false],
    [['locate', 'q'], false],
    // A question that says "locate" is not the locate command.
    [['--output-format', 'json', 'where', 'do', 'we', 'locate', 'files'], false],
    [['-C', 'locate', '--output-format', 'json', 'q'], false],
    [['audit', '--output-format', 'json', 'locate'], false],
  ])('%j → %s', (argv, wanted) => {
    expect(wantsLocateJson(argv)).toBe(wanted);
  });

  it('is one line of json with the message as given', () => {
    expect(usageErrorJson('bad "k"\nnext')).toBe('{"type":"error","error":"usage","message":"bad \\"k\\"\\nnext"}\n');
  });
});
