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
 * Then it compiles the examples of the public API, and exits 1 if one does not compile: every
 * `@example` of a declaration that `src/index.ts` or a subpath of package.json's `exports`
 * makes importable (followed through re-exports by the compiler's checker), of the public
 * members of those classes, interfaces and object types, and of each entry point's `@module`
 * comment. All are type-checked in one Program, with the project's strict options, top-level
 * `await` allowed and — as in rustdoc's doctests — unused names allowed. Each example is a
 * module of its own: one without imports gets the public names it mentions imported from the
 * entry point that exports them; one with an `import` brings all of its own. The values
 * examples use without making them (a `session`, a `model`, a `store`…) come from one prelude,
 * {@link PRELUDE}. Examples of internal declarations (not reachable from an entry point) are
 * not compiled: only their presence is checked.
 *
 * @example
 * // npm run check:docs   (or: node_modules/.bin/node scripts/check-doc-examples.ts)
 * // src/render/exit-codes.ts:31: type ExitCode: doc comment has no @example
 * // src/loop/run-state.ts:57: class RunState, method execute: no doc comment
 * // src/loop/loop.ts:80: Loop.run: @example does not compile: Cannot find name 'revive'.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { compileSnippets, entryPoints, ROOT, snippetOptions } from './compile-snippets.ts';

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

/**
 * The context every example is compiled in, like rustdoc's hidden lines: the values examples
 * use without making them, each with the type the API gives it. Kept short — an example that
 * needs anything else declares it itself (`declare const callId: string;`).
 */
export const PRELUDE = `import type { LanguageModel } from 'ai';
import type * as api from 'llm-agent-revival';
import type { FileSystem, ForeignRecord, TailState, TranscriptRecord } from 'llm-agent-revival/transcript';
import type { PostgresStore } from 'llm-agent-revival/store';
declare global {
  // A run: its model (or backends) and tools, its transcript open for writing, at \`path\`.
  const model: LanguageModel;
  const backends: LanguageModel[];
  const tools: api.ToolDefinition[];
  const session: api.Session;
  const path: string;
  const meta: api.SessionMeta;
  // Runs that start runs.
  const registry: api.AgentRegistry;
  const composer: api.Composer;
  const task: string;
  // A transcript as read (its bytes, its records), and what Revival said of it.
  const bytes: Buffer;
  const records: (TranscriptRecord | ForeignRecord)[];
  const state: TailState;
  const messages: api.LoopMessage[];
  const found: api.Inspection;
  const revived: api.Revived | api.ReviveRefused;
  // Where transcripts live, and something caught.
  const fileSystem: FileSystem;
  const store: PostgresStore;
  const error: unknown;
}
export {};
`;

/** One `@example` of the public API: whose it is, where it is, and its code. */
export interface Example {
  /** The declaration: `Loop`, `Revival.inspect`, `module llm-agent-revival/loop`. */
  name: string;
  /** Relative to the repository's root. */
  file: string;
  /** The line of the `@example` tag (1-based); line `k` of the code is line `line + k`. */
  line: number;
  /** The text after the tag, the comment's `*` margins removed. */
  code: string;
}

/** Where a public name is imported from (the first entry exporting it), and if only as a type. */
interface PublicName {
  entry: string;
  typeOnly: boolean;
}

/** Whether an export can only be imported as a type (`export type`, or no value behind it). */
function isTypeOnly(checker: ts.TypeChecker, symbol: ts.Symbol): boolean {
  let current: ts.Symbol | undefined = symbol;
  for (let hop = 0; current !== undefined && current.flags & ts.SymbolFlags.Alias; hop += 1) {
    if (hop > 50 || current.declarations?.some(ts.isTypeOnlyImportOrExportDeclaration)) return true;
    current = checker.getImmediateAliasedSymbol(current);
  }
  return current === undefined || (current.flags & ts.SymbolFlags.Value) === 0;
}

/** An `@example`'s code: the rest of the tag's line, then each line without its `*` margin. */
function codeOf(file: ts.SourceFile, tag: ts.JSDocTag): string {
  const text = file.text.slice(tag.tagName.end, tag.end).split('*/')[0] ?? '';
  const lines = text
    .split('\n')
    .map((line, index) => (index === 0 ? line : line.replace(/^[ \t]*\*(?: |(?=\S)|$)/, '')))
    .map((line) => line.trimEnd());
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  return lines.join('\n');
}

/** The `@example`s of the doc comment of one declaration (or of the file, for `@module`). */
function examplesOf(name: string, doc: ts.JSDoc | undefined): Example[] {
  const file = doc?.getSourceFile();
  if (doc === undefined || file === undefined) return [];
  return (doc.tags ?? [])
    .filter((tag) => tag.tagName.text === 'example')
    .map((tag) => ({
      name,
      file: relative(ROOT, file.fileName),
      line: file.getLineAndCharacterOfPosition(tag.tagName.getStart(file)).line + 1,
      code: codeOf(file, tag),
    }));
}

/** The members of a class, interface or object type, with the name a reader knows them by. */
function membersOf(node: ts.Node): [string, ts.Node][] {
  let members: readonly (ts.ClassElement | ts.TypeElement)[] = [];
  if (ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node)) members = node.members;
  else if (ts.isTypeAliasDeclaration(node) && ts.isTypeLiteralNode(node.type)) {
    members = node.type.members;
  }
  return members
    .filter(
      (member) =>
        !(member.name !== undefined && ts.isPrivateIdentifier(member.name)) &&
        !hasModifier(member, ts.SyntaxKind.PrivateKeyword) &&
        !hasModifier(member, ts.SyntaxKind.ProtectedKeyword),
    )
    .map((member) => {
      if (ts.isConstructorDeclaration(member)) return ['constructor', member];
      const name = member.name;
      if (name === undefined) return ['()', member];
      return [ts.isIdentifier(name) ? name.text : name.getText(), member];
    });
}

/**
 * Every `@example` of the public API: of each declaration the entry points export (followed
 * through re-exports with the compiler's checker), of the public members of an exported class,
 * interface or object type, and of each entry point's `@module` comment; and the names the
 * entry points export, for the examples that do not import what they use.
 */
export function publicExamples(
  program: ts.Program,
  entries: ReadonlyMap<string, string>,
): { examples: Example[]; names: Map<string, PublicName> } {
  const checker = program.getTypeChecker();
  const examples = new Map<string, Example>();
  const names = new Map<string, PublicName>();
  const add = (found: Example[]) => {
    for (const example of found) {
      const key = `${example.file}:${example.line}`;
      if (!examples.has(key)) examples.set(key, example);
    }
  };
  for (const [entry, path] of entries) {
    const file = program.getSourceFile(resolve(ROOT, path));
    const module = file === undefined ? undefined : checker.getSymbolAtLocation(file);
    if (file === undefined || module === undefined)
      throw new Error(`${entry}: ${path} is no module`);
    const first = file.statements[0];
    const moduleDoc = first === undefined ? [] : ts.getJSDocCommentsAndTags(first);
    const withModuleTag = moduleDoc
      .filter(ts.isJSDoc)
      .find((doc) => (doc.tags ?? []).some((tag) => tag.tagName.text === 'module'));
    add(examplesOf(`module ${entry}`, withModuleTag));
    for (const symbol of checker.getExportsOfModule(module)) {
      if (!names.has(symbol.name)) {
        names.set(symbol.name, { entry, typeOnly: isTypeOnly(checker, symbol) });
      }
      const target =
        symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      for (const declaration of target.declarations ?? []) {
        const source = declaration.getSourceFile();
        if (source.isDeclarationFile || program.isSourceFileFromExternalLibrary(source)) continue;
        add(examplesOf(target.name, docComment(declaration)));
        for (const [member, node] of membersOf(declaration)) {
          add(examplesOf(`${target.name}.${member}`, docComment(node)));
        }
      }
    }
  }
  return { examples: [...examples.values()], names };
}

/** The names a top-level statement of an example declares. */
function declaredNames(statement: ts.Statement): string[] {
  const bound = (name: ts.BindingName): string[] =>
    ts.isIdentifier(name)
      ? [name.text]
      : name.elements.flatMap((element) =>
          ts.isOmittedExpression(element) ? [] : bound(element.name),
        );
  if (ts.isVariableStatement(statement)) {
    return statement.declarationList.declarations.flatMap((declaration) => bound(declaration.name));
  }
  const name = (statement as { name?: ts.Node }).name;
  return name !== undefined && ts.isIdentifier(name) ? [name.text] : [];
}

/**
 * An example as a module of its own: if it imports nothing, preceded by the import of each
 * public name it mentions and does not declare (`header` lines); `export {}` after it.
 */
export function exampleModule(
  example: Example,
  names: ReadonlyMap<string, PublicName>,
): { code: string; header: number } {
  const parsed = ts.createSourceFile('example.ts', example.code, ts.ScriptTarget.Latest, true);
  const imports = new Map<string, string[]>();
  if (!parsed.statements.some(ts.isImportDeclaration)) {
    const declared = new Set(parsed.statements.flatMap(declaredNames));
    const mentioned = new Set<string>();
    const visit = (node: ts.Node) => {
      if (ts.isIdentifier(node)) mentioned.add(node.text);
      ts.forEachChild(node, visit);
    };
    visit(parsed);
    for (const name of [...mentioned].sort()) {
      const found = names.get(name);
      if (found === undefined || declared.has(name)) continue;
      const list = imports.get(found.entry) ?? [];
      imports.set(found.entry, [...list, found.typeOnly ? `type ${name}` : name]);
    }
  }
  const header = [...imports].map(
    ([entry, list]) => `import { ${list.join(', ')} } from '${entry}';`,
  );
  return { code: [...header, example.code, 'export {};', ''].join('\n'), header: header.length };
}

/**
 * Compiles every `@example` of the declarations the entry points export (default: package.json's
 * `exports`) in one Program, with the {@link PRELUDE}, and returns them and one line per error:
 * `src/file.ts:LINE: Name: @example does not compile: message`.
 */
export function exampleProblems(sources: ReadonlyMap<string, string> = entryPoints()): {
  examples: Example[];
  problems: string[];
} {
  // Unused names are allowed, as in rustdoc's doctests: an example shows a call, and need not
  // read what it returns.
  const options = {
    ...snippetOptions(new Map([...entryPoints(), ...sources])),
    noUnusedLocals: false,
    noUnusedParameters: false,
  };
  const entries = ts.createProgram(
    [...sources.values()].map((path) => resolve(ROOT, path)),
    options,
  );
  const { examples, names } = publicExamples(entries, sources);
  const modules = new Map(
    examples.map((example, index) => [
      `example-${index}.ts`,
      { example, ...exampleModule(example, names) },
    ]),
  );
  const problems = compileSnippets(
    [
      { name: 'prelude.ts', code: PRELUDE },
      ...[...modules].map(([name, { code }]) => ({ name, code })),
    ],
    options,
    entries,
  );
  const lines: string[] = [];
  for (const problem of problems) {
    const found = modules.get(problem.name);
    if (found === undefined) {
      lines.push(`scripts/check-doc-examples.ts: ${problem.name || 'program'}: ${problem.message}`);
      continue;
    }
    const { example, header } = found;
    const line = example.line + Math.max(0, problem.line - header);
    lines.push(
      `${example.file}:${line}: ${example.name}: @example does not compile: ${problem.message}`,
    );
  }
  return { examples, problems: lines };
}

function main(): number {
  const gaps = sourceFiles(join(ROOT, 'src')).flatMap((path) =>
    gapsOf(path, readFileSync(path, 'utf8')),
  );
  for (const gap of gaps) console.log(`${gap.file}:${gap.line}: ${gap.what}: ${gap.problem}`);
  if (gaps.length === 0) {
    console.log('check:docs: every public export of src/ has a doc comment with an @example');
  } else {
    const files = new Set(gaps.map((gap) => gap.file)).size;
    console.log(`check:docs: ${gaps.length} gaps in ${files} files`);
  }
  const started = performance.now();
  const { examples, problems } = exampleProblems();
  const took = Math.round(performance.now() - started);
  for (const problem of problems) console.log(problem);
  if (problems.length === 0) {
    console.log(
      `check:docs: the ${examples.length} @examples of the public API compile (${took} ms)`,
    );
  } else {
    console.log(
      `check:docs: ${problems.length} errors in ${examples.length} @examples (${took} ms)`,
    );
  }
  return gaps.length === 0 && problems.length === 0 ? 0 : 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = main();
