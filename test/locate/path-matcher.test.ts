import { describe, expect, it } from 'vitest';
import { termsOf, type Term } from '../../src/locate/query.js';
import { PathMatcher, pathMatch, pathTokens } from '../../src/locate/score.js';

// locate matches a whole listing by file name and directory (PathMatcher), never building a path's tokens; it must give
// exactly the numbers of the definition, pathMatch on pathTokens of each path: a difference is a ranking changed.
const definition = (rel: string, terms: readonly Term[]): number[] => terms.map((term) => pathMatch(pathTokens(rel), term));

const word = (text: string): Term => ({ text, kind: 'word', weight: 1, wholeWord: text.length < 4 });
const term = (text: string, kind: Term['kind'], over: Partial<Term> = {}): Term => ({ text, kind, weight: 2, wholeWord: false, ...over });

describe('PathMatcher: the definition\'s numbers, one listing at a time', () => {
  it.each<[string, string[], Term[]]>([
    ['the file name, its words and its run-together form', ['src/RouterParser.ts', 'src/router_parser.rs', 'src/router-parser.js'], [word('router'), term('routerparser', 'identifier'), term('router_parser', 'identifier')]],
    ['a directory on the path, near or far', ['router/a/b/c.ts', 'a/router/b.ts', 'a/b/c.ts'], [word('router')]],
    ['a word\'s stem in a directory and in a name', ['parsers/x.ts', 'x/parsing.ts', 'x/y.ts'], [word('pars')]],
    ['a whole word only as a whole token', ['api/x.ts', 'apis/x.ts', 'x/api.ts', 'x/apiclient.ts'], [word('api')]],
    ['a long word inside a token (substring)', ['src/somerouterthing/a.ts', 'src/a/myrouters.ts', 'src/a.ts'], [word('router')]],
    ['a long word across a directory and a name is no substring', ['src/rou/ter.ts'], [word('router')]],
    ['a path term: the whole path, its end, inside it', ['src/routers/index.ts', 'lib/routers/index.ts.bak', 'routers/index.ts'], [term('routers/index.ts', 'path'), term('./routers/index.ts', 'path')]],
    ['a path term without a slash', ['src/Cargo.toml', 'Cargo.toml', 'x/cargo.tomlx'], [term('cargo.toml', 'path')]],
    ['a quoted text holding a slash is matched inside the path only', ['src/a/b.ts', 'src/ab.ts'], [term('src/a', 'quoted')]],
    ['declarations and extensions stripped from names', ['types/index.d.ts', 'a/index.test.ts', 'a/INDEX.TS'], [word('index'), word('test')]],
    ['upper case and camel case in directories', ['HTTPServer/X.ts', 'myHTTPServer2Go/y.ts', 'a/XMLHttpRequest.js'], [word('server'), word('http'), term('xmlhttprequest', 'identifier')]],
    ['a root-level file and an empty directory part', ['router.ts', 'a//router/b.ts'], [word('router')]],
    ['an extension is neither the name nor a directory', ['Makefile.router', 'src/x.router'], [word('route'), word('router')]],
    ['a word of five letters inside a token, one of four not', ['src/reroute/x.ts', 'src/abcd/xabcdx.ts'], [word('route'), word('abcd')]],
    ['non-ASCII: a lower case that grows, a final sigma, the Kelvin sign', ['İrouter/x.ts', 'ΟΔΟΣ/router.ts', 'a/\u212Aelvin.ts', 'ΟΔΟΣ.x/y'], [word('router'), word('οδος'), word('kelvin'), word('i̇router')]],
    ['a scope term matches as a word', ['src/hmr/x.ts', 'hmr.ts'], [term('hmr', 'word', { scope: true, wholeWord: true, weight: 1 })]],
    ['terms of a real question', ['packages/auth-cache/src/handler/i18n/router-parser.ts', 'packages/i18n/README.md', 'docs/parser.md'], termsOf('where is the i18n router parser code')],
    ['no terms', ['a/b.ts'], []],
  ])('%s', (_name, files, terms) => {
    const matcher = new PathMatcher(terms);
    for (const rel of files) expect(matcher.matches(rel), rel).toEqual(definition(rel, terms));
  });

  it('a listing of random paths, asked with random terms, in any order and twice', () => {
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pieces = ['router', 'Router', 'parser', 'Parse', 'i18n', 'api', 'Api', 'http', 'HTTP', 'server', '-', '_', '.', 'x', 'ΟΔΟΣ', 'İ', 'test', 'd', 'ts', '2'];
    const part = (): string => Array.from({ length: 1 + random(4) }, () => pieces[random(pieces.length)]).join('');
    const files = Array.from({ length: 400 }, () => Array.from({ length: 1 + random(4) }, part).join('/') + ['.ts', '.d.ts', '', '.Rs'][random(4)]);
    const texts = ['router', 'rout', 'parser', 'parse', 'api', 'http', 'server', 'routerparser', 'i18n', 'test', 'οδος', 'x', 'router/parser', 'http.ts'];
    for (let round = 0; round < 20; round++) {
      const terms = Array.from({ length: 1 + random(4) }, () => {
        const text = texts[random(texts.length)]!;
        const kind = (['word', 'identifier', 'path', 'quoted'] as const)[random(4)]!;
        return term(text, kind, { wholeWord: random(3) === 0 });
      });
      const matcher = new PathMatcher(terms);
      for (const rel of [...files, ...files.slice(0, 50)]) expect(matcher.matches(rel), `${rel} ${JSON.stringify(terms)}`).toEqual(definition(rel, terms));
    }
  });
});
