import { describe, expect, it } from 'vitest';
import { coChangeWeights, messageTokens, messageWeights, parseLog, withHistory, type History } from '../../src/locate/history.js';
import { stem, type Term } from '../../src/locate/query.js';

// The history signal's parts, each held to what its docblock promises: the log format git prints, the tokens, BM25
// over messages (against a reference written from the formula, on generated histories), co-change and the lending.
// test/locate/history.test.ts runs the whole signal through real git; these rows see the arithmetic it cannot.

const word = (text: string, weight = 1): Term => ({ text, kind: 'word', weight, wholeWord: false });
const ident = (text: string): Term => ({ text, kind: 'identifier', weight: 2, wholeWord: false });

describe('parseLog: git log --format=%x00%s%n%b%x01 --name-only', () => {
  const record = (subject: string, body: string | null, files: string[]): string =>
    `\0${subject}${body === null ? '' : `\n${body}`}\x01\n${files.join('\n')}\n`;

  it('one commit per record, subject and body read, files listed, empty lines dropped', () => {
    const h = parseLog(record('Fix parser crash', 'the tokenizer overflowed', ['src/parse.ts', '', 'src/token.ts']));
    expect(h.commits).toHaveLength(1);
    expect(h.commits[0]!.files).toEqual(['src/parse.ts', 'src/token.ts']);
    expect([...h.commits[0]!.tf.keys()].sort()).toEqual(['crash', 'fix', 'overflow', 'parser', 'tokenizer', 'the'].map(stem).sort());
    expect(h.commits[0]!.length).toBe(6);
  });

  it('a subject with no body; a subject whose only newline comes after the \\x01', () => {
    const h = parseLog(`${record('Add cache layer', null, ['a.ts'])}\0Tidy imports\x01\nb.ts\n`);
    expect(h.commits.map((c) => [...c.tf.keys()])).toEqual([['add', 'cache', 'layer'].map(stem), ['tidy', 'imports'].map(stem)]);
  });

  it('the body is read to 400 characters only', () => {
    const body = `${'x'.repeat(396)} zzzz farword`;
    const tf = parseLog(record('Subject', body, ['a.ts'])).commits[0]!.tf;
    expect(tf.has('zzzz')).toBe(false);
    const near = parseLog(record('Subject', `${'x'.repeat(394)} zzzz farword`, ['a.ts'])).commits[0]!.tf;
    expect(near.has('zzzz')).toBe(true);
    expect(near.has(stem('farword'))).toBe(false);
  });

  it.each([
    [0, 0],
    [1, 1],
    [40, 1],
    [41, 0],
  ])('a commit of %i files is %s commit(s): sweeps and empty commits say nothing', (count, kept) => {
    const files = Array.from({ length: count }, (_v, i) => `f${i}.ts`);
    expect(parseLog(record('Rename everything', null, files)).commits).toHaveLength(kept);
  });

  it('a record with no \\x01 is not a commit; df counts a word once per commit', () => {
    const h = parseLog(`\0garbage with no end\n${record('cache cache miss', null, ['a.ts'])}${record('cache hit', null, ['b.ts'])}`);
    expect(h.commits).toHaveLength(2);
    expect(h.df.get('cache')).toBe(2);
    expect(h.df.get('miss')).toBe(1);
    expect(h.commits[0]!.tf.get('cache')).toBe(2);
  });
});

describe('messageTokens', () => {
  it.each<[string, string[]]>([
    ['fix the parser', ['fix', 'the', 'parser'].map(stem)],
    ['a of to', []],
    [`ok ${'x'.repeat(61)} ${'y'.repeat(60)}`, ['y'.repeat(60)]],
    ['parseHTTPHeader', ['parsehttpheader', 'parse', 'http', 'header'].map((w, i) => (i === 0 ? w : stem(w)))],
    ['read_file', ['read_file', 'read', 'file'].map((w, i) => (i === 0 ? w : stem(w)))],
    ['_private', [stem('private')]],
    ['$scope', [stem('$scope')]],
    // One part of three letters or more: the part only (the question's words of an identifier are terms too).
    ['toJSON', [stem('json')]],
    ['XMLParser', ['xmlparser', 'xml', 'parser'].map((w, i) => (i === 0 ? w : stem(w)))],
    ['v2Engine', [stem('engine')]],
    ['go-to/file.ts', ['file'].map(stem)],
  ])('%j', (text, tokens) => {
    expect(messageTokens(text)).toEqual(tokens);
  });
});

/** BM25 over messages written from the docblocks, the reference for messageWeights. */
function referenceWeights(history: History, terms: readonly Term[]): Map<string, number> {
  const asked = new Map<string, number>();
  for (const t of terms) {
    if (t.parts || t.kind === 'path' || t.kind === 'quoted') continue;
    const text = t.kind === 'identifier' ? t.text.replace(/[^a-z0-9_$]/g, '') : t.text;
    if (text.length >= 3) asked.set(text, Math.max(asked.get(text) ?? 0, t.weight));
  }
  const n = history.commits.length;
  const out = new Map<string, number>();
  if (n === 0 || asked.size === 0) return out;
  const avg = history.commits.reduce((s, c) => s + c.length, 0) / n;
  const idf = (t: string): number => {
    const df = history.df.get(t) ?? 0;
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  };
  let ideal = 0;
  for (const [t, w] of asked) ideal += w * idf(t);
  const scored: { files: string[]; s: number; at: number }[] = [];
  history.commits.forEach((c, at) => {
    let score = 0;
    for (const [t, w] of asked) {
      const tf = c.tf.get(t) ?? 0;
      if (tf === 0) continue;
      const norm = 1 - 0.5 + (0.5 * c.length) / Math.max(avg, 1);
      score += w * idf(t) * ((tf * 2.2) / (tf + 1.2 * norm));
    }
    const s = score * Math.min(1, score / ideal);
    if (s >= 0.09 * ideal) scored.push({ files: c.files, s, at });
  });
  scored.sort((a, b) => b.s - a.s || a.at - b.at);
  for (const { files, s } of scored.slice(0, 12)) for (const f of files) out.set(f, (out.get(f) ?? 0) + s / Math.sqrt(files.length));
  const max = Math.max(0, ...out.values());
  if (max > 0) for (const [f, w] of out) out.set(f, w / max);
  return out;
}

/** A seeded generator, so a failing history can be reproduced. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

const VOCAB = ['cache', 'parser', 'render', 'table', 'width', 'column', 'token', 'crash', 'error', 'timeout', 'session', 'login', 'retry', 'update', 'remove'];

function randomHistory(seed: number): string {
  const r = rng(seed);
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  let log = '';
  const commits = 5 + Math.floor(r() * 40);
  for (let i = 0; i < commits; i += 1) {
    const words = Array.from({ length: 1 + Math.floor(r() * 7) }, () => pick(VOCAB));
    const files = Array.from({ length: 1 + Math.floor(r() * 5) }, () => `src/${pick(VOCAB)}.ts`);
    log += `\0${words.join(' ')}\n${r() < 0.3 ? pick(VOCAB) : ''}\x01\n${[...new Set(files)].join('\n')}\n`;
  }
  return log;
}

describe('messageWeights against the reference', () => {
  const questions: Term[][] = [
    [word('cache'), word('timeout')],
    [word('render'), word('table'), word('width'), word('column')],
    [ident('retry'), word('session'), word('crash')],
    [word('login')],
    [word('nothing'), word('matches')],
    [{ ...word('tablewidth'), parts: ['table', 'width'] }, { ...word('src/table', 2), kind: 'path' }, { ...word('cache', 2), kind: 'quoted' }, word('table')],
    [word('to'), word('error', 0.5), word('error', 1.5)],
  ];
  it.each(Array.from({ length: 30 }, (_v, i) => i + 1))('history seed %i', (seed) => {
    const history = parseLog(randomHistory(seed));
    for (const terms of questions) {
      const got = messageWeights(history, terms);
      const want = referenceWeights(history, terms);
      expect([...got.keys()].sort(), JSON.stringify(terms)).toEqual([...want.keys()].sort());
      for (const [f, w] of want) expect(got.get(f)).toBeCloseTo(w, 9);
    }
  });

  it('one common word of four is no resemblance; the best file weighs 1', () => {
    const log = `\0render the table width and column\x01\nsrc/table.ts\n\0update the readme\x01\nREADME.md\n\0column\x01\nsrc/col.ts\n`;
    const history = parseLog(log.repeat(1));
    const w = messageWeights(history, [word('render'), word('table'), word('width'), word('column')]);
    expect(w.get('src/table.ts')).toBe(1);
    expect(w.has('README.md')).toBe(false);
    expect(w.has('src/col.ts')).toBe(false);
  });

  it('only the twelve best commits lend, and a commit shares its score among its files by the square root', () => {
    let log = '';
    for (let i = 0; i < 13; i += 1) log += `\0cache timeout\x01\nsrc/c${i}.ts\n`;
    log += '\0cache timeout\x01\nsrc/a.ts\nsrc/b.ts\nsrc/c.ts\nsrc/d.ts\n';
    const history = parseLog(log);
    const w = messageWeights(history, [word('cache'), word('timeout')]);
    expect(w.size).toBe(12);
    expect(w.has('src/c12.ts')).toBe(false);
    expect(w.has('src/a.ts')).toBe(false);
  });
});

describe('coChangeWeights', () => {
  const history = parseLog(
    [
      ['src/a.ts', 'src/b.ts'],
      ['src/a.ts', 'src/c.ts', 'src/d.ts'],
      ['src/b.ts', 'src/d.ts'],
      ['src/e.ts'],
      ['src/x.ts', 'src/y.ts'],
      ['src/a.ts'],
    ]
      .map((files) => `\0change\x01\n${files.join('\n')}\n`)
      .join(''),
  );
  it('a seed lends 1/(its rank+1), shared among the other files; lone commits and seeds themselves get nothing', () => {
    const w = coChangeWeights(history, ['src/a.ts', 'src/b.ts']);
    // b: with a (1/1, one other) ; c: with a (1/1 over 2 others) = 0.5 ; d: 0.5 (with a) + 0.5 (with b: 1/2 over 1) = 1
    expect(Object.fromEntries(w)).toEqual({ 'src/c.ts': 0.5, 'src/d.ts': 1 });
  });
  it('no seed in any commit: nothing', () => {
    expect(coChangeWeights(history, ['src/z.ts']).size).toBe(0);
  });
  it('the first seed counts more than the second', () => {
    const w = coChangeWeights(history, ['src/b.ts', 'src/a.ts']);
    // a and b are seeds. c: a (1/2) over 2 = 0.25; d: a 0.25 + b (1/1 over 1) = 1.25 → normalised 0.2 and 1.
    expect(w.get('src/c.ts')).toBeCloseTo(0.2, 12);
    expect(w.get('src/d.ts')).toBe(1);
  });
});

describe('withHistory: the lending', () => {
  type R = { path: string; score: number };
  const empty = (rel: string): R => ({ path: rel, score: 0 });
  const history = parseLog(
    '\0session timeout too short\x01\nsrc/session.ts\n' +
      '\0session timeout on login\x01\nsrc/session.ts\nsrc/login.ts\n' +
      '\0unrelated docs\x01\nREADME.md\nsrc/other.ts\n' +
      '\0tweak\x01\nsrc/main.ts\nsrc/helper.ts\n',
  );
  const terms = [word('session'), word('timeout')];
  const listed = new Set(['src/session.ts', 'src/login.ts', 'src/main.ts', 'src/helper.ts', 'README.md', 'src/other.ts']);
  const ranked: R[] = [
    { path: 'src/main.ts', score: 2 },
    { path: 'src/login.ts', score: 1 },
  ];

  it('the file most like the question gains 0.8 of the best score; co-change 0.15; both said, rounded', () => {
    const { ranked: out, contributions } = withHistory(ranked, history, terms, listed, () => 1, empty);
    const session = contributions.get('src/session.ts')!;
    expect(session.messages).toBe(1.6);
    expect(out[0]).toEqual({ path: 'src/main.ts', score: 2 });
    expect(out.find((r) => r.path === 'src/session.ts')!.score).toBe(1.6 + session.cochange);
    // helper changed with main (the best seed): the co-change share of the top score.
    expect(contributions.get('src/helper.ts')).toEqual({ messages: 0, cochange: 0.3 });
    const scores = out.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    for (const c of contributions.values()) for (const v of [c.messages, c.cochange]) expect(Math.round(v * 1000) / 1000).toBe(v);
  });

  it('a place factor scales the bonus; a file that is not listed gains nothing', () => {
    const place = (rel: string): number => (rel === 'src/session.ts' ? 0.1 : 1);
    const { contributions } = withHistory(ranked, history, terms, new Set([...listed].filter((f) => f !== 'src/helper.ts')), place, empty);
    expect(contributions.get('src/session.ts')!.messages).toBe(0.16);
    expect(contributions.has('src/helper.ts')).toBe(false);
  });

  it.each<[string, History | null, R[]]>([
    ['no history', null, ranked],
    ['a history of no commits', { commits: [], df: new Map() }, ranked],
    ['nothing ranked', history, []],
    ['a best score of 0', history, [{ path: 'src/main.ts', score: 0 }]],
  ])('%s: the ranking as it was, nothing said', (_name, h, input) => {
    const { ranked: out, contributions } = withHistory(input, h, terms, listed, () => 1, empty);
    expect(out).toEqual(input);
    expect(contributions.size).toBe(0);
  });

  it('ties keep path order', () => {
    const { ranked: out } = withHistory(
      [
        { path: 'src/z.ts', score: 1 },
        { path: 'src/a.ts', score: 1 },
      ],
      parseLog('\0nothing alike\x01\nsrc/q.ts\n'),
      terms,
      listed,
      () => 1,
      empty,
    );
    expect(out.map((r) => r.path)).toEqual(['src/a.ts', 'src/z.ts']);
  });
});
