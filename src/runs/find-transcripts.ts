/**
 * Which transcripts a command looks at: the files named, each with its children's folder
 * (`X.jsonl` → `X.agents/`), and every `*.jsonl` below a folder named. The library never scans
 * folders; this is the application's half of that split.
 *
 * @module
 */
import { type Dirent, promises as fs, lstatSync, readdirSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { childrenFolder } from '../subagents/child-layout.ts';
import { UserError } from './user-error.ts';

/**
 * The absolute paths of the transcripts at and below `paths` (resolved against `cwd`), sorted
 * and without duplicates. A path that does not exist is the user's mistake: a {@link UserError}
 * naming it. A folder that cannot be read below the named one is skipped, not fatal, and
 * added to `notRead` with the reason, so that the command can say what it could not look at. Folders
 * whose name starts with `.` and `node_modules` are not entered.
 *
 * Each path the user names is resolved once, here, to its real path (its symbolic links
 * followed): the user may point at a run through a link. Below it nothing is followed: a
 * symbolic link inside a run tree — a transcript, a folder, an `X.agents` — is never entered
 * or listed, so nothing in the tree can lead a command out of it.
 *
 * @example
 * await findTranscripts(['runs/'], process.cwd()); // ['/…/runs/a.jsonl', '/…/runs/a.agents/x.jsonl']
 */
export async function findTranscripts(
  paths: string[],
  cwd: string,
  notRead: NotRead[] = [],
  listing?: FolderListing,
  /** Called after each folder is listed, with the transcripts found so far. */
  progress?: (found: ReadonlySet<string>) => void,
): Promise<string[]> {
  const found = new Set<string>();
  for (const given of paths) {
    let path: string;
    let kind: 'file' | 'folder' | 'other';
    try {
      path = await fs.realpath(resolve(cwd, given));
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
      if (isRealFolder(childrenFolder(path), notRead)) {
        walk(childrenFolder(path), found, notRead, listing, progress);
      }
    } else {
      walk(path, found, notRead, listing, progress);
    }
  }
  return [...found].sort();
}

/**
 * Reads folders synchronously: a walk over thousands of folders is thousands of small calls,
 * and a thread-pool round trip costs more than listing a cached folder.
 */
function walk(
  folder: string,
  found: Set<string>,
  notRead: NotRead[],
  listing: FolderListing | undefined,
  progress?: (found: ReadonlySet<string>) => void,
): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(folder, { withFileTypes: true });
  } catch (error) {
    // Gone since it was listed: nothing to miss. Anything else hides runs: say so.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR')
      notRead.push({ path: folder, reason: code ?? String(error) });
    return;
  }
  // `folder` is absolute and normalised, and a name holds no separator: no join needed (it
  // would normalise every path again; 20,000 of them in a busy folder).
  const prefix = folder.endsWith(sep) ? folder : `${folder}${sep}`;
  listing?.folders.add(folder);
  for (const entry of entries) {
    const path = `${prefix}${entry.name}`;
    if (entry.name.endsWith('.claim')) listing?.claims.add(path);
    if (entry.isDirectory()) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      walk(path, found, notRead, listing, progress);
    } else if (entry.isFile() && entry.name.endsWith('.jsonl')) {
      found.add(path);
    }
  }
  progress?.(found);
}

/**
 * What a walk saw besides transcripts, for a command that probes tree claims (`status`): the
 * folders it listed, and every entry named `*.claim` in them, whatever its kind. A claim file
 * of a listed folder that is not among them was not there when the folder was listed.
 *
 * @example
 * const listing: FolderListing = { folders: new Set(), claims: new Set() };
 * await findTranscripts(['runs'], cwd, [], listing);
 */
export interface FolderListing {
  folders: Set<string>;
  claims: Set<string>;
}

/**
 * Whether `path` is a folder itself, not a symbolic link to one. Absent is no; a folder that
 * cannot be looked at (EACCES, EIO) is no too, and noted in `notRead`: its runs are not shown.
 */
function isRealFolder(path: string, notRead: NotRead[]): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR')
      notRead.push({ path, reason: code ?? String(error) });
    return false;
  }
}

/**
 * A folder below the paths given that could not be read, and why (an error code): runs in it
 * are missing from what the command shows.
 *
 * @example
 * const notRead: NotRead[] = [];
 * await findTranscripts(['runs'], cwd, notRead); // notRead: [{ path: '/…/runs/locked', reason: 'EACCES' }]
 */
export interface NotRead {
  path: string;
  reason: string;
}
