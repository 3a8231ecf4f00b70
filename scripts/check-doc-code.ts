/**
 * Type-checks the TypeScript in the documentation: every ```ts block of README.md and
 * docs/*.md is compiled, as a module of its own, against the package's source — the imports
 * `llm-agent-revival` and `llm-agent-revival/<subpath>` resolve to src/, everything else (the
 * AI SDK, zod) to node_modules — with the project's strict compiler options, unused names
 * included. A block that is deliberately a fragment (it uses names it does not declare) is
 * fenced ```ts fragment and skipped. Prints each error as `file:line: message` and exits 1 if
 * there is any (0 if none).
 *
 * @example
 * // npm run check:docs   (or: node_modules/.bin/node scripts/check-doc-code.ts)
 * // docs/tools.md:42: Cannot find name 'readFile'.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The package's import names, as package.json's `exports` maps them, onto the source. */
const ENTRY_POINTS: Record<string, string> = {
  'llm-agent-revival': 'src/index.ts',
  'llm-agent-revival/transcript': 'src/transcript/index.ts',
  'llm-agent-revival/session': 'src/transcript/index.ts',
  'llm-agent-revival/loop': 'src/loop/index.ts',
  'llm-agent-revival/revival': 'src/revival/index.ts',
  'llm-agent-revival/subagents': 'src/subagents/index.ts',
  'llm-agent-revival/store': 'src/store/index.ts',
  'llm-agent-revival/testing': 'src/testing/index.ts',
};

/** One ```ts block: where it is, and its code. */
interface Block {
  file: string;
  /** The line of the markdown file the code starts on (1-based). */
  line: number;
  code: string;
}

/** The ```ts blocks of one markdown file, fragments left out. */
function blocksOf(file: string, text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    const fence = /^```(ts|typescript)(\s+.*)?$/.exec(lines[index] ?? '');
    if (fence === null) continue;
    const end = lines.findIndex((line, at) => at > index && line.startsWith('```'));
    if (end === -1) break;
    const info = (fence[2] ?? '').trim().split(/\s+/);
    if (!info.includes('fragment')) {
      blocks.push({ file, line: index + 2, code: lines.slice(index + 1, end).join('\n') });
    }
    index = end;
  }
  return blocks;
}

function markdownFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => join('docs', name));
  return ['README.md', ...docs];
}

function main(): number {
  const blocks = markdownFiles().flatMap((file) =>
    blocksOf(file, readFileSync(join(ROOT, file), 'utf8')),
  );
  // Inside the repository (tmp/ is ignored by git), so that node_modules resolves as a user's.
  const folder = join(ROOT, 'tmp', `doc-code-${process.pid}`);
  mkdirSync(folder, { recursive: true });
  try {
    const sources = new Map<string, Block>();
    blocks.forEach((block, index) => {
      const path = join(folder, `block-${index}.ts`);
      // Every block is a module: a block without imports must not share names with another.
      writeFileSync(path, `${block.code}\nexport {};\n`);
      sources.set(path, block);
    });
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
      paths: Object.fromEntries(
        Object.entries(ENTRY_POINTS).map(([name, path]) => [name, [join(ROOT, path)]]),
      ),
    };
    const program = ts.createProgram([...sources.keys()], options);
    const problems: string[] = [];
    for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n').split('\n')[0];
      const source =
        diagnostic.file === undefined ? undefined : sources.get(diagnostic.file.fileName);
      if (diagnostic.file === undefined || source === undefined) {
        const where =
          diagnostic.file === undefined ? '' : `${relative(ROOT, diagnostic.file.fileName)}: `;
        problems.push(`${where}${message}`);
        continue;
      }
      const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      problems.push(`${source.file}:${source.line + line}: ${message}`);
    }
    for (const problem of problems) console.log(problem);
    if (problems.length > 0) {
      console.log(`check:docs: ${problems.length} errors in the documentation's TypeScript`);
      return 1;
    }
    console.log(`check:docs: ${blocks.length} TypeScript blocks of README.md and docs/ compile`);
    return 0;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

process.exitCode = main();
