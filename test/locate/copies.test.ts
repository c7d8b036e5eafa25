import { describe, expect, it } from 'vitest';
import { COPY_FACTOR, copyDirs, copyFactor, wordsOf } from '../../src/locate/copies.js';

const names = (dir: string, list: string[]): string[] => list.map((n) => (dir === '' ? n : `${dir}/${n}`));

describe('copy directories (a directory most of whose files have a namesake in its parent)', () => {
  it.each([
    // An old version beside the current one: four namesakes of five files.
    ['a copy of its parent', [...names('pkg', ['main.py', 'fields.py', 'types.py', 'errors.py']), ...names('pkg/v1', ['main.py', 'fields.py', 'types.py', 'errors.py', 'extra.py'])], ['pkg/v1']],
    // Three namesakes are what any two directories of one project may share.
    ['three namesakes are not enough', [...names('src', ['a.ts', 'b.ts', 'c.ts']), ...names('src/x', ['a.ts', 'b.ts', 'c.ts'])], []],
    // Four namesakes among ten own files are under half.
    ['namesakes under half of the files', [...names('src', ['a.ts', 'b.ts', 'c.ts', 'd.ts']), ...names('src/x', ['a.ts', 'b.ts', 'c.ts', 'd.ts', 'e.ts', 'f.ts', 'g.ts', 'h.ts', 'i.ts', 'j.ts'])], []],
    // index.ts, __init__.py, mod.rs, README are in most directories: they do not make a copy.
    ['generic names do not count', [...names('src', ['index.ts', '__init__.py', 'mod.rs', 'README.md', 'a.ts']), ...names('src/x', ['index.ts', '__init__.py', 'mod.rs', 'README.md', 'a.ts'])], []],
    // Files at the root have a parent too.
    ['a copy of the root', [...names('', ['a.go', 'b.go', 'c.go', 'd.go']), ...names('legacy', ['a.go', 'b.go', 'c.go', 'd.go'])], ['legacy']],
  ])('%s', (_name, files, expected) => {
    expect([...copyDirs(files).keys()].sort()).toEqual(expected);
  });

  it('scales files anywhere below a copy unless the question says its name', () => {
    const copies = new Map([['pkg/v1', 'v1']]);
    expect(copyFactor('pkg/v1/main.py', copies, wordsOf('validate extra fields'))).toBe(COPY_FACTOR);
    expect(copyFactor('pkg/v1/deep/x.py', copies, wordsOf('validate extra fields'))).toBe(COPY_FACTOR);
    expect(copyFactor('pkg/v1/main.py', copies, wordsOf('Fix backported V1 namespace'))).toBe(1);
    expect(copyFactor('pkg/main.py', copies, wordsOf('validate extra fields'))).toBe(1);
    expect(copyFactor('pkg/v10/main.py', copies, wordsOf('x'))).toBe(1);
  });
});
