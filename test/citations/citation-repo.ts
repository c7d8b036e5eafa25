/** The repository the citation tables are verified against: express-like files with known lines. */
export function numbered(count: number, special: Record<number, string> = {}): string {
  const lines: string[] = [];
  for (let i = 1; i <= count; i += 1) lines.push(special[i] ?? `// line ${i}`);
  return `${lines.join('\n')}\n`;
}

export const CITATION_FILES: Record<string, string> = {
  'lib/router/index.js': numbered(200, {
    42: 'proto.handle = function handle(req, res, out) {',
    43: '  var self = this;',
    44: '  var idx = 0;',
    136: 'function next(err) {',
  }),
  'lib/application.js': numbered(60, { 10: 'app.use = function use(fn) {', 11: '  var offset = 0;', 12: '  var path = "/";' }),
  'lib/express.js': numbered(20, { 5: 'function createApplication() {' }),
  'lib/response.js': numbered(30, { 7: 'res.json = function json(obj) {' }),
  'src/a.ts': numbered(30, { 10: 'const x = 1;' }),
  'src/my file.ts': numbered(5, { 2: 'export const spaced = true;' }),
  'index.js': numbered(3, { 1: "module.exports = require('./lib/express');" }),
  'package.json': '{\n  "name": "express",\n  "version": "5.1.0"\n}\n',
  'README.md': numbered(12, { 1: '# Express' }),
  Makefile: 'test:\n\tnpm test\n',
  'docs/guide.md': numbered(4),
};
