/**
 * Lists the public exports of src/ that break the team rule "every public export has a doc
 * comment with an @example", with file:line, and exits 1 if there are any (0 if none).
 *
 * What is checked, read with the TypeScript compiler (not regexes, so a doc comment is the
 * `/** … *\/` block the compiler attaches to the declaration, and nothing else counts):
 * - every exported function, class, interface, type alias and const of src/**\/*.ts needs a
 *   doc comment with an `@example` tag (overloads: one of them);
 * - every public method and getter of an exported class needs a doc comment; the class's
 *   example covers it. Private (`#name`, `private`) and protected members are not public;
 *   an `override` is documented where the base declares it.
 * Re-exports (`export … from`, `export { imported }`) are exempt: they are documented where
 * they are declared, and that declaration is checked there.
 *
 * @example
 * // npm run check:docs   (or: node_modules/.bin/node scripts/check-doc-examples.ts)
 * // src/cli/exit-codes.ts:31: type ExitCode: doc comment has no @example
 * // src/loop/run-state.ts:57: class RunState, method execute: no doc comment
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** One declaration that breaks the rule. */
interface Gap {
  file: string;
  line: number;
  what: string;
  problem: 'no doc comment' | 'doc comment has no @example';
}

/** The `.ts` files below `folder`, in a stable order (declaration files excluded). */
function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
    .sort()
    .map((name) => join(folder, name));
}

/** The doc comment directly above a declaration, if any (a variable's sits on its statement). */
function docComment(node: ts.Node): ts.JSDoc | undefined {
  // The compiler gives a statement's comment to its first variable only: `export const a = 1,
  // b = 2` documents both.
  const host = ts.isVariableDeclaration(node) ? node.parent.parent : node;
  const comments = ts.getJSDocCommentsAndTags(host).filter(ts.isJSDoc);
  return comments.at(-1);
}

function hasExample(doc: ts.JSDoc): boolean {
  return (doc.tags ?? []).some((tag) => tag.tagName.text === 'example');
}

function hasModifier(node: ts.Node, kind: ts.SyntaxKind): boolean {
  return (
    ts.canHaveModifiers(node) &&
    (ts.getModifiers(node) ?? []).some((modifier) => modifier.kind === kind)
  );
}

/** A named top-level declaration that the rule is about. */
type Declaration =
  | ts.FunctionDeclaration
  | ts.ClassDeclaration
  | ts.InterfaceDeclaration
  | ts.TypeAliasDeclaration
  | ts.EnumDeclaration
  | ts.VariableDeclaration;

function kindOf(node: Declaration): string {
  if (ts.isFunctionDeclaration(node)) return 'function';
  if (ts.isClassDeclaration(node)) return 'class';
  if (ts.isInterfaceDeclaration(node)) return 'interface';
  if (ts.isTypeAliasDeclaration(node)) return 'type';
  if (ts.isEnumDeclaration(node)) return 'enum';
  return ts.getCombinedNodeFlags(node) & ts.NodeFlags.Const ? 'const' : 'let';
}

function nameOf(node: Declaration | ts.ClassElement): string {
  const name = node.name;
  if (name === undefined) return 'default';
  return ts.isIdentifier(name) || ts.isPrivateIdentifier(name) ? name.text : name.getText();
}

/** The declarations a statement makes, whether or not it exports them. */
function declarationsOf(statement: ts.Statement): Declaration[] {
  if (ts.isVariableStatement(statement)) return [...statement.declarationList.declarations];
  if (
    ts.isFunctionDeclaration(statement) ||
    ts.isClassDeclaration(statement) ||
    ts.isInterfaceDeclaration(statement) ||
    ts.isTypeAliasDeclaration(statement) ||
    ts.isEnumDeclaration(statement)
  ) {
    return [statement];
  }
  return [];
}

/** The top-level declarations the file exports itself (not those it re-exports). */
function exportedDeclarations(file: ts.SourceFile): Declaration[] {
  const local = new Map<string, Declaration[]>();
  const exported: Declaration[] = [];
  for (const statement of file.statements) {
    for (const declaration of declarationsOf(statement)) {
      const name = nameOf(declaration);
      local.set(name, [...(local.get(name) ?? []), declaration]);
      if (hasModifier(statement, ts.SyntaxKind.ExportKeyword)) exported.push(declaration);
    }
  }
  // `export { name }` of a name declared in this file exports that declaration; of an
  // imported name it is a re-export.
  for (const statement of file.statements) {
    if (!ts.isExportDeclaration(statement) || statement.moduleSpecifier !== undefined) continue;
    const clause = statement.exportClause;
    if (clause === undefined || !ts.isNamedExports(clause)) continue;
    for (const specifier of clause.elements) {
      const name = (specifier.propertyName ?? specifier.name).getText(file);
      for (const declaration of local.get(name) ?? []) {
        if (!exported.includes(declaration)) exported.push(declaration);
      }
    }
  }
  return exported;
}

function lineOf(file: ts.SourceFile, node: ts.Node): number {
  return file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
}

/** Public methods and getters of a class, one entry per name (overloads and accessor pairs). */
function publicMembers(node: ts.ClassDeclaration): Map<string, ts.ClassElement[]> {
  const members = new Map<string, ts.ClassElement[]>();
  for (const member of node.members) {
    if (!ts.isMethodDeclaration(member) && !ts.isGetAccessorDeclaration(member)) continue;
    if (member.name !== undefined && ts.isPrivateIdentifier(member.name)) continue;
    if (
      hasModifier(member, ts.SyntaxKind.PrivateKeyword) ||
      hasModifier(member, ts.SyntaxKind.ProtectedKeyword) ||
      hasModifier(member, ts.SyntaxKind.OverrideKeyword)
    ) {
      continue;
    }
    const kind = ts.isMethodDeclaration(member) ? 'method' : 'getter';
    const key = `${hasModifier(member, ts.SyntaxKind.StaticKeyword) ? 'static ' : ''}${kind} ${nameOf(member)}`;
    members.set(key, [...(members.get(key) ?? []), member]);
  }
  return members;
}

/** Every gap of one file. */
function gapsOf(path: string, text: string): Gap[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const where = relative(ROOT, path);
  const gaps: Gap[] = [];
  const byName = new Map<string, Declaration[]>();
  for (const declaration of exportedDeclarations(file)) {
    const key = `${kindOf(declaration)} ${nameOf(declaration)}`;
    byName.set(key, [...(byName.get(key) ?? []), declaration]);
  }
  for (const [what, declarations] of byName) {
    const docs = declarations.map(docComment).filter((doc) => doc !== undefined);
    const first = declarations[0] as Declaration;
    const line = lineOf(file, first);
    if (docs.length === 0) gaps.push({ file: where, line, what, problem: 'no doc comment' });
    else if (!docs.some(hasExample)) {
      gaps.push({ file: where, line, what, problem: 'doc comment has no @example' });
    }
    for (const declaration of declarations) {
      if (!ts.isClassDeclaration(declaration)) continue;
      for (const [member, overloads] of publicMembers(declaration)) {
        if (overloads.some((overload) => docComment(overload) !== undefined)) continue;
        const line = lineOf(file, overloads[0] as ts.ClassElement);
        gaps.push({ file: where, line, what: `${what}, ${member}`, problem: 'no doc comment' });
      }
    }
  }
  return gaps.sort((a, b) => a.line - b.line);
}

function main(): number {
  const gaps = sourceFiles(join(ROOT, 'src')).flatMap((path) =>
    gapsOf(path, readFileSync(path, 'utf8')),
  );
  for (const gap of gaps) console.log(`${gap.file}:${gap.line}: ${gap.what}: ${gap.problem}`);
  if (gaps.length === 0) {
    console.log('check:docs: every public export of src/ has a doc comment with an @example');
    return 0;
  }
  const files = new Set(gaps.map((gap) => gap.file)).size;
  console.log(`check:docs: ${gaps.length} gaps in ${files} files`);
  return 1;
}

process.exitCode = main();
