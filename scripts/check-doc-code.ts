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
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileSnippets, ROOT } from './compile-snippets.ts';

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
  // Every block is a module: a block without imports must not share names with another.
  const named = new Map(blocks.map((block, index) => [`block-${index}.ts`, block]));
  const problems = compileSnippets(
    [...named].map(([name, block]) => ({ name, code: `${block.code}\nexport {};\n` })),
  );
  const lines = problems.map(({ name, line, message }) => {
    const block = named.get(name);
    return block === undefined ? message : `${block.file}:${block.line + line}: ${message}`;
  });
  for (const line of lines) console.log(line);
  if (lines.length > 0) {
    console.log(`check:docs: ${lines.length} errors in the documentation's TypeScript`);
    return 1;
  }
  console.log(`check:docs: ${blocks.length} TypeScript blocks of README.md and docs/ compile`);
  return 0;
}

process.exitCode = main();
