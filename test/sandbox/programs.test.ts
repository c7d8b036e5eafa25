import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledRg, resolvePrograms, TRUSTED_PATH } from '../../src/sandbox/programs.js';


let base: string;

beforeAll(() => {
  base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'spelunk-programs-')));
  // First directory: a `cat` that is a directory (searchable, so "executable"); second: a real executable `cat`.
  mkdirSync(path.join(base, 'first', 'cat'), { recursive: true });
  mkdirSync(path.join(base, 'second'));
  writeFileSync(path.join(base, 'second', 'cat'), '#!/bin/sh\n');
  chmodSync(path.join(base, 'second', 'cat'), 0o755);
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('resolvePrograms', () => {
  it('takes a program from the trusted directories by default', async () => {
    const found = await resolvePrograms(Promise.resolve(null));
    expect(TRUSTED_PATH.split(':').map((dir) => path.join(dir, 'cat'))).toContain(found.get('cat'));
  });

  it('skips a directory of the program’s name and takes the next trusted file', async () => {
    const found = await resolvePrograms(Promise.resolve(null), [path.join(base, 'first'), path.join(base, 'second')]);
    expect(found.get('cat')).toBe(path.join(base, 'second', 'cat'));
    expect(found.has('rg')).toBe(false);
  });
});

describe('bundledRg', () => {
  it('finds the binary of the installed platform package', async () => {
    const rg = await bundledRg();
    expect(rg).toMatch(new RegExp(`/@vscode/ripgrep-${process.platform}-${process.arch}/bin/rg$`));
  });

  // A machine without the package, and one whose platform package is missing (npm skipped the optional dependency).
  it.each([
    ['no @vscode/ripgrep', {}],
    ['@vscode/ripgrep without its platform package', {
      'node_modules/@vscode/ripgrep/package.json': JSON.stringify({ name: '@vscode/ripgrep', type: 'module', exports: { '.': { default: './lib/index.js' } } }),
      'node_modules/@vscode/ripgrep/lib/index.js': "throw new Error('no binary for this platform');\n",
    }],
  ])('answers null, not a crash, with %s', async (_name, files: Record<string, string>) => {
    const dir = path.join(base, `pkg-${Object.keys(files).length}`);
    for (const [rel, content] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      writeFileSync(path.join(dir, rel), content);
    }
    mkdirSync(path.join(dir, 'src'), { recursive: true });
    await expect(bundledRg(path.join(dir, 'src', 'x.js'))).resolves.toBeNull();
  });

  // Where npm and pnpm put the platform package: hoisted beside @vscode/ripgrep, nested in its own node_modules (a
  // version conflict), or beside its real folder in a store that node_modules links to.
  const rgPackage = JSON.stringify({ name: '@vscode/ripgrep', type: 'module', exports: { '.': { default: './lib/index.js' } } });
  const platformRg = `@vscode/ripgrep-${process.platform}-${process.arch}/bin/rg`;
  it.each([
    ['hoisted', 'app/node_modules/@vscode/ripgrep', `app/node_modules/${platformRg}`, null],
    ['nested under @vscode/ripgrep', 'app/node_modules/@vscode/ripgrep', `app/node_modules/@vscode/ripgrep/node_modules/${platformRg}`, null],
    ['linked from a pnpm store', 'store/node_modules/@vscode/ripgrep', `store/node_modules/${platformRg}`, 'app/node_modules/@vscode/ripgrep'],
  ])('finds the platform binary %s', async (name, pkg, binary, link) => {
    const dir = path.join(base, `layout-${name.replace(/\W+/g, '-')}`);
    mkdirSync(path.join(dir, pkg), { recursive: true });
    writeFileSync(path.join(dir, pkg, 'package.json'), rgPackage);
    mkdirSync(path.dirname(path.join(dir, binary)), { recursive: true });
    writeFileSync(path.join(dir, binary), '#!/bin/sh\n', { mode: 0o755 });
    if (link !== null) {
      mkdirSync(path.dirname(path.join(dir, link)), { recursive: true });
      symlinkSync(path.join(dir, pkg), path.join(dir, link));
    }
    mkdirSync(path.join(dir, 'app', 'dist'), { recursive: true });
    await expect(bundledRg(path.join(dir, 'app', 'dist', 'spelunk-main.cjs'))).resolves.toBe(realpathSync(path.join(dir, binary)));
  });
});
