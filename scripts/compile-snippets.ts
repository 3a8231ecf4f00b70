/**
 * What the documentation checks share: the package's entry points mapped onto src/, the
 * compiler options snippets are checked with, and one TypeScript Program that type-checks many
 * snippets at once, in memory. Used by scripts/check-doc-code.ts (the ```ts blocks of README.md
 * and docs/) and scripts/check-doc-examples.ts (the `@example` blocks of the public API).
 *
 * @example
 * import { compileSnippets } from './compile-snippets.ts';
 * const problems = compileSnippets([{ name: 'a.ts', code: "import { Loop } from 'llm-agent-revival';\n" }]);
 * // [{ name: 'a.ts', line: 0, message: "'Loop' is declared but its value is never read." }]
 */
import { readFileSync } from 'node:fs';
import { join, normalize, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The repository's root folder (ends with a slash). */
export const ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * The package's import names, as package.json's `exports` maps them (the `types` of each
 * subpath, dist/ mapped to src/), in the order package.json lists them:
 * `llm-agent-revival` → `src/index.ts`, `llm-agent-revival/loop` → `src/loop/index.ts`, ….
 */
export function entryPoints(root = ROOT): Map<string, string> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, { types?: string } | string>;
  };
  const entries = new Map<string, string>();
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string' || target.types === undefined) continue;
    const name = subpath === '.' ? pkg.name : `${pkg.name}/${subpath.replace(/^\.\//, '')}`;
    const source = relative('dist', normalize(target.types)).replace(/\.d\.ts$/, '.ts');
    entries.set(name, join('src', source));
  }
  return entries;
}

/**
 * The project's strict options (unused names are errors), with the package's import names
 * resolving to src/ and everything else (the AI SDK, zod) to node_modules, as for a user.
 */
export function snippetOptions(entries: ReadonlyMap<string, string>, root = ROOT) {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2023,
    lib: ['lib.es2023.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    noUnusedLocals: true,
    noUnusedParameters: true,
    allowImportingTsExtensions: true,
    verbatimModuleSyntax: true,
    skipLibCheck: true,
    noEmit: true,
    paths: Object.fromEntries([...entries].map(([name, path]) => [name, [resolve(root, path)]])),
  };
  return options;
}

/** One snippet: a file name (unique, ending in .ts) and its code. */
export interface Snippet {
  name: string;
  code: string;
}

/** A compiler error in a snippet: its 0-based line in the snippet, and the message's first line. */
export interface SnippetProblem {
  name: string;
  line: number;
  message: string;
}

/** The (in-memory) folder of the snippets: in the repository, so imports resolve as a user's. */
const SNIPPETS = join(ROOT, '.snippets');

/**
 * Type-checks snippets in one Program, in memory (nothing is written). Each snippet is a file of
 * its own in the folder where package.json's `"type": "module"` holds, so top-level `await` is
 * allowed in one that is a module. Only the snippets' own errors are reported (and the
 * Program's global ones, as `name: ''`): the source they import is `tsc`'s business.
 * `oldProgram` lets the Program reuse the source files of an earlier one (parsed once).
 */
export function compileSnippets(
  snippets: readonly Snippet[],
  options: ts.CompilerOptions = snippetOptions(entryPoints()),
  oldProgram?: ts.Program,
): SnippetProblem[] {
  const byPath = new Map(snippets.map((snippet) => [join(SNIPPETS, snippet.name), snippet]));
  const host = ts.createCompilerHost(options, true);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (path, language, ...rest) => {
    const snippet = byPath.get(path);
    if (snippet !== undefined) return ts.createSourceFile(path, snippet.code, language, true);
    return oldProgram?.getSourceFile(path) ?? getSourceFile.call(host, path, language, ...rest);
  };
  host.fileExists = (path) => byPath.has(path) || fileExists.call(host, path);
  host.readFile = (path) => byPath.get(path)?.code ?? readFile.call(host, path);
  const rootNames = [...byPath.keys()];
  const program = ts.createProgram(
    oldProgram === undefined
      ? { rootNames, options, host }
      : { rootNames, options, host, oldProgram },
  );
  const problems: SnippetProblem[] = [];
  const report = (diagnostic: ts.Diagnostic, name: string) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n').split('\n')[0];
    const line = diagnostic.file?.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line ?? 0;
    problems.push({ name, line, message: message ?? '' });
  };
  for (const diagnostic of [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
  ]) {
    report(diagnostic, '');
  }
  for (const [path, snippet] of byPath) {
    const file = program.getSourceFile(path);
    if (file === undefined) continue;
    for (const diagnostic of [
      ...program.getSyntacticDiagnostics(file),
      ...program.getSemanticDiagnostics(file),
    ]) {
      report(diagnostic, snippet.name);
    }
  }
  return problems;
}
