import { dirname } from 'node:path';
import type { FileIdentity, FileSystem, OpenMode } from '../src/transcript/file-system.ts';
import { fileSystemError, normalise } from '../src/testing/memory-file-system.ts';

/*
 * The crash VFS of SQLite's test6.c, for the transcript layer's FileSystem: an in-memory file
 * system that keeps, per file, its durable content plus the ordered list of writes (and
 * truncations) made since its last fdatasync, and per folder which names are durable. After
 * every call that changes something it can hand a snapshot to a hook; a snapshot turns into
 * crash images by choosing a fate for each unsynced write: kept, dropped, torn at a byte, or
 * zero-filled (the size reached the disk, the data did not).
 */

/** One change to a file's bytes not yet made durable by a sync. */
export type PendingChange =
  | { kind: 'write'; offset: number; bytes: Buffer }
  | { kind: 'truncate'; length: number };

/** What a power cut does to one unsynced change. */
export type Fate =
  | { kind: 'kept' }
  | { kind: 'dropped' }
  | { kind: 'torn'; at: number }
  | { kind: 'zeroed' };

/** A file as a snapshot holds it: immutable. */
export interface FileState {
  readonly inode: number;
  readonly durable: Buffer;
  readonly pending: readonly PendingChange[];
}

/** The whole file system at one boundary. */
export interface Snapshot {
  /** 0-based count of boundaries before this one. */
  readonly index: number;
  /** What just happened: `write /runs/main.jsonl`, `sync …`, … */
  readonly label: string;
  readonly files: ReadonlyMap<string, FileState>;
  /** Names as the disk knows them: name → inode. */
  readonly durableNames: ReadonlyMap<string, number>;
  readonly folders: ReadonlyMap<string, boolean>;
}

/** How a crash image treats names whose folder was never synced. */
export type NameFate = 'durable-only' | 'all-current';

interface Inode {
  readonly id: number;
  current: Buffer;
  durable: Buffer;
  pending: PendingChange[];
  lockedBy: number | null;
}

interface Handle {
  readonly path: string;
  readonly inode: Inode | 'folder';
  readonly readable: boolean;
  readonly writable: boolean;
  readonly append: boolean;
  position: number;
}

/** Counts of calls, by kind; `mutating` is every call that could change what is stored. */
export interface CallCounts {
  total: number;
  mutating: number;
}

/**
 * An in-memory FileSystem that models what a power cut can leave (see the file comment).
 *
 * @example
 * const fileSystem = new RecordingFileSystem();
 * fileSystem.onBoundary = (snapshot) => snapshots.push(snapshot);
 * await runScenario(fileSystem);
 * const image = RecordingFileSystem.fromImage(buildImage(snapshots[7], fates, 'durable-only'));
 */
export class RecordingFileSystem implements FileSystem {
  /** Called after every mutating call with the state it left; the snapshot is immutable. */
  onBoundary: ((snapshot: Snapshot) => void) | null = null;
  /**
   * When set, every call asks it first; it may throw (an injected I/O error), and for a write
   * it may return a smaller byte count (a short write: only that many bytes land).
   */
  beforeCall: ((operation: string, path: string, bytes?: number) => number | undefined) | null =
    null;
  readonly counts: CallCounts = { total: 0, mutating: 0 };
  readonly #folders = new Map<string, boolean>([['/', true]]);
  readonly #files = new Map<string, Inode>();
  readonly #durableNames = new Map<string, Inode>();
  readonly #handles = new Map<number, Handle>();
  #nextFd = 1000;
  #nextInode = 1;
  #boundaries = 0;

  /** A file system holding exactly `files` (all durable) in their folders. */
  static fromFiles(files: ReadonlyMap<string, Buffer>): RecordingFileSystem {
    const fileSystem = new RecordingFileSystem();
    for (const [path, bytes] of files) fileSystem.putFile(path, bytes);
    return fileSystem;
  }

  /** Put a durable file (and its folders) in place, as if it had been there all along. */
  putFile(path: string, bytes: Buffer): void {
    const name = normalise(path);
    for (let at = dirname(name); !this.#folders.has(at); at = dirname(at)) {
      this.#folders.set(at, true);
    }
    const inode = this.#newInode();
    inode.current = bytes;
    inode.durable = bytes;
    this.#files.set(name, inode);
    this.#durableNames.set(name, inode);
  }

  /** A file's current bytes, or undefined. */
  fileBytes(path: string): Buffer | undefined {
    return this.#files.get(normalise(path))?.current;
  }

  /** Every current file path, sorted. */
  listFiles(): string[] {
    return [...this.#files.keys()].sort();
  }

  /** The current state as a snapshot (also what a process's death leaves: all writes kept). */
  snapshot(label = 'now'): Snapshot {
    const files = new Map<string, FileState>();
    for (const [name, inode] of this.#files) {
      files.set(name, { inode: inode.id, durable: inode.durable, pending: [...inode.pending] });
    }
    const durableNames = new Map<string, number>();
    for (const [name, inode] of this.#durableNames) {
      durableNames.set(name, inode.id);
      if (!files.has(name)) {
        files.set(`\0inode:${inode.id}`, {
          inode: inode.id,
          durable: inode.durable,
          pending: [...inode.pending],
        });
      }
    }
    return { index: this.#boundaries, label, files, durableNames, folders: new Map(this.#folders) };
  }

  // ---- FileSystem ----

  async open(path: string, mode: OpenMode): Promise<number> {
    this.#enter('open', path, mode === 'create' || mode === 'lock');
    const name = normalise(path);
    // As the real `read` mode: a folder is refused at open, before any read (this model
    // holds no FIFOs or devices); an exclusive create finds the name taken.
    if (this.#folders.has(name)) {
      throw fileSystemError(mode === 'create' ? 'EEXIST' : 'EISDIR', 'open', path);
    }
    if (!this.#folders.has(dirname(name))) throw fileSystemError('ENOENT', 'open', path);
    let inode = this.#files.get(name);
    if (mode === 'create' && inode !== undefined) throw fileSystemError('EEXIST', 'open', path);
    let changed = false;
    if (inode === undefined) {
      if (mode !== 'create' && mode !== 'lock') throw fileSystemError('ENOENT', 'open', path);
      inode = this.#newInode();
      this.#files.set(name, inode);
      changed = true;
    }
    const fd = this.#newHandle({
      path: name,
      inode,
      readable: true,
      writable: mode !== 'read',
      append: mode === 'append' || mode === 'create',
      position: 0,
    });
    if (changed) this.#boundary(`open ${mode} ${name}`);
    return fd;
  }

  async write(fd: number, bytes: Uint8Array): Promise<number> {
    const handle = this.#handle(fd, 'write');
    const allowed = this.#enter('write', handle.path, true, bytes.length);
    const inode = this.#fileOf(handle, 'write');
    if (!handle.writable) throw fileSystemError('EBADF', 'write');
    const offset = handle.append ? inode.current.length : handle.position;
    const copy = Buffer.from(bytes.subarray(0, allowed ?? bytes.length));
    inode.current = applyWrite(inode.current, offset, copy);
    inode.pending.push({ kind: 'write', offset, bytes: copy });
    handle.position = offset + copy.length;
    this.#boundary(`write ${handle.path} +${copy.length}@${offset}`);
    return copy.length;
  }

  async read(fd: number, buffer: Uint8Array, position: number): Promise<number> {
    const handle = this.#handle(fd, 'read');
    this.#enter('read', handle.path, false);
    if (handle.inode === 'folder') throw fileSystemError('EISDIR', 'read');
    if (!handle.readable) throw fileSystemError('EBADF', 'read');
    const current = handle.inode.current;
    if (position >= current.length) return 0;
    const count = Math.min(buffer.length, current.length - position);
    buffer.set(current.subarray(position, position + count));
    return count;
  }

  async sync(fd: number): Promise<void> {
    const handle = this.#handle(fd, 'fdatasync');
    this.#enter('sync', handle.path, true);
    if (handle.inode === 'folder' || handle.inode.pending.length === 0) return;
    handle.inode.durable = handle.inode.current;
    handle.inode.pending = [];
    this.#boundary(`sync ${handle.path}`);
  }

  async truncate(fd: number, length: number): Promise<void> {
    const handle = this.#handle(fd, 'ftruncate');
    this.#enter('truncate', handle.path, true);
    const inode = this.#fileOf(handle, 'ftruncate');
    if (!handle.writable || length < 0) throw fileSystemError('EINVAL', 'ftruncate');
    if (length === inode.current.length) return;
    inode.current = resize(inode.current, length);
    inode.pending.push({ kind: 'truncate', length });
    this.#boundary(`truncate ${handle.path} to ${length}`);
  }

  async size(fd: number): Promise<number> {
    const handle = this.#handle(fd, 'fstat');
    this.#enter('size', handle.path, false);
    return handle.inode === 'folder' ? 4096 : handle.inode.current.length;
  }

  async close(fd: number): Promise<void> {
    const handle = this.#handle(fd, 'close');
    this.#enter('close', handle.path, false);
    this.#handles.delete(fd);
    if (handle.inode !== 'folder' && handle.inode.lockedBy === fd) handle.inode.lockedBy = null;
  }

  async rename(from: string, to: string): Promise<void> {
    this.#enter('rename', from, true);
    const source = normalise(from);
    const target = normalise(to);
    const inode = this.#files.get(source);
    if (inode === undefined) throw fileSystemError('ENOENT', 'rename', from);
    if (!this.#folders.has(dirname(target))) throw fileSystemError('ENOENT', 'rename', to);
    this.#files.delete(source);
    this.#files.set(target, inode);
    this.#boundary(`rename ${source} -> ${target}`);
  }

  async syncFolder(path: string): Promise<void> {
    this.#enter('syncFolder', path, true);
    const folder = normalise(path);
    if (!this.#folders.has(folder)) throw fileSystemError('ENOENT', 'open', path);
    for (const name of [...this.#durableNames.keys()]) {
      if (dirname(name) === folder && this.#files.get(name) !== this.#durableNames.get(name)) {
        this.#durableNames.delete(name);
      }
    }
    for (const [name, inode] of this.#files) {
      if (dirname(name) === folder) this.#durableNames.set(name, inode);
    }
    for (const name of this.#folders.keys()) {
      if (name !== '/' && dirname(name) === folder) this.#folders.set(name, true);
    }
    this.#boundary(`syncFolder ${folder}`);
  }

  async makeFolder(path: string): Promise<string | undefined> {
    this.#enter('makeFolder', path, true);
    const folder = normalise(path);
    const missing: string[] = [];
    for (let at = folder; !this.#folders.has(at); at = dirname(at)) {
      if (this.#files.has(at)) throw fileSystemError('EEXIST', 'mkdir', path);
      missing.unshift(at);
    }
    for (const name of missing) this.#folders.set(name, false);
    if (missing.length > 0) this.#boundary(`makeFolder ${folder}`);
    return missing[0];
  }

  async identity(fd: number): Promise<FileIdentity> {
    const handle = this.#handle(fd, 'fstat');
    this.#enter('identity', handle.path, false);
    if (handle.inode === 'folder') return folderIdentity(handle.path);
    const inode = handle.inode;
    let links = 0;
    for (const named of this.#files.values()) if (named === inode) links += 1;
    return { dev: 1n, ino: BigInt(inode.id), kind: 'file', links };
  }

  async identityOf(path: string): Promise<FileIdentity | null> {
    this.#enter('identityOf', path, false);
    const name = normalise(path);
    if (this.#folders.has(name)) return folderIdentity(name);
    const inode = this.#files.get(name);
    if (inode === undefined) return null;
    let links = 0;
    for (const named of this.#files.values()) if (named === inode) links += 1;
    return { dev: 1n, ino: BigInt(inode.id), kind: 'file', links };
  }

  async unlink(path: string): Promise<void> {
    this.#enter('unlink', path, true);
    const name = normalise(path);
    if (this.#folders.has(name)) throw fileSystemError('EISDIR', 'unlink', path);
    if (!this.#files.delete(name)) throw fileSystemError('ENOENT', 'unlink', path);
    this.#boundary(`unlink ${name}`);
  }

  tryLock(fd: number): boolean {
    const handle = this.#handle(fd, 'fcntl');
    this.#enter('tryLock', handle.path, false);
    if (handle.inode === 'folder') throw fileSystemError('EISDIR', 'fcntl');
    if (handle.inode.lockedBy !== null && handle.inode.lockedBy !== fd) return false;
    handle.inode.lockedBy = fd;
    return true;
  }

  async isLocked(path: string): Promise<boolean> {
    this.#enter('isLocked', path, false);
    return (this.#files.get(normalise(path))?.lockedBy ?? null) !== null;
  }

  // ---- internals ----

  #enter(operation: string, path: string, mutating: boolean, bytes?: number): number | undefined {
    this.counts.total += 1;
    if (mutating) this.counts.mutating += 1;
    return this.beforeCall?.(operation, path, bytes) ?? undefined;
  }

  #boundary(label: string): void {
    this.#boundaries += 1;
    if (this.onBoundary !== null) this.onBoundary(this.snapshot(label));
  }

  #newInode(): Inode {
    return {
      id: this.#nextInode++,
      current: Buffer.alloc(0),
      durable: Buffer.alloc(0),
      pending: [],
      lockedBy: null,
    };
  }

  #newHandle(handle: Handle): number {
    const fd = this.#nextFd++;
    this.#handles.set(fd, handle);
    return fd;
  }

  #handle(fd: number, syscall: string): Handle {
    const handle = this.#handles.get(fd);
    if (handle === undefined) throw fileSystemError('EBADF', syscall);
    return handle;
  }

  #fileOf(handle: Handle, syscall: string): Inode {
    if (handle.inode === 'folder') throw fileSystemError('EISDIR', syscall, handle.path);
    return handle.inode;
  }
}

/** A folder's identity: folders have no inode here, so one is made from the name's hash. */
function folderIdentity(name: string): FileIdentity {
  let hash = 0n;
  for (const char of name) hash = (hash * 31n + BigInt(char.codePointAt(0) ?? 0)) % 2n ** 48n;
  return { dev: 1n, ino: 2n ** 48n + hash, kind: 'folder', links: 1 };
}

/**
 * The files a power cut leaves from `snapshot`: each file's durable bytes with its unsynced
 * changes applied by `fateOf` (default: kept), and the names `names` says survive. A name
 * survives only if every folder above it does.
 *
 * @example
 * const files = crashFiles(snapshot, () => ({ kind: 'dropped' }), 'durable-only');
 */
export function crashFiles(
  snapshot: Snapshot,
  fateOf: (path: string, change: PendingChange, index: number) => Fate,
  names: NameFate,
): Map<string, Buffer> {
  const keepAll = names === 'all-current';
  const survives = (folder: string): boolean => {
    for (let at = folder; at !== '/'; at = dirname(at)) {
      const durable = snapshot.folders.get(at);
      if (durable === undefined || !(durable || keepAll)) return false;
    }
    return true;
  };
  const byInode = new Map<number, FileState>();
  for (const state of snapshot.files.values()) byInode.set(state.inode, state);
  const chosen = new Map<string, number>();
  if (keepAll) {
    for (const [name, state] of snapshot.files)
      if (!name.startsWith('\0')) chosen.set(name, state.inode);
  } else {
    for (const [name, inode] of snapshot.durableNames) chosen.set(name, inode);
  }
  const contents = new Map<number, Buffer>();
  const result = new Map<string, Buffer>();
  for (const [name, inode] of [...chosen].sort(([left], [right]) => (left < right ? -1 : 1))) {
    if (!survives(dirname(name))) continue;
    const state = byInode.get(inode);
    if (state === undefined) continue;
    let bytes = contents.get(inode);
    if (bytes === undefined) {
      bytes = state.durable;
      state.pending.forEach((change, index) => {
        bytes = applyFate(bytes as Buffer, change, fateOf(name, change, index));
      });
      contents.set(inode, bytes);
    }
    result.set(name, bytes);
  }
  return result;
}

function applyFate(bytes: Buffer, change: PendingChange, fate: Fate): Buffer {
  if (fate.kind === 'dropped') return bytes;
  if (change.kind === 'truncate') return resize(bytes, change.length);
  if (fate.kind === 'kept') return applyWrite(bytes, change.offset, change.bytes);
  if (fate.kind === 'zeroed')
    return applyWrite(bytes, change.offset, Buffer.alloc(change.bytes.length));
  return applyWrite(bytes, change.offset, change.bytes.subarray(0, fate.at));
}

function applyWrite(bytes: Buffer, offset: number, data: Buffer): Buffer {
  const length = Math.max(bytes.length, offset + data.length);
  const out = Buffer.alloc(length);
  bytes.copy(out, 0, 0, bytes.length);
  data.copy(out, offset);
  return out;
}

function resize(bytes: Buffer, length: number): Buffer {
  if (length <= bytes.length) return bytes.subarray(0, length);
  const out = Buffer.alloc(length);
  bytes.copy(out);
  return out;
}
