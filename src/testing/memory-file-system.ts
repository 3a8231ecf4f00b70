import { dirname, posix } from 'node:path';
import type { FileIdentity, FileSystem, OpenMode } from '../transcript/file-system.ts';

/*
 * An in-memory implementation of the transcript layer's FileSystem, for tests that need speed
 * (a sweep over every byte offset) or a model of what a power cut leaves behind.
 *
 * It follows Linux semantics where the transcript layer depends on them: O_APPEND writes go to
 * the end, O_EXCL refuses an existing name, opening a folder fails with EISDIR (the real
 * `read` mode checks the file type before the first read; this model holds no FIFOs or
 * devices, only files and folders), ftruncate needs a writable descriptor, rename replaces its target, and a
 * kernel lock belongs to the open file description (released when that descriptor is closed).
 *
 * Durability is modelled per file and per folder entry:
 * - a file's `durable` bytes are its contents as of its last `sync` (fdatasync);
 * - a name is durable once its folder was synced (`syncFolder`) after it was created or renamed,
 *   and a folder is durable once its parent was synced after it was made.
 * {@link MemoryFileSystem.crashImage} builds the file system a power cut could leave, with a
 * caller-chosen fate for unsynced bytes; the process's death (no power cut) is simply the
 * current state, since the page cache survives it.
 */

/**
 * An errno-style error, shaped as Node's fs errors are (`code`, `syscall`, `path`).
 *
 * @example
 * throw fileSystemError('ENOSPC', 'write', '/runs/a.jsonl');
 */
export function fileSystemError(code: string, syscall: string, path?: string): Error {
  const where = path === undefined ? '' : ` '${path}'`;
  const error = new Error(`${code}: ${describeCode(code)}, ${syscall}${where}`);
  return Object.assign(error, { code, syscall, ...(path === undefined ? {} : { path }) });
}

function describeCode(code: string): string {
  const descriptions: Record<string, string> = {
    ENOENT: 'no such file or directory',
    EEXIST: 'file already exists',
    EISDIR: 'illegal operation on a directory',
    ENOTDIR: 'not a directory',
    EBADF: 'bad file descriptor',
    EINVAL: 'invalid argument',
    EIO: 'i/o error',
    ENOSPC: 'no space left on device',
  };
  return descriptions[code] ?? 'error';
}

interface Inode {
  readonly id: number;
  data: Buffer;
  length: number;
  /**
   * Contents as of the last sync. It may be a view of `data` (copy on write: appends never
   * touch synced bytes, and a write or truncate that would copies it first).
   */
  durable: Buffer;
  mode: number;
  lockedBy: Handle | null;
}

interface Handle {
  readonly fd: number;
  readonly path: string;
  readonly inode: Inode | 'folder';
  readonly readable: boolean;
  readonly writable: boolean;
  readonly append: boolean;
  position: number;
}

interface Folder {
  mode: number;
  /** True once the folder's own entry in its parent is durable. */
  durable: boolean;
}

/**
 * What a crash image keeps of a file's unsynced bytes.
 *
 * @example
 * // A torn write: half of what was not yet synced reached the disk.
 * const torn = (file: UnsyncedFile) =>
 *   file.current.subarray(0, file.durable.length + (file.current.length - file.durable.length) / 2);
 */
export interface UnsyncedFile {
  path: string;
  /** The bytes as of the last sync. */
  durable: Buffer;
  /** The bytes as the process last saw them. */
  current: Buffer;
}

/**
 * Options for {@link MemoryFileSystem.crashImage}.
 *
 * @example
 * const fileSystem = new MemoryFileSystem();
 * const afterPowerCut = fileSystem.crashImage({ unsynced: 'drop', unsyncedNames: 'keep' });
 */
export interface CrashImageOptions {
  /**
   * The contents a file has after the power cut, when its current bytes differ from its durable
   * ones: `drop` (default) keeps the durable bytes, `keep` the current ones (the writes reached
   * the disk before the cut), or a function choosing any bytes (a torn write, garbage).
   */
  unsynced?: 'drop' | 'keep' | ((file: UnsyncedFile) => Buffer);
  /** Names whose folder was not synced since they changed: `drop` (default) or `keep`. */
  unsyncedNames?: 'drop' | 'keep';
}

/**
 * Options for {@link MemoryFileSystem}.
 *
 * @example
 * const fileSystem = new MemoryFileSystem({ fileMode: 0o644 });
 */
export interface MemoryFileSystemOptions {
  /** The mode new files get (default 0o600, as nodeFileSystem asks for). */
  fileMode?: number;
}

/**
 * A FileSystem held in memory. Paths are POSIX paths; `/` always exists. Descriptors start at
 * 1000 so that they are never mistaken for real ones.
 *
 * @example
 * const fileSystem = new MemoryFileSystem();
 * fileSystem.writeFile('/runs/a.jsonl', bytes); // a transcript's bytes
 * const session = await Session.open('/runs/a.jsonl', { fileSystem });
 * const image = fileSystem.crashImage({ unsynced: 'drop' }); // what a power cut leaves
 */
export class MemoryFileSystem implements FileSystem {
  readonly #folders = new Map<string, Folder>([['/', { mode: 0o700, durable: true }]]);
  /** Current names. */
  readonly #files = new Map<string, Inode>();
  /** Names as the disk knows them (updated by syncFolder). */
  readonly #durableNames = new Map<string, Inode>();
  readonly #handles = new Map<number, Handle>();
  readonly #fileMode: number;
  #nextFd = 1000;
  #nextInode = 1;

  constructor(options: MemoryFileSystemOptions = {}) {
    this.#fileMode = options.fileMode ?? 0o600;
  }

  // ---- FileSystem ----

  /** As `FileSystem.open`, in memory. */
  async open(path: string, mode: OpenMode): Promise<number> {
    const name = normalise(path);
    // As the real `read` mode: a folder is refused at open; an exclusive create finds the
    // name taken.
    if (this.#folders.has(name)) {
      throw fileSystemError(mode === 'create' ? 'EEXIST' : 'EISDIR', 'open', path);
    }
    this.#requireParent(name, 'open', path);
    let inode = this.#files.get(name);
    const creates = mode === 'create' || mode === 'lock';
    if (mode === 'create' && inode !== undefined) throw fileSystemError('EEXIST', 'open', path);
    if (inode === undefined) {
      if (!creates) throw fileSystemError('ENOENT', 'open', path);
      inode = this.#newInode(this.#fileMode);
      this.#files.set(name, inode);
    }
    const readable = true;
    const writable = mode !== 'read';
    const append = mode === 'append' || mode === 'create';
    return this.#newHandle(name, inode, readable, writable, append);
  }

  /** As `FileSystem.write`, in memory. */
  async write(fd: number, bytes: Uint8Array): Promise<number> {
    const handle = this.#handle(fd, 'write');
    const inode = this.#fileOf(handle, 'write');
    if (!handle.writable) throw fileSystemError('EBADF', 'write');
    const at = handle.append ? inode.length : handle.position;
    if (at < inode.durable.length) detachDurable(inode);
    this.#ensureCapacity(inode, at + bytes.length);
    if (at > inode.length) inode.data.fill(0, inode.length, at);
    inode.data.set(bytes, at);
    inode.length = Math.max(inode.length, at + bytes.length);
    handle.position = at + bytes.length;
    return bytes.length;
  }

  /** As `FileSystem.read`, in memory. */
  async read(fd: number, buffer: Uint8Array, position: number): Promise<number> {
    const handle = this.#handle(fd, 'read');
    if (handle.inode === 'folder') throw fileSystemError('EISDIR', 'read');
    if (!handle.readable) throw fileSystemError('EBADF', 'read');
    const inode = handle.inode;
    if (position >= inode.length) return 0;
    const count = Math.min(buffer.length, inode.length - position);
    buffer.set(inode.data.subarray(position, position + count));
    return count;
  }

  /** As `FileSystem.sync`, in memory. */
  async sync(fd: number): Promise<void> {
    const handle = this.#handle(fd, 'fdatasync');
    if (handle.inode === 'folder') return;
    const inode = handle.inode;
    inode.durable = inode.data.subarray(0, inode.length);
  }

  /** As `FileSystem.truncate`, in memory. */
  async truncate(fd: number, length: number): Promise<void> {
    const handle = this.#handle(fd, 'ftruncate');
    const inode = this.#fileOf(handle, 'ftruncate');
    if (!handle.writable || length < 0) throw fileSystemError('EINVAL', 'ftruncate');
    if (length < inode.durable.length) detachDurable(inode);
    this.#ensureCapacity(inode, length);
    if (length > inode.length) inode.data.fill(0, inode.length, length);
    inode.length = length;
  }

  /** As `FileSystem.size`, in memory. */
  async size(fd: number): Promise<number> {
    const handle = this.#handle(fd, 'fstat');
    return handle.inode === 'folder' ? 4096 : handle.inode.length;
  }

  /** As `FileSystem.close`, in memory. */
  async close(fd: number): Promise<void> {
    const handle = this.#handle(fd, 'close');
    this.#handles.delete(fd);
    if (handle.inode !== 'folder' && handle.inode.lockedBy === handle) {
      handle.inode.lockedBy = null;
    }
  }

  /** As `FileSystem.rename`, in memory. */
  async rename(from: string, to: string): Promise<void> {
    const source = normalise(from);
    const target = normalise(to);
    const inode = this.#files.get(source);
    if (inode === undefined) throw fileSystemError('ENOENT', 'rename', from);
    this.#requireParent(target, 'rename', to);
    if (this.#folders.has(target)) throw fileSystemError('EISDIR', 'rename', to);
    this.#files.delete(source);
    this.#files.set(target, inode);
  }

  /** As `FileSystem.syncFolder`, in memory. */
  async syncFolder(path: string): Promise<void> {
    const folder = normalise(path);
    if (!this.#folders.has(folder)) {
      throw fileSystemError(this.#files.has(folder) ? 'ENOTDIR' : 'ENOENT', 'open', path);
    }
    for (const name of [...this.#durableNames.keys()]) {
      if (dirname(name) === folder && !this.#files.has(name)) this.#durableNames.delete(name);
    }
    for (const [name, inode] of this.#files) {
      if (dirname(name) === folder) this.#durableNames.set(name, inode);
    }
    for (const [name, child] of this.#folders) {
      if (name !== '/' && dirname(name) === folder) child.durable = true;
    }
  }

  /** As `FileSystem.makeFolder`, in memory. */
  async makeFolder(path: string): Promise<string | undefined> {
    const folder = normalise(path);
    const missing: string[] = [];
    for (let at = folder; !this.#folders.has(at); at = dirname(at)) {
      if (this.#files.has(at))
        throw fileSystemError(at === folder ? 'EEXIST' : 'ENOTDIR', 'mkdir', path);
      missing.unshift(at);
    }
    for (const name of missing) this.#folders.set(name, { mode: 0o700, durable: false });
    return missing[0];
  }

  /** As `FileSystem.identity`, in memory. */
  async identity(fd: number): Promise<FileIdentity> {
    const handle = this.#handle(fd, 'fstat');
    if (handle.inode === 'folder') return folderIdentity(handle.path);
    return this.#identityOfInode(handle.inode);
  }

  /** As `FileSystem.identityOf`, in memory. */
  async identityOf(path: string): Promise<FileIdentity | null> {
    const name = normalise(path);
    if (this.#folders.has(name)) return folderIdentity(name);
    const inode = this.#files.get(name);
    return inode === undefined ? null : this.#identityOfInode(inode);
  }

  /** As `FileSystem.unlink`, in memory. */
  async unlink(path: string): Promise<void> {
    const name = normalise(path);
    if (this.#folders.has(name)) throw fileSystemError('EISDIR', 'unlink', path);
    if (!this.#files.delete(name)) throw fileSystemError('ENOENT', 'unlink', path);
  }

  /** As `FileSystem.tryLock`, in memory. */
  tryLock(fd: number): boolean {
    const handle = this.#handles.get(fd);
    if (handle === undefined) throw fileSystemError('EBADF', 'fcntl');
    if (handle.inode === 'folder') throw fileSystemError('EISDIR', 'fcntl');
    if (handle.inode.lockedBy !== null && handle.inode.lockedBy !== handle) return false;
    handle.inode.lockedBy = handle;
    return true;
  }

  /** As `FileSystem.isLocked`, in memory. */
  async isLocked(path: string): Promise<boolean> {
    return (this.#files.get(normalise(path))?.lockedBy ?? null) !== null;
  }

  // ---- Test helpers ----

  /** Create or replace a file, durable at once (as if it had been there before the test). */
  writeFile(path: string, bytes: Uint8Array | string, options: { mode?: number } = {}): void {
    const name = normalise(path);
    void this.makeFolderSync(dirname(name));
    const inode = this.#newInode(options.mode ?? this.#fileMode);
    const content = Buffer.from(bytes);
    inode.data = content;
    inode.length = content.length;
    inode.durable = content.subarray(0, content.length);
    this.#files.set(name, inode);
    this.#durableNames.set(name, inode);
  }

  /** A file's current bytes (a copy); throws ENOENT when there is none. */
  readFile(path: string): Buffer {
    const inode = this.#files.get(normalise(path));
    if (inode === undefined) throw fileSystemError('ENOENT', 'open', path);
    return Buffer.from(inode.data.subarray(0, inode.length));
  }

  /** A file's bytes as of its last sync (a copy); throws ENOENT when there is none. */
  readDurable(path: string): Buffer {
    const inode = this.#files.get(normalise(path));
    if (inode === undefined) throw fileSystemError('ENOENT', 'open', path);
    return Buffer.from(inode.durable);
  }

  /** Whether a file or folder exists at `path`. */
  exists(path: string): boolean {
    const name = normalise(path);
    return this.#files.has(name) || this.#folders.has(name);
  }

  /** The mode of a file or folder (permission bits only). */
  modeOf(path: string): number {
    const name = normalise(path);
    const mode = this.#files.get(name)?.mode ?? this.#folders.get(name)?.mode;
    if (mode === undefined) throw fileSystemError('ENOENT', 'stat', path);
    return mode;
  }

  /** Every file path, sorted. */
  listFiles(): string[] {
    return [...this.#files.keys()].sort();
  }

  /** Every folder path, sorted (`/` included). */
  listFolders(): string[] {
    return [...this.#folders.keys()].sort();
  }

  /** How many descriptors are open: a test can assert that nothing leaked. */
  openDescriptors(): number {
    return this.#handles.size;
  }

  /** Remove a file (as `rm` by another party would); its open descriptors stay valid. */
  removeFile(path: string): void {
    this.#files.delete(normalise(path));
  }

  /** Create folders synchronously (test set-up); returns the first created. */
  makeFolderSync(path: string): string | undefined {
    const folder = normalise(path);
    const missing: string[] = [];
    for (let at = folder; !this.#folders.has(at); at = dirname(at)) missing.unshift(at);
    for (const name of missing) this.#folders.set(name, { mode: 0o700, durable: true });
    return missing[0];
  }

  /**
   * The file system a power cut would leave now: only durable names (and folders) survive, with
   * contents chosen by `options.unsynced`. Locks and descriptors are gone. The image is a new,
   * independent MemoryFileSystem.
   *
   * @example
   * const fileSystem = new MemoryFileSystem();
   * const image = fileSystem.crashImage({ unsynced: ({ durable, current }) => current.subarray(0, durable.length + 3) });
   */
  crashImage(options: CrashImageOptions = {}): MemoryFileSystem {
    const image = new MemoryFileSystem({ fileMode: this.#fileMode });
    const keepNames = options.unsyncedNames === 'keep';
    const survives = (folder: string): boolean => {
      for (let at = folder; at !== '/'; at = dirname(at)) {
        const entry = this.#folders.get(at);
        if (entry === undefined || !(entry.durable || keepNames)) return false;
      }
      return true;
    };
    for (const [name, entry] of this.#folders) {
      if (survives(name)) image.#folders.set(name, { mode: entry.mode, durable: true });
    }
    const names = keepNames ? this.#files : this.#durableNames;
    for (const [name, inode] of names) {
      if (!image.#folders.has(dirname(name))) continue;
      const current = Buffer.from(inode.data.subarray(0, inode.length));
      let bytes = inode.durable;
      if (!current.equals(inode.durable)) {
        const choice = options.unsynced ?? 'drop';
        if (choice === 'keep') bytes = current;
        else if (choice !== 'drop') bytes = choice({ path: name, durable: inode.durable, current });
      }
      image.writeFile(name, bytes, { mode: inode.mode });
    }
    return image;
  }

  // ---- internals ----

  #identityOfInode(inode: Inode): FileIdentity {
    let links = 0;
    for (const named of this.#files.values()) if (named === inode) links += 1;
    return { dev: 1n, ino: BigInt(inode.id), kind: 'file', links };
  }

  #newInode(mode: number): Inode {
    return {
      id: this.#nextInode++,
      data: Buffer.alloc(0),
      length: 0,
      durable: Buffer.alloc(0),
      mode,
      lockedBy: null,
    };
  }

  #newHandle(
    path: string,
    inode: Inode | 'folder',
    readable: boolean,
    writable: boolean,
    append: boolean,
  ): number {
    const fd = this.#nextFd++;
    this.#handles.set(fd, { fd, path, inode, readable, writable, append, position: 0 });
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

  #requireParent(name: string, syscall: string, path: string): void {
    const parent = dirname(name);
    if (this.#folders.has(parent)) return;
    throw fileSystemError(this.#files.has(parent) ? 'ENOTDIR' : 'ENOENT', syscall, path);
  }

  #ensureCapacity(inode: Inode, length: number): void {
    if (length <= inode.data.length) return;
    const grown = Buffer.alloc(Math.max(length, inode.data.length * 2, 4096));
    inode.data.copy(grown, 0, 0, inode.length);
    inode.data = grown;
  }
}

/**
 * A folder's identity: folders here have no inode, so one is made from a hash of the name,
 * above every file's.
 */
function folderIdentity(name: string): FileIdentity {
  let hash = 0n;
  for (const char of name) hash = (hash * 31n + BigInt(char.codePointAt(0) ?? 0)) % 2n ** 48n;
  return { dev: 1n, ino: 2n ** 48n + hash, kind: 'folder', links: 1 };
}

/** Give a file's durable bytes their own memory before bytes they share are overwritten. */
function detachDurable(inode: Inode): void {
  if (inode.durable.buffer === inode.data.buffer) inode.durable = Buffer.from(inode.durable);
}

/**
 * An absolute path without a trailing slash: the key both in-memory file systems store names under.
 *
 * @example
 * normalise('runs/a.jsonl/'); // '/runs/a.jsonl'
 */
export function normalise(path: string): string {
  const absolute = posix.resolve('/', path);
  return absolute.length > 1 && absolute.endsWith('/') ? absolute.slice(0, -1) : absolute;
}
