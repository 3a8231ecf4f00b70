import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';

/**
 * How a file is opened:
 * - `append`: an existing file, read-write with O_APPEND, never created (a transcript a writer
 *   takes over; opened non-blocking, so a FIFO put at its path cannot hang the open);
 * - `create`: a new file, read-write with O_APPEND and O_CREAT|O_EXCL (a new transcript, a
 *   temporary file): an existing name — a symbolic link included — is refused with EEXIST;
 * - `read`: only a regular file (a symlink is followed to one): anything else — a FIFO, a
 *   device such as /dev/zero, a socket, a folder — is refused before the first read, without
 *   blocking, with {@link notRegularFile}'s error;
 * - `read-write`: an existing file, for truncation;
 * - `lock`: O_CREAT, read-write, never truncated.
 *
 * Every mode that can write refuses a symbolic link as the last part of the path (O_NOFOLLOW:
 * ELOOP), so nothing the package writes can be redirected to another file. Files are created
 * with mode 0600.
 *
 * @example
 * const fd = await fileSystem.open('runs/a.jsonl', 'read');
 */
export type OpenMode = 'append' | 'create' | 'read' | 'read-write' | 'lock';

/**
 * What a file is, as `fstat` or `lstat` saw it: its device and inode (together its identity),
 * its kind (`symlink` only from {@link FileSystem.identityOf}, which never follows one) and its
 * number of links (0 once it has been deleted).
 *
 * @example
 * const opened = await fileSystem.identity(await fileSystem.open(path, 'read'));
 * const atPath = await fileSystem.identityOf(path);
 * const same = atPath !== null && atPath.dev === opened.dev && atPath.ino === opened.ino;
 */
export interface FileIdentity {
  dev: bigint;
  ino: bigint;
  kind: 'file' | 'folder' | 'symlink' | 'other';
  links: number;
}

/**
 * Whether two identities are the same file (same device, same inode).
 *
 * @example
 * sameFile({ dev: 1n, ino: 7n, kind: 'file', links: 1 }, { dev: 1n, ino: 7n, kind: 'file', links: 1 }); // true
 */
export function sameFile(left: FileIdentity, right: FileIdentity): boolean {
  return left.dev === right.dev && left.ino === right.ino;
}

/**
 * Every file operation the transcript layer performs. One small interface, so that tests can
 * substitute an implementation that crashes, tears writes or fails with EIO at any call.
 *
 * Errors are thrown as Node's errors are (`{ code: 'ENOENT' }` …): this is the I/O boundary.
 *
 * @example
 * const session = await Session.create(path, meta, { fileSystem }); // any FileSystem
 */
export interface FileSystem {
  open(path: string, mode: OpenMode): Promise<number>;
  /** One write(2) at the current position (or the end, for `append`). Returns bytes written. */
  write(fd: number, bytes: Uint8Array): Promise<number>;
  /** Positional read; returns the bytes read (0 at the end of the file). */
  read(fd: number, buffer: Uint8Array, position: number): Promise<number>;
  /** fdatasync(2): the data and the size needed to read it back are durable. */
  sync(fd: number): Promise<void>;
  truncate(fd: number, length: number): Promise<void>;
  size(fd: number): Promise<number>;
  close(fd: number): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** Make a folder's entries (a created or renamed file) durable. */
  syncFolder(path: string): Promise<void>;
  /** Create a folder (and its parents) with mode 0700; returns the first folder created. */
  makeFolder(path: string): Promise<string | undefined>;
  /** fstat(2) of an open descriptor: the identity of the file it writes. */
  identity(fd: number): Promise<FileIdentity>;
  /** lstat(2) of a path, never following a symbolic link; null when nothing is there. */
  identityOf(path: string): Promise<FileIdentity | null>;
  /** unlink(2): remove a name (a symbolic link itself, never what it points to). */
  unlink(path: string): Promise<void>;
  /** Take an exclusive kernel lock on an open file without waiting; false when held. */
  tryLock(fd: number): boolean;
  /**
   * Whether some process holds a kernel lock on the file at `path` (a transcript: its writer
   * locks the transcript itself), found without taking one.
   */
  isLocked(path: string): Promise<boolean>;
}

const { O_APPEND, O_CREAT, O_EXCL, O_RDONLY, O_RDWR } = fs.constants;
/** Absent on Windows, where a symbolic link needs privileges to make. */
const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = fs.constants.O_NONBLOCK ?? 0;

const FLAGS: Record<OpenMode, number> = {
  append: O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK,
  create: O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW,
  // Non-blocking: opening a FIFO for reading would otherwise wait for a writer. It changes
  // nothing for a regular file, the only kind `read` lets through.
  read: O_RDONLY | O_NONBLOCK,
  'read-write': O_RDWR | O_NOFOLLOW | O_NONBLOCK,
  lock: O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK,
};

function identityFrom(stats: fs.BigIntStats): FileIdentity {
  const kind = stats.isFile()
    ? 'file'
    : stats.isDirectory()
      ? 'folder'
      : stats.isSymbolicLink()
        ? 'symlink'
        : 'other';
  return { dev: stats.dev, ino: stats.ino, kind, links: Number(stats.nlink) };
}

function missing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function call<T>(operation: (callback: (error: Error | null, value: T) => void) => void) {
  return new Promise<T>((resolve, reject) => {
    operation((error, value) => (error ? reject(error) : resolve(value)));
  });
}

function done(operation: (callback: (error: Error | null) => void) => void) {
  return new Promise<void>((resolve, reject) => {
    operation((error) => (error ? reject(error) : resolve()));
  });
}

/**
 * The native addon behind {@link FileSystem.tryLock}, loaded when a lock is first taken: loading
 * it (and its resolver) is about a tenth of a read-only command's start-up, and `status`,
 * `show` and `inspect` never take a lock.
 */
let loadedExtensions: { tryLock(fd: number): boolean } | undefined;
function nativeExtensions(): { tryLock(fd: number): boolean } {
  loadedExtensions ??= createRequire(import.meta.url)('fs-native-extensions') as {
    tryLock(fd: number): boolean;
  };
  return loadedExtensions;
}

const WINDOWS_FOLDER_SYNC_CODES = new Set(['EPERM', 'EISDIR', 'EINVAL']);

/**
 * Read /proc/locks for a lock on the inode of `path`. On Linux this sees the OFD and flock
 * locks that {@link FileSystem.tryLock} takes, without taking one; elsewhere it answers null.
 */
async function lockedPerProc(path: string): Promise<boolean | null> {
  if (process.platform !== 'linux') return null;
  let stat: fs.BigIntStats;
  try {
    stat = await fs.promises.stat(path, { bigint: true });
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? false : null;
  }
  let table: string;
  try {
    // A kernel table held in memory: read at once, it costs less than one thread-pool trip.
    table = fs.readFileSync('/proc/locks', 'latin1');
  } catch {
    return null;
  }
  for (const line of table.split('\n')) {
    // "1: OFDLCK ADVISORY WRITE -1 fd:01:1234 0 EOF"; waiters are marked "->".
    if (line.includes('->')) continue;
    for (const field of line.trim().split(/\s+/)) {
      const match = /^([0-9a-f]+):([0-9a-f]+):(\d+)$/.exec(field);
      if (match === null || BigInt(match[3] ?? '-1') !== stat.ino) continue;
      const major = BigInt(`0x${match[1]}`);
      const minor = BigInt(`0x${match[2]}`);
      const device = ((major & 0xfffn) << 8n) | (minor & 0xffn) | ((minor & ~0xffn) << 12n);
      if (device === stat.dev) return true;
    }
  }
  return false;
}

/**
 * The error `open(path, 'read')` throws for anything but a regular file: code `EFTYPE`
 * ("inappropriate file type"), `EISDIR` for a folder; the message names the kind.
 *
 * @example
 * throw notRegularFile('runs/a.jsonl', 'a FIFO');
 */
export function notRegularFile(path: string, kind: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`${path}: not a regular file (${kind})`);
  error.code = kind === 'a folder' ? 'EISDIR' : 'EFTYPE';
  error.path = path;
  return error;
}

/**
 * What kind of file a stat describes, or null for a regular file.
 *
 * @example
 * fileKind(fs.statSync('/dev/zero')); // 'a character device'
 */
export function fileKind(stat: fs.Stats): string | null {
  if (stat.isFile()) return null;
  if (stat.isDirectory()) return 'a folder';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  return 'not a file';
}

async function openForReading(path: string): Promise<number> {
  const fd = await call<number>((callback) => fs.open(path, FLAGS.read, callback));
  let kind: string | null;
  try {
    kind = fileKind(await call<fs.Stats>((callback) => fs.fstat(fd, callback)));
  } catch (error) {
    await done((callback) => fs.close(fd, callback)).catch(() => undefined);
    throw error;
  }
  if (kind !== null) {
    await done((callback) => fs.close(fd, callback)).catch(() => undefined);
    throw notRegularFile(path, kind);
  }
  return fd;
}

function openForReadingSync(path: string): number {
  const fd = fs.openSync(path, FLAGS.read);
  let kind: string | null;
  try {
    kind = fileKind(fs.fstatSync(fd));
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
  if (kind !== null) {
    fs.closeSync(fd);
    throw notRegularFile(path, kind);
  }
  return fd;
}

/**
 * The real file system, through Node's `fs` with raw descriptors. Tests wrap it (or replace it)
 * to inject faults, which is why every transcript function takes a `FileSystem`.
 *
 * @example
 * const session = await Session.create('runs/a.jsonl', meta, { fileSystem: nodeFileSystem });
 */
export const nodeFileSystem: FileSystem = {
  open: (path, mode) =>
    mode === 'read'
      ? openForReading(path)
      : call<number>((callback) => fs.open(path, FLAGS[mode], 0o600, callback)),
  write: (fd, bytes) =>
    call<number>((callback) => fs.write(fd, bytes, 0, bytes.length, null, callback)),
  read: (fd, buffer, position) =>
    call<number>((callback) => fs.read(fd, buffer, 0, buffer.length, position, callback)),
  sync: (fd) => done((callback) => fs.fdatasync(fd, callback)),
  truncate: (fd, length) => done((callback) => fs.ftruncate(fd, length, callback)),
  size: async (fd) => (await call<fs.Stats>((callback) => fs.fstat(fd, callback))).size,
  close: (fd) => done((callback) => fs.close(fd, callback)),
  rename: (from, to) => fs.promises.rename(from, to),
  async syncFolder(path) {
    const fd = await call<number>((callback) => fs.open(path, 'r', callback));
    try {
      await done((callback) => fs.fsync(fd, callback));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      if (!(process.platform === 'win32' && WINDOWS_FOLDER_SYNC_CODES.has(code))) throw error;
    } finally {
      await done((callback) => fs.close(fd, callback));
    }
  },
  makeFolder: (path) => fs.promises.mkdir(path, { recursive: true, mode: 0o700 }),
  identity: async (fd) =>
    identityFrom(
      await call<fs.BigIntStats>((callback) => fs.fstat(fd, { bigint: true }, callback)),
    ),
  async identityOf(path) {
    try {
      return identityFrom(await fs.promises.lstat(path, { bigint: true }));
    } catch (error) {
      if (missing(error)) return null;
      throw error;
    }
  },
  unlink: (path) => fs.promises.unlink(path),
  tryLock: (fd) => nativeExtensions().tryLock(fd),
  async isLocked(path) {
    const answer = await lockedPerProc(path);
    if (answer !== null) return answer;
    // Without /proc/locks, look without taking anything the writer could trip on: a probe
    // that briefly held a lock could make a real writer's acquire fail.
    return nametagNamesLivePid(path);
  },
};

/**
 * {@link nodeFileSystem} with `open`, `read`, `size` and `close` done synchronously, for a
 * command that reads thousands of small files one after another (`llm-agent status`): each
 * asynchronous call costs a thread-pool round trip — about sixteen system calls, waking a
 * thread and the event loop — several times what reading a cached file costs. Each call blocks
 * the event loop while it runs, so a server keeps {@link nodeFileSystem}. Failures still
 * arrive as rejected promises, as the interface promises.
 *
 * @example
 * const found = await Revival.inspect({ path, maxRevivals: 3, fileSystem: blockingReadFileSystem });
 */
export const blockingReadFileSystem: FileSystem = {
  ...nodeFileSystem,
  open: async (path, mode) =>
    mode === 'read' ? openForReadingSync(path) : fs.openSync(path, FLAGS[mode], 0o600),
  read: async (fd, buffer, position) => fs.readSync(fd, buffer, 0, buffer.length, position),
  size: async (fd) => fs.fstatSync(fd).size,
  close: async (fd) => fs.closeSync(fd),
};

/**
 * Without a lock table to read: whether the writer's nametag (`X.jsonl.owner`, see
 * writer-lock.ts) names a live process. Read without following a link, without blocking on a
 * FIFO, and at most 4 KiB of it.
 */
async function nametagNamesLivePid(transcriptPath: string): Promise<boolean> {
  let fd: number | undefined;
  try {
    fd = fs.openSync(`${transcriptPath}.owner`, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    if (!fs.fstatSync(fd).isFile()) return false;
    const buffer = Buffer.alloc(4096);
    const read = fs.readSync(fd, buffer, 0, buffer.length, 0);
    const holder = JSON.parse(buffer.toString('utf8', 0, read)) as { pid?: unknown };
    if (typeof holder.pid !== 'number') return false;
    process.kill(holder.pid, 0);
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * The folder a path is in (the one to fsync after creating a file in it).
 *
 * @example
 * folderOf('/runs/a.jsonl'); // '/runs'
 */
export function folderOf(path: string): string {
  return dirname(path);
}
