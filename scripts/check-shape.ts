/*
 * Two shapes of src/ that `npm run check` holds (docs/architecture.md):
 *
 * - **Functions fit on a screen:** no function, method or arrow function in src/ is longer than
 *   MAX_FUNCTION_LINES lines, counted from its first line to its last.
 * - **No import cycles:** no file of src/ reaches itself through its imports (static, dynamic,
 *   type-only: a cycle is a cycle to a reader).
 *
 * Neither has exceptions: a function that grows past the limit is split into named steps, a
 * cycle is broken. test/repository/check-shape.test.ts shows each check catches what it forbids.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { SRC, sourceFiles } from './check-layers.ts';

export const MAX_FUNCTION_LINES = 120;

/** The functions of one file's source longer than the limit, as `file: name (N lines)`. */
export function longFunctions(file: string, source: string): { key: string; lines: number }[] {
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: { key: string; lines: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line;
      const last = sourceFile.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > MAX_FUNCTION_LINES) found.push({ key: `${file}: ${nameOf(node)}`, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

function nameOf(node: ts.Node): string {
  const named = node as { name?: ts.Node };
  if (named.name !== undefined && ts.isIdentifier(named.name)) return named.name.text;
  const parent = node.parent;
  if (parent !== undefined && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) {
    return parent.name.text;
  }
  if (parent !== undefined && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) {
    return parent.name.text;
  }
  return '(anonymous)';
}

/** The relative imports of a source, as files relative to src/. */
export function importsOf(file: string, source: string): string[] {
  const specifiers = [...source.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+\.ts)'/g)].map(
    (match) => match[1] as string,
  );
  return specifiers.map((specifier) => relative(SRC, resolve(SRC, dirname(file), specifier)));
}

/** Every cycle of an import graph, each as its files sorted and joined by ' → '. */
export function importCycles(graph: Map<string, string[]>): string[] {
  // Tarjan's strongly connected components: a component of more than one file is a cycle.
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[] = [];
  const connect = (file: string): void => {
    indexOf.set(file, index);
    low.set(file, index);
    index += 1;
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (!indexOf.has(next)) {
        connect(next);
        low.set(file, Math.min(low.get(file) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file) as number, indexOf.get(next) as number));
      }
    }
    if (low.get(file) === indexOf.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      const selfImport = (graph.get(file) ?? []).includes(file);
      if (component.length > 1 || selfImport) cycles.push(component.sort().join(' → '));
    }
  };
  for (const file of graph.keys()) if (!indexOf.has(file)) connect(file);
  return cycles.sort();
}

/** Every shape problem of src/, as lines; empty when both checks hold. */
export async function shapeProblems(): Promise<string[]> {
  const files = await sourceFiles(SRC);
  const problems: string[] = [];
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const source = await readFile(join(SRC, file), 'utf8');
    graph.set(file, importsOf(file, source));
    for (const { key, lines } of longFunctions(file, source)) {
      problems.push(`${key}: ${lines} lines (at most ${MAX_FUNCTION_LINES}; split it)`);
    }
  }
  for (const cycle of importCycles(graph)) problems.push(`import cycle: ${cycle}`);
  return problems;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const problems = await shapeProblems();
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) {
    console.error(`check:shape: ${problems.length} problem(s)`);
    process.exit(1);
  }
  console.log(`check:shape: no function in src/ over ${MAX_FUNCTION_LINES} lines, no import cycle`);
}
