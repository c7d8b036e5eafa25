#!/usr/bin/env node
// Lines of every function-like node with a body in src/ (declarations, methods, arrows, function expressions,
// accessors, constructors), measured with the TypeScript compiler's own parser: first line of the node to its last.
// Usage: node scripts/function-lengths.mjs [--over N] [--json]   (default: every function over 60 lines, longest first;
// FUNCTION_LENGTHS_ROOT=<checkout> measures another checkout)
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Every .ts file under `dir`, sorted, as paths relative to the repository root. */
function sourceFiles(dir, root) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const abs = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(abs, root));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path.relative(root, abs));
  }
  return out.sort();
}

/** A readable name for a function node: its own, or the variable, property or class member it is assigned to. */
function nameOf(node) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (node.name && ts.isPrivateIdentifier(node.name)) return node.name.text;
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && ts.isIdentifier(parent.name)) return parent.name.text;
  return '(anonymous)';
}

/** Every function-like node with a body in the source files under src/: file, name, first line and length in lines. */
export function functionLengths(root = ROOT) {
  const rows = [];
  for (const file of sourceFiles(path.join(root, 'src'), root)) {
    const text = readFileSync(path.join(root, file), 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const visit = (node) => {
      if (ts.isFunctionLike(node) && node.body) {
        const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        rows.push({ file, name: nameOf(node), line: start + 1, lines: end - start + 1 });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return rows.sort((a, b) => b.lines - a.lines);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // A reader that stops early (`| head`) is not an error.
  process.stdout.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  const args = process.argv.slice(2);
  const at = args.indexOf('--over');
  const over = at >= 0 ? Number(args[at + 1]) : 60;
  // FUNCTION_LENGTHS_ROOT measures another checkout (the test measures a small fixture this way).
  const rows = functionLengths(process.env.FUNCTION_LENGTHS_ROOT || ROOT).filter((r) => r.lines > over);
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  else for (const r of rows) process.stdout.write(`${String(r.lines).padStart(4)}  ${r.file}:${r.line}  ${r.name}\n`);
}
