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
  'lib/application.js': numbered(620, {
    10: 'app.use = function use(fn) {',
    11: '  var offset = 0;',
    12: '  var path = "/";',
    596: '  // final handler',
    598: 'app.listen = function listen() {',
    599: '  var server = http.createServer(this)',
    600: '  var args = Array.prototype.slice.call(arguments)',
  }),
  'lib/express.js': numbered(20, { 5: 'function createApplication() {' }),
  'lib/response.js': numbered(30, { 7: 'res.json = function json(obj) {' }),
  'src/a.ts': numbered(30, { 10: 'const x = 1;' }),
  'src/my file.ts': numbered(5, { 2: 'export const spaced = true;' }),
  'index.js': numbered(3, { 1: "module.exports = require('./lib/express');" }),
  'package.json': '{\n  "name": "express",\n  "version": "5.1.0"\n}\n',
  'README.md': numbered(12, { 1: '# Express' }),
  Makefile: 'test:\n\tnpm test\n',
  'docs/guide.md': numbered(4),
  // Lines as they stand in bevy, vite and babel (a few per file, at their real line numbers; the rest are fillers).
  'crates/bevy_app/src/app.rs': numbered(700, {
    136: 'impl App {',
    139: '    pub fn new() -> App {',
    140: '        App::default()',
    141: '    }',
    158: '    pub fn update(&mut self) {',
    159: '        if self.is_building_plugins() {',
    160: '            panic!("App::update() was called while a plugin was building.");',
    161: '        }',
    162: '',
    163: '        self.sub_apps.update();',
    164: '    }',
    185: '    pub fn run(&mut self) -> AppExit {',
    186: '        #[cfg(feature = "trace")]',
    187: '        let _bevy_app_run_span = info_span!("bevy_app").entered();',
    321: '    pub fn add_systems<M>(',
    655: '    pub fn add_plugins<M>(&mut self, plugins: impl Plugins<M>) -> &mut Self {',
  }),
  'packages/vite/src/node/server/index.ts': numbered(800, {
    512: 'export async function _createServer(',
    513: '  inlineConfig: ResolvedConfig | InlineConfig | undefined = {},',
    514: '  options: {',
    515: '    listen: boolean',
    758: '    async listen(port?: number, isRestart?: boolean) {',
    759: '      const hostname = await resolveHostname(config.server.host)',
    760: '      if (httpServer) {',
  }),
  'packages/vite/src/node/config.ts': numbered(1500, {
    199: 'export function defineConfig(config: UserConfigExport): UserConfigExport {',
    200: '  return config',
    201: '}',
    1456: 'export async function resolveConfig(',
    1457: '  inlineConfig: InlineConfig,',
    1458: "  command: 'build' | 'serve',",
    1459: "  defaultMode = 'development',",
  }),
  'packages/babel-parser/src/index.ts': numbered(175, {
    41: 'export function parse(',
    42: '  input: string,',
    43: '  options?: ParserOptions,',
    44: '): ParseResult<File> {',
    88: 'export function parseExpression(',
    89: '  input: string,',
    90: '  options?: ParserOptions,',
    91: '): ParseResult<Expression> {',
    92: '  const parser = getParser(options, input);',
  }),
  'packages/babel-core/src/transform.ts': numbered(65, { 31: 'export const transform: Transform = function transform(', 32: '  code,' }),
  'packages/babel-traverse/src/index.ts': numbered(164, { 59: 'function traverse(', 108: 'export default traverse;', 110: 'traverse.visitors = visitors;' }),
};
