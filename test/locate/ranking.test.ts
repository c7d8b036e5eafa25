import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locate } from '../../src/locate/locate.js';
import { makeRepo } from '../support/temp-repo.js';

// Each row is a change description of the kind the benchmark draws from commit subjects, over a small real repository
// where the file that answers it is outranked by a file holding more of its words unless the rule under test applies.
const FILES: Record<string, string> = {
  // `css:` names this file; it holds the other words once.
  'src/plugins/css.ts': 'export function cssPlugin() {\n  // lightningcss targets\n  return compile();\n}\nfunction compile() {}\n',
  // Holds the same words more often, but the scope does not name it.
  'src/build.ts':
    'export function build() {\n  const targets = resolveTargets(); // empty targets\n  lightningcss(targets); // lightningcss targets\n  return lightningcss; // never pass empty\n}\n',
  // The root build script names every task and package: more hits than the code, and not where the answer is.
  'Makefile.mjs': Array.from({ length: 6 }, (_, i) => `target("register${i}", () => exec("inherit the parent execArgv"));`).join('\n') + '\n',
  'src/register/worker.ts': 'export function startWorker(parent: { execArgv: string[] }) {\n  return spawn(parent.execArgv);\n}\n',
  // `trailing comma` is written as one name here; the other file holds both words apart, more often.
  'src/printer/comments.ts': 'export function printTrailingComma(node: Node) {\n  return node.trailingComma;\n}\n',
  'src/printer/tokens.ts':
    'export function printToken() {\n  // trailing whitespace\n  // a comma\n  // trailing newline\n  // comma list\n  // trailing space\n  // comma again\n}\n',
  // `define` is a stop word in prose; as a scope it names this file.
  'src/plugins/define.ts': 'export function definePlugin(keys: string[]) {\n  return keys.map((k) => k.replace(".", "\\\\."));\n}\n',
  'src/utils.ts': 'export function escapeDots(keys: string) {\n  // escaped dots in keys\n  return keys; // keys with dots, escaped\n}\n',
  // `lib/v1/` is an older copy of `lib/` (most of its files have a namesake there); the copy holds the words more often.
  'lib/main.py': 'def validate(model):\n    # extra fields\n    return model\n',
  'lib/v1/main.py': 'def validate(model):\n    # extra fields are validated, extra fields kept\n    return model  # extra fields\n',
  ...Object.fromEntries(['fields', 'types', 'errors', 'config'].flatMap((m) => [[`lib/${m}.py`, `X = 1\n`], [`lib/v1/${m}.py`, `X = 1\n`]])),
  // A change's leading verb names what it does, not where: this file is named and full of it.
  'src/remove.ts': 'export function remove(node: Node) {\n  // remove the node, remove its flag\n  return remove;\n}\n',
  'src/flags.ts': 'export const flags = {\n  // the deprecated flag\n  legacy: true,\n};\n',
  ...Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`src/misc/part${i}.ts`, `export const part${i} = ${i};\n`])),
};

let root = '';
let cleanup: () => Promise<void> = async () => undefined;
beforeAll(async () => {
  const made = await makeRepo(FILES);
  root = made.root;
  cleanup = made.cleanup;
});
afterAll(async () => cleanup());

describe('locate ranking rules on a real temporary repository', () => {
  it.each([
    // A leading scope that some path names scales down the files it does not name.
    ["css: don't pass empty targets to lightningcss", 'src/plugins/css.ts', 'src/build.ts'],
    // Build and tool configuration (Makefile.mjs, *.config.ts) ranks below code holding fewer of the words.
    ['do not inherit parent execArgv in the register worker', 'src/register/worker.ts', 'Makefile.mjs'],
    // Adjacent words run together find the name that writes the phrase as one identifier.
    ['preserve trailing comma in printed output', 'src/printer/comments.ts', 'src/printer/tokens.ts'],
    // A scope word is kept even when it is a stop word in prose.
    ['define: fix escaped dots in keys', 'src/plugins/define.ts', 'src/utils.ts'],
    // A directory that copies its parent (an old version, a compat layer) ranks below the original…
    ['validate extra fields on the model', 'lib/main.py', 'lib/v1/main.py'],
    // …unless the question names it, even by a word too short to search for.
    ['v1: validate extra fields on the model', 'lib/v1/main.py', 'lib/main.py'],
    // The leading verb of a change description counts less than the words that say where.
    ['Remove the deprecated flag', 'src/flags.ts', 'src/remove.ts'],
  ])('%s → %s before %s', async (question, first, later) => {
    const paths = (await locate(root, question, { timeoutMs: 10_000 })).results.map((r) => r.path);
    expect(paths[0]).toBe(first);
    expect(paths).toContain(later);
  });

  it('a scope that no path names leaves the ranking to the words', async () => {
    const paths = (await locate(root, 'zebra: preserve trailing comma in printed output', { timeoutMs: 10_000 })).results.map((r) => r.path);
    expect(paths[0]).toBe('src/printer/comments.ts');
  });
});
