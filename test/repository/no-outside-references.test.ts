import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

/*
 * Code and docs cite only what is in the repository: docs/ is the users' source of truth, and a
 * design file kept beside the repository (a spec, research notes) is not shipped with it.
 */

const ROOT = new URL('../..', import.meta.url).pathname;
const FOLDERS = ['src', 'test', 'crashtest', 'bench', 'attack', 'scripts', 'docs'];
const FORBIDDEN = [/\bSPEC §/, /\.\.\/shared\//];

/** Our files below `folder`: installed packages (test/clients/node_modules) are not ours. */
function filesBelow(folder: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules') files.push(...filesBelow(path));
    else if (entry.isFile() && /\.(ts|mjs|js|md)$/.test(path)) files.push(path);
  }
  return files;
}

/** Every `file:line` that cites something outside the repository. */
function outsideReferences(files: readonly string[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, index) => {
        if (FORBIDDEN.some((pattern) => pattern.test(line))) found.push(`${file}:${index + 1}`);
      });
  }
  return found;
}

test('no file cites a spec or notes kept outside the repository', () => {
  const files = [
    join(ROOT, 'README.md'),
    ...FOLDERS.flatMap((folder) => filesBelow(join(ROOT, folder))),
  ];
  assert.ok(files.length > 100, `only ${files.length} files read`);
  assert.deepEqual(outsideReferences(files), []);
});

test('the check finds such citations (it can fail)', () => {
  const folder = mkdtempSync(join(tmpdir(), 'outside-references-'));
  try {
    const file = join(folder, 'cites.ts');
    writeFileSync(
      file,
      ['// fine', `// as ${'SPEC'} §3 says`, `// see ../${'shared'}/notes/x.md`].join('\n'),
    );
    assert.deepEqual(outsideReferences([file]), [`${file}:2`, `${file}:3`]);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
