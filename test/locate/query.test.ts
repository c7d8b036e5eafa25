import { describe, expect, it } from 'vitest';
import { MAX_TERMS, pathsThatExist, stem, termsOf, withoutCommitType } from '../../src/locate/query.js';

const texts = (question: string): string[] => termsOf(question).map((t) => t.text);
const kindOf = (question: string, text: string): string | undefined => termsOf(question).find((t) => t.text === text)?.kind;

describe('the terms of a question', () => {
  it.each([
    ['Where is createServer called?', 'createserver', 'identifier'],
    ['how does handle_error work', 'handle_error', 'identifier'],
    ['what does express.static do', 'express.static', 'identifier'],
    ['what is in lib/router/index.js', 'lib/router/index.js', 'path'],
    ['who reads config.yaml', 'config.yaml', 'path'],
    ['where is "Cache-Control" set', 'cache-control', 'quoted'],
    ['where is `trustProxy` read', 'trustproxy', 'identifier'],
    ['how are sessions expired', 'session', 'word'],
  ])('%s → %s (%s)', (question, text, kind) => {
    expect(kindOf(question, text)).toBe(kind);
  });

  it.each([
    ['Where is createServer called?', ['create', 'server']],
    ['how does handle_error work', ['handle', 'error']],
    ['what does express.static do', ['express', 'static']],
  ])('%s also searches the words inside its identifiers', (question, words) => {
    for (const word of words) expect(texts(question)).toContain(word);
  });

  it('drops stop words and question words, keeps short code words only as whole words', () => {
    expect(texts('How does the code work and where is it?')).toEqual([]);
    const short = termsOf('what does the map api return').find((t) => t.text === 'api');
    expect(short).toMatchObject({ wholeWord: true });
  });

  it.each([
    ['Remove `Scope#buildUndefinedNode`', ['scope.buildundefinednode', 'buildundefinednode']],
    ['stream: implement `Peekable::size_hint`', ['peekable.size_hint', 'size_hint', 'peekable']],
    ['use cooperative budgeting in `tokio_stream::iter`', ['tokio_stream', 'iter']],
    ['Handle null in `getAll{Prev,Next}Siblings`', ['getallprevsiblings', 'getallnextsiblings']],
    ['Add types for `@babel/standalone`', ['babel-standalone', 'standalone']],
  ])('%s: qualified names, brace alternatives and package names give their parts', (question, expected) => {
    for (const text of expected) expect(texts(question)).toContain(text);
    expect(texts(question).some((t) => t.includes(' '))).toBe(false);
  });

  it.each([
    ['hmr: handle invalidate in virtual modules', ['hmr'], ['invalidate']],
    ['sync, time: avoid a deadlock', ['sync', 'time'], ['deadlock']],
    // Issue 37: `type(scope):` is read as `scope:`; before, the parenthesis kept it from being a scope at all.
    ['fix(parser): forbid let x!', ['parser'], ['forbid']],
    ['feat(router, trie)!: match wildcards', ['router', 'trie'], ['match']],
    ['where is the config loaded', [], ['config']],
  ])('%s: the leading scope marks its words', (question, scoped, plain) => {
    const terms = termsOf(question);
    for (const text of scoped) expect(terms.find((t) => t.text === text)?.scope).toBe(true);
    for (const text of plain) expect(terms.find((t) => t.text === text)?.scope).toBeUndefined();
  });

  it.each([
    ['define: escape dots in keys', 'define'],
    ['class: keep static blocks', 'class'],
  ])('%s: a scope keeps its word even when prose would drop it as a stop word', (question, scope) => {
    expect(termsOf(question).find((t) => t.text === scope)?.scope).toBe(true);
    expect(termsOf(question.replace(/^\w+: /, `how ${scope} `)).some((t) => t.text === scope)).toBe(false);
  });

  it.each([
    ['preserve trailing comma in optional call args', ['preservetrailing', 'trailingcomma', 'optionalcall', 'callargs'], ['commain']],
    ['worker client thread synchronization', ['workerclient', 'clientthread', 'threadsynchronization'], []],
    ['where is the config loaded', ['configloaded'], ['theconfig', 'isthe']],
    ['router router', [], ['routerrouter']],
    ['Remove `Scope#buildUndefinedNode` early', [], ['removeearly']],
  ])('%s: adjacent prose words are also searched run together', (question, compounds, absent) => {
    const terms = termsOf(question);
    for (const text of compounds) expect(terms.find((t) => t.text === text)).toMatchObject({ kind: 'identifier', weight: 1 });
    for (const text of absent) expect(terms.some((t) => t.text === text)).toBe(false);
  });

  it('a compound names the word terms it stands for, as they are searched (stemmed)', () => {
    const terms = termsOf('preserve trailing comma');
    expect(terms.find((t) => t.text === 'trailingcomma')?.parts).toEqual(['trail', 'comma']);
    expect(terms.map((t) => t.text)).toEqual(expect.arrayContaining(['trail', 'comma']));
  });

  it('compounds only fill the room the other terms leave', () => {
    const long = Array.from({ length: 30 }, (_, i) => `word${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}x`).join(' ');
    const terms = termsOf(long);
    expect(terms).toHaveLength(MAX_TERMS);
    expect(terms.some((t) => t.parts !== undefined)).toBe(false);
  });

  it('leaves out the words of change descriptions (fix, bug, regression)', () => {
    expect(texts('fix the bug and the regression in router')).toEqual(['router']);
  });

  it.each([
    ['transformed', 'transform'],
    ['queries', 'quer'],
    ['mapped', 'mapped'],
    ['bundled', 'bundl'],
    ['sessions', 'session'],
    ['handling', 'handl'],
    ['status', 'status'],
    ['class', 'class'],
    ['uses', 'uses'],
  ])('stem(%s) = %s', (word, expected) => {
    expect(stem(word)).toBe(expected);
  });

  it('is deterministic, deduplicated and bounded', () => {
    const long = Array.from({ length: 80 }, (_, i) => `identifierNumber${i}`).join(' ');
    expect(termsOf(long)).toHaveLength(MAX_TERMS);
    expect(termsOf('router Router ROUTER')).toEqual(termsOf('router Router ROUTER'));
    expect(texts('router Router ROUTER')).toEqual(['router']);
  });

  // Issue 37: conventional-commit types say what kind of change, not where.
  it.each([
    ['fix: crash on empty config', 'crash on empty config'],
    ['feat: add streaming', 'add streaming'],
    ['chore(deps): bump rollup', 'deps: bump rollup'],
    ['Fix(parser)!: forbid x', 'parser: forbid x'],
    ['refactor(core,hooks): split', 'core, hooks: split'],
    ['docs: explain caching', 'docs explain caching'],
    ['test(router): cover params', 'router: test cover params'],
    ['perf(*): faster', 'faster'],
    ['hmr: handle invalidate', 'hmr: handle invalidate'],
    ['fixture loading is slow', 'fixture loading is slow'],
  ])('withoutCommitType(%j) = %j', (question, expected) => {
    expect(withoutCommitType(question)).toBe(expected);
  });

  it.each([
    ['fix: handle empty files', 'fix'],
    ['feat: trailing commas', 'feat'],
    ['chore: release', 'chore'],
  ])('%s: the type is no term and no scope', (question, type) => {
    const terms = termsOf(question);
    expect(terms.some((t) => t.text === type)).toBe(false);
    expect(terms.some((t) => t.scope === true)).toBe(false);
  });

  it.each([
    ['how is --after-context applied?', ['after-context', 'after_context', 'aftercontext', 'context']],
    ['what does -max-count=3 do', ['max-count', 'max_count', 'maxcount']],
    ['--no-ignore-vcs is ignored', ['no-ignore-vcs', 'no_ignore_vcs', 'noignorevcs']],
  ])('%s: a command-line flag is matched to the identifiers that spell it', (question, expected) => {
    for (const text of expected) expect(texts(question)).toContain(text);
    expect(kindOf(question, expected[1]!)).toBe('identifier');
    // Three spellings of one name: each at a quarter of an identifier's weight.
    expect(termsOf(question).find((t) => t.text === expected[1])?.weight).toBe(0.5);
  });

  it('a slash is a path only when such a path exists; otherwise prose, at a word\'s weight', () => {
    const terms = termsOf('read/write errors in lib/router');
    expect(terms.filter((t) => t.kind === 'path').map((t) => t.text).sort()).toEqual(['lib/router', 'read/write']);
    const resolved = pathsThatExist(terms, ['lib/router/index.js', 'src/io.ts']);
    expect(resolved.map((t) => t.text)).toEqual(terms.map((t) => t.text));
    expect(resolved.find((t) => t.text === 'lib/router')).toMatchObject({ kind: 'path', weight: 2 });
    expect(resolved.find((t) => t.text === 'read/write')).toMatchObject({ kind: 'quoted', weight: 1 });
    expect(pathsThatExist(terms, ['Read/Write/x.go']).find((t) => t.text === 'read/write')?.kind).toBe('path');
  });
});
