/**
 * The status index: what `status` read of each transcript of a large folder, kept between runs
 * so that a transcript that has not changed is not read again. It lives outside the folder, in
 * the user's cache (`$XDG_CACHE_HOME/llm-agent/status/`, else `~/.cache/llm-agent/status/`),
 * one file per folder; nothing is ever written beside the transcripts.
 *
 * Exact, not approximate: an entry is the tail read of one file (what `draftInspection` is
 * given, itself made from checksum-verified bytes), kept under the file's device, inode, size
 * and modification and change times, and used only while all five are the same — any write, a
 * truncation, a rename over the path or a new file there changes the change time at the least,
 * which only the kernel sets. A file that had changed less than two seconds before it was read
 * is not kept (its next change could fall in the same tick of its clock). What is decided anew
 * every time is everything that can change without the file: the writer's lock and the tree's
 * claim (the kernel's lock table), the revival cap. What the index cannot see is a byte that
 * changes without any of that — a disk's own decay: `status --verify`, which never uses it, and
 * `revive`, which reads the whole run, still see that.
 *
 * The index file is checked before it is believed: its checksum (CRC-32 of what follows its
 * first line), its format, and the code that made its entries — the size and times of this
 * installation's own modules that read transcripts, so that entries made by another version,
 * or another build of this one, are never used. Anything amiss: an empty index, and the file is
 * written anew. Reading, checking and writing never throw and never block on anything but the
 * file itself; a cache that cannot be written is simply not kept.
 *
 * @module
 */
import {
  closeSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
  constants,
} from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
import type { TailRead } from '../transcript/read-tail-state.ts';
import type { KnownReads, ReadOfFile } from './bulk-inspect.ts';

/** Bump when what an entry holds changes shape. */
const FORMAT = 1;
/** An index file larger than this is not read (it is not one this code wrote for a folder). */
const MAX_INDEX_BYTES = 256 * 1024 * 1024;

/**
 * Fewer transcripts than this are read every time, and no index is kept: reading them costs
 * less than reading, checking and writing an index.
 *
 * @example
 * if (paths.length >= MIN_INDEXED_TRANSCRIPTS) index = StatusIndex.open(paths, process.env);
 */
export const MIN_INDEXED_TRANSCRIPTS = 500;

/**
 * The status index of one folder: the kept reads, looked up by path and key, and the reads of
 * this run, written back by {@link StatusIndex.save}.
 *
 * @example
 * const index = StatusIndex.open(paths, process.env);
 * const inspect = bulkInspector(3, readLockTable(), index);
 * index?.save();
 */
export class StatusIndex implements KnownReads {
  readonly path: string;
  readonly #code: string;
  readonly #kept: Map<string, ReadOfFile>;
  readonly #now = new Map<string, ReadOfFile>();
  #changed = false;

  private constructor(path: string, code: string, kept: Map<string, ReadOfFile>) {
    this.path = path;
    this.#code = code;
    this.#kept = kept;
  }

  /**
   * The index for the transcripts `paths` (absolute), read from the user's cache; null when it
   * is turned off (`LLM_AGENT_STATUS_INDEX=off`) or there is no cache folder to keep it in.
   *
   * @example
   * const index = StatusIndex.open(['/runs/a.jsonl'], process.env);
   */
  static open(paths: readonly string[], env: NodeJS.ProcessEnv): StatusIndex | null {
    try {
      if (env.LLM_AGENT_STATUS_INDEX === 'off' || paths.length === 0) return null;
      const folder = cacheFolder(env);
      if (folder === null) return null;
      const path = join(folder, `${digest(commonFolder(paths))}.index`);
      const code = codeFingerprint();
      return new StatusIndex(path, code, readIndex(path, code));
    } catch {
      return null;
    }
  }

  /** How many reads were kept. */
  get size(): number {
    return this.#kept.size;
  }

  /** The read kept for `path` under `key`, when there is one; it is kept for the next run. */
  lookup(path: string, key: string): ReadOfFile | undefined {
    const kept = this.#kept.get(path);
    if (kept === undefined || kept.key !== key) return undefined;
    this.#now.set(path, kept);
    return kept;
  }

  /** Keep what this run read of `path`. */
  remember(path: string, read: ReadOfFile): void {
    this.#now.set(path, read);
    this.#changed = true;
  }

  /**
   * Write the index back when this run read anything anew, or no longer found a file it held:
   * its entries are this run's. Never throws; written under a new name and renamed into place,
   * so that a reader never sees half of it. True when it was written.
   */
  save(): boolean {
    if (!this.#changed && this.#now.size === this.#kept.size) return false;
    try {
      writeIndex(this.path, this.#code, this.#now);
      return true;
    } catch {
      // No cache kept: the next run reads the transcripts.
      return false;
    }
  }
}

/**
 * Whether a status index may answer for transcripts among which are `some`: it is not turned
 * off, and an index file is kept for the deepest folder holding `some` or a folder above it
 * (the folder of the whole list is one of those). Looks, never reads; true when unsure. For
 * `status`, deciding during its walk whether reading is likely (then worker threads are
 * started early).
 *
 * @example
 * if (!indexMayAnswer(foundSoFar, process.env)) early = EarlyHelpers.start();
 */
export function indexMayAnswer(some: Iterable<string>, env: NodeJS.ProcessEnv): boolean {
  try {
    if (env.LLM_AGENT_STATUS_INDEX === 'off') return false;
    const paths = [...some];
    if (paths.length === 0) return true;
    const folder = cacheFolder(env);
    if (folder === null) return false;
    for (let at = commonFolder(paths); ; at = dirname(at)) {
      const file = join(folder, `${digest(at)}.index`);
      if (statSync(file, { throwIfNoEntry: false })?.isFile() === true) return true;
      if (at === dirname(at)) return false;
    }
  } catch {
    return true;
  }
}

/** Where indexes are kept, created (mode 0700) when missing; null when there is no such place. */
function cacheFolder(env: NodeJS.ProcessEnv): string | null {
  // Only an absolute XDG_CACHE_HOME counts (the specification's own rule).
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg?.startsWith(sep) === true ? xdg : join(homedir(), '.cache');
  if (base === '' || base === join(sep, '.cache')) return null;
  const folder = join(base, 'llm-agent', 'status');
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  // Another user must not be able to plant an index that status would believe.
  return privateToUs(lstatSync(folder)) ? folder : null;
}

/**
 * A file or folder only this user can change: owned by us, not writable by group or others,
 * and not a symbolic link (lstat).
 */
function privateToUs(stats: { uid: number; mode: number; isSymbolicLink(): boolean }): boolean {
  const uid = process.getuid?.();
  return (
    !stats.isSymbolicLink() &&
    (uid === undefined || stats.uid === uid) &&
    (stats.mode & 0o022) === 0
  );
}

/** The deepest folder that holds every path. */
function commonFolder(paths: readonly string[]): string {
  let common = dirname(paths[0] as string);
  for (const path of paths) {
    while (common !== dirname(common) && !path.startsWith(`${common}${sep}`)) {
      common = dirname(common);
    }
  }
  return common;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

/**
 * Which code made the entries: the format, and the name, size and modification time of every
 * module of this installation's transcript layer (which reads and folds the bytes) and of the
 * two that keep what it read. A rebuild or another version changes it.
 */
function codeFingerprint(): string {
  const hash = createHash('sha256').update(`format ${FORMAT}\n`);
  const here = fileURLToPath(import.meta.url);
  const transcript = join(dirname(here), '..', 'transcript');
  const files = readdirSync(transcript)
    .sort()
    .map((name) => join(transcript, name));
  files.push(here, join(dirname(here), `bulk-inspect${here.slice(here.lastIndexOf('.'))}`));
  for (const file of files) {
    const stats = statSync(file, { bigint: true });
    hash.update(`${file}\0${stats.size}\0${stats.mtimeNs}\0${stats.ino}\n`);
  }
  return hash.digest('hex');
}

interface IndexBody {
  format: number;
  code: string;
  /** [path, key, read, full] */
  entries: [string, string, TailRead, TailRead | null][];
}

/** The kept reads, when the file is there, whole, and made by this code; else none. */
function readIndex(path: string, code: string): Map<string, ReadOfFile> {
  const kept = new Map<string, ReadOfFile>();
  let text: string;
  try {
    const fd = openSync(
      path,
      constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0),
    );
    try {
      const stats = fstatSync(fd);
      if (!stats.isFile() || stats.size > MAX_INDEX_BYTES || !privateToUs(stats)) return kept;
      const bytes = Buffer.allocUnsafe(stats.size);
      let filled = 0;
      while (filled < bytes.length) {
        const read = readSync(fd, bytes, filled, bytes.length - filled, filled);
        if (read === 0) break;
        filled += read;
      }
      const newline = bytes.indexOf(0x0a);
      if (newline !== 8 || filled !== bytes.length) return kept;
      const body = bytes.subarray(newline + 1);
      if (bytes.toString('latin1', 0, 8) !== crc32(body).toString(16).padStart(8, '0')) {
        return kept;
      }
      text = body.toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return kept;
  }
  try {
    const parsed = JSON.parse(text) as IndexBody;
    if (parsed.format !== FORMAT || parsed.code !== code || !Array.isArray(parsed.entries)) {
      return kept;
    }
    for (const entry of parsed.entries) {
      const [file, key, read, full] = entry;
      if (typeof file !== 'string' || typeof key !== 'string' || typeof read?.ok !== 'boolean') {
        return new Map();
      }
      kept.set(file, { key, read, full: full ?? null });
    }
  } catch {
    return new Map();
  }
  return kept;
}

function writeIndex(path: string, code: string, entries: Map<string, ReadOfFile>): void {
  const body: IndexBody = {
    format: FORMAT,
    code,
    entries: [...entries].map(([file, { key, read, full }]) => [file, key, read, full]),
  };
  const bytes = Buffer.from(JSON.stringify(body));
  const header = Buffer.from(`${crc32(bytes).toString(16).padStart(8, '0')}\n`);
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const flags =
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);
  const fd = openSync(temporary, flags, 0o600);
  try {
    try {
      for (const part of [header, bytes]) {
        for (let written = 0; written < part.length; ) {
          written += writeSync(fd, part, written, part.length - written);
        }
      }
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (error) {
    try {
      unlinkSync(temporary);
    } catch {
      // Gone already.
    }
    throw error;
  }
}
