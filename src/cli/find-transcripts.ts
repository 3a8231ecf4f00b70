/**
 * Which transcripts a command looks at: the files named, each with its children's folder
 * (`X.jsonl` → `X.agents/`), and every `*.jsonl` below a folder named. The library never scans
 * folders; this is the application's half of that split.
 *
 * @module
 */
import { type Dirent, promises as fs, readdirSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { childrenFolder } from '../subagents/child-layout.ts';
import { layoutAncestors } from '../revival/tree-root.ts';
import { claimPathOf } from '../transcript/tree-claim.ts';
import { lockPathOf } from '../transcript/writer-lock.ts';
import { UserError } from './user-error.ts';

/**
 * The absolute paths of the transcripts at and below `paths` (resolved against `cwd`), sorted
 * and without duplicates. A path that does not exist is the user's mistake: a {@link UserError}
 * naming it. A folder that cannot be read below the named one is skipped, not fatal. Folders
 * whose name starts with `.` and `node_modules` are not entered.
 *
 * When `lockFiles` is given, the writer lock files (`X.jsonl.lock`) and tree claim files
 * (`X.jsonl.claim`) that exist beside the transcripts found are added to it — seen for free in the same folder listings — so that a
 * transcript with no lock file is known not to be running without asking the file system again.
 *
 * @example
 * await findTranscripts(['runs/'], process.cwd()); // ['/…/runs/a.jsonl', '/…/runs/a.agents/x.jsonl']
 */
export async function findTranscripts(
  paths: string[],
  cwd: string,
  lockFiles?: Set<string>,
): Promise<string[]> {
  const found = new Set<string>();
  for (const given of paths) {
    const path = resolve(cwd, given);
    let kind: 'file' | 'folder' | 'other';
    try {
      const stats = await fs.stat(path);
      kind = stats.isFile() ? 'file' : stats.isDirectory() ? 'folder' : 'other';
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new UserError(
        `${given}: ${code === 'ENOENT' ? 'no such file or folder' : `cannot read (${code})`}`,
      );
    }
    if (kind === 'other') throw new UserError(`${given}: not a file or a folder`);
    if (kind === 'file') {
      found.add(path);
      if (lockFiles !== undefined && (await exists(lockPathOf(path)))) {
        lockFiles.add(lockPathOf(path));
      }
      // A tree's claim lies beside its root: the file's own, or an ancestor's by layout.
      for (const root of lockFiles === undefined ? [] : layoutAncestors(path)) {
        if (await exists(claimPathOf(root))) lockFiles?.add(claimPathOf(root));
      }
      walk(childrenFolder(path), found, lockFiles);
    } else {
      walk(path, found, lockFiles);
    }
  }
  return [...found].sort();
}

/**
 * Reads folders synchronously: a walk over thousands of folders is thousands of small calls,
 * and a thread-pool round trip costs more than listing a cached folder.
 */
function walk(folder: string, found: Set<string>, lockFiles: Set<string> | undefined): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(folder, { withFileTypes: true });
  } catch {
    return;
  }
  // `folder` is absolute and normalised, and a name holds no separator: no join needed (it
  // would normalise every path again; 20,000 of them in a busy folder).
  const prefix = folder.endsWith(sep) ? folder : `${folder}${sep}`;
  for (const entry of entries) {
    const path = `${prefix}${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      walk(path, found, lockFiles);
    } else if (entry.isFile() && entry.name.endsWith('.jsonl')) {
      found.add(path);
    } else if (
      lockFiles !== undefined &&
      (entry.name.endsWith('.jsonl.lock') || entry.name.endsWith('.jsonl.claim'))
    ) {
      lockFiles.add(path);
    }
  }
}

function exists(path: string): Promise<boolean> {
  return fs.stat(path).then(
    () => true,
    () => false,
  );
}
