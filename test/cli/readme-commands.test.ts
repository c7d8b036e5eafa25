import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The README's commands work as written after its quick start: the quick start puts `spelunk` on PATH, and no example
// reaches the unrelated `spelunk` package on the npm registry through npx.
const ROOT = path.resolve(import.meta.dirname, '../..');
const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
// The examples moved to docs/ are held to the same rule: they too are read after the README's quick start.
const docs = readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => readFileSync(path.join(ROOT, 'docs', f), 'utf8'));
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; bin: Record<string, string>; scripts: Record<string, string> };
const shellLines = [...readme.matchAll(/```(?:sh|console|bash)\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.split('\n'));

describe('README commands', () => {
  it('the quick start installs the command before its first use', () => {
    const quick = shellLines.slice(0, shellLines.findIndex((l) => /^spelunk\b/.test(l)) + 1);
    expect(quick.at(-1)).toMatch(/^spelunk /);
    expect(quick.some((l) => /^npm i -g \.\s/.test(l))).toBe(true);
    expect(Object.keys(pkg.bin)).toEqual(['spelunk']);
  });

  it('never runs `npx spelunk` (the unrelated registry package); npx names this package', () => {
    expect(pkg.name).not.toBe('spelunk');
    for (const text of [readme, ...docs]) expect(text).not.toMatch(/npx spelunk(?![\w-])/);
    expect(readme).toContain(`npx ${pkg.name} `);
  });

  it('the build runs at pack time, and prepare needs no esbuild installed', () => {
    expect(pkg.scripts['prepack']).toBe('node scripts/build.mjs');
    expect(pkg.scripts['prepare']).toBe('node scripts/prepare.mjs');
  });
});
