import { describe, expect, it } from 'vitest';
import type { LocateResult } from '../../src/locate/locate.js';
import { redactLocate } from '../../src/locate/redact.js';

// redactLocate held to its docblock (area "locate-caches"): the front-end tests show a secret never reaches the output;
// these pin what is shown in its place (the kind and the file:line it was found at) and that nothing else changes.
const TOKEN = `ghp_${'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'}`;

const result = (): LocateResult => ({
  type: 'locate',
  query: 'where is the token',
  notes: ['a note'],
  results: [
    {
      path: 'src/app.ts',
      score: 1.5,
      symbols: [{ name: 'connect', kind: 'function', line: 2 }],
      lines: [
        { line: 7, text: `const token = "${TOKEN}";` },
        { line: 9, text: 'connect(token);' },
      ],
    },
    // A credential file: a plain password is a secret there by the file's name alone.
    { path: '.env', score: 1.2, symbols: [], lines: [{ line: 3, text: 'DB_PASSWORD=correcthorsebattery' }] },
    { path: 'docs/setup.txt', score: 1.1, symbols: [], lines: [{ line: 3, text: 'DB_PASSWORD=correcthorsebattery' }] },
  ],
});

describe('redactLocate', () => {
  it('each secret gives way to its kind and the file:line it is on; everything else stays', async () => {
    const redacted = await redactLocate(result(), false);
    const [app, env, docs] = redacted.results;
    expect(app!.lines).toEqual([
      { line: 7, text: 'const token = "[redacted: GitHub token, src/app.ts:7]";' },
      { line: 9, text: 'connect(token);' },
    ]);
    expect(env!.lines).toEqual([{ line: 3, text: expect.stringMatching(/^DB_PASSWORD=\[redacted: [^\]]+, \.env:3\]$/) }]);
    // The same line outside a credential file is prose.
    expect(docs!.lines).toEqual([{ line: 3, text: 'DB_PASSWORD=correcthorsebattery' }]);
    const { results: _r, ...rest } = redacted;
    const { results: _o, ...original } = result();
    expect(rest).toEqual(original);
    expect(redacted.results.map(({ lines: _l, ...hit }) => hit)).toEqual(result().results.map(({ lines: _l, ...hit }) => hit));
  });

  it('--allow-secrets: the result as it was', async () => {
    const original = result();
    expect(await redactLocate(original, true)).toBe(original);
    expect(original.results[0]!.lines[0]!.text).toContain(TOKEN);
  });
});
