#!/usr/bin/env node
/**
 * Lists the functions of src/ longer than a limit, longest first: `node scripts/long-functions.js [LINES]`
 * (default 60). A function, method, constructor or arrow counts from its first line to its last, the comment
 * above it left out; one inside another counts on its own too. Exits 1 when any is listed, so a step of a
 * review can hold the limit.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '..');
const limit = Number(process.argv[2] ?? 60);
if (!Number.isInteger(limit) || limit < 1) {
  console.error('usage: node scripts/long-functions.js [LINES]');
  process.exit(2);
}

/** The TypeScript files below `dir`, declarations left out. */
function* sources(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path;
  }
}

/** The name a reader looks for: the function's own, its variable's or property's, with its class before it. */
function nameOf(node, className) {
  const parent = node.parent;
  const own =
    node.name?.getText() ??
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)
      ? parent.name.getText()
      : '(anonymous)');
  const method =
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node);
  if (!className || !method) return own;
  return `${className}.${ts.isConstructorDeclaration(node) ? 'constructor' : own}`;
}

const found = [];
for (const file of sources(join(ROOT, 'src'))) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const lineOf = (position) => source.getLineAndCharacterOfPosition(position).line;
  const visit = (node, className) => {
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
      const name = node.name?.text ?? '(class)';
      ts.forEachChild(node, (child) => visit(child, name));
      return;
    }
    if (ts.isFunctionLike(node) && node.body) {
      const lines = lineOf(node.end) - lineOf(node.getStart()) + 1;
      if (lines > limit) found.push({ lines, name: nameOf(node, className), file: relative(ROOT, file) });
    }
    ts.forEachChild(node, (child) => visit(child, className));
  };
  visit(source, undefined);
}

found.sort((a, b) => b.lines - a.lines);
for (const { lines, name, file } of found) console.log(`${String(lines).padStart(4)}  ${name}  ${file}`);
console.log(`${found.length} function${found.length === 1 ? '' : 's'} over ${limit} lines in src/`);
process.exitCode = found.length > 0 ? 1 : 0;
