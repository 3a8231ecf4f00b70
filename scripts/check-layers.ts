/*
 * The folders of src/ are layers, and imports point down only (docs/architecture.md):
 *
 *   transcript ← store, loop, testing ← subagents ← revival, demo ← fleet, repair ← render ← runs
 *   ← cli (src/ui, the web view, comes at rank 7: above runs, below cli)
 *
 * A file may import its own folder and folders of a lower rank; never a higher one, nor a
 * sibling of the same rank (store, loop and testing know nothing of each other). The transcript and store
 * layers import no model library: a transcript must read after the AI SDK's next major version.
 * `testing` (what tests are built on) sits on the transcript layer, and no layer imports it.
 * Static and dynamic imports both count. Run by `npm run check`; test/repository/layers.test.ts
 * shows it catches what it forbids.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SRC = fileURLToPath(new URL('../src/', import.meta.url));

export const RANK: Record<string, number> = {
  transcript: 0,
  store: 1,
  loop: 1,
  subagents: 2,
  revival: 3,
  demo: 3,
  fleet: 4,
  testing: 1,
  repair: 4,
  render: 5,
  runs: 6,
  cli: 8,
};

const MODEL_LIBRARIES = /^(ai|ai\/.*|@ai-sdk\/.*)$/;

/** The layer violations of one file's source, as `file: imports target` lines. */
export function violations(file: string, source: string): string[] {
  const folder = file.split('/')[0] as string;
  const found: string[] = [];
  const specifiers = [...source.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map(
    (match) => match[1] as string,
  );
  for (const specifier of specifiers) {
    if (specifier.startsWith('../')) {
      const target = specifier.slice(3).split('/')[0] as string;
      if (target === folder || !(target in RANK)) continue;
      if (target === 'testing') {
        found.push(`${file}: imports ${specifier} (testing is for tests; no layer imports it)`);
        continue;
      }
      const mine = RANK[folder];
      const theirs = RANK[target];
      if (mine === undefined || theirs === undefined || theirs >= mine) {
        found.push(`${file}: imports ${specifier} (${folder} may not import ${target})`);
      }
    } else if ((folder === 'transcript' || folder === 'store') && MODEL_LIBRARIES.test(specifier)) {
      found.push(`${file}: imports ${specifier} (the ${folder} layer imports no model library)`);
    }
  }
  return found;
}

export async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(SRC, join(entry.parentPath, entry.name)));
}

/** Every layer violation in src/, as lines; empty when the layers hold. */
export async function layerViolations(): Promise<string[]> {
  const files = (await sourceFiles(SRC)).filter((file) => file.includes('/'));
  const problems: string[] = [];
  for (const file of files) {
    const folder = file.split('/')[0] as string;
    // src/types holds declarations for untyped packages: no layer.
    if (folder !== 'types' && RANK[folder] === undefined) {
      problems.push(`${file}: the folder ${folder} has no layer rank (scripts/check-layers.ts)`);
    }
    problems.push(...violations(file, await readFile(join(SRC, file), 'utf8')));
  }
  return problems;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const problems = await layerViolations();
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) {
    console.error(`check:layers: ${problems.length} import(s) against the layers`);
    process.exit(1);
  }
  console.log('check:layers: every import in src/ points down the layers');
}
