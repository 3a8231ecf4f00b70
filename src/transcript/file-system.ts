import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';

/**
 * How a file is opened: `append` (O_APPEND|O_CREAT), `create` (O_CREAT|O_EXCL, for a new
 * transcript), `read`, `read-write` (an existing file, for truncation) and `lock` (O_CREAT,
 * read-write, never truncated, a symlink refused: a lock or claim file) and `replace` (O_CREAT|O_TRUNC: a sidecar).
 *
 * @example
 * const fd = await fileSystem.open('runs/a.jsonl', 'read');
 */
export type OpenMode = 'append' | 'create' | 'read' | 'read-write' | 'lock' | 'replace';

/**
 * Which file a descriptor or a path is, and what kind: two identities with the same `dev` and
 * `ino` are one file. `links` is its hard-link count.
 *
 * @example
 * const held = await fileSystem.identity(fd);
 * const named = await fileSystem.identityOf(path);
 * const same = named !== null && named.dev === held.dev && named.ino === held.ino;
 */
export interface FileIdentity {
  dev: bigint;
  ino: bigint;
  kind: 'file' | 'directory' | 'symlink' | 'other';
  links: number;
}

/**
 * Every file operation the transcript layer performs. One small interface, so that tests can
 * substitute an implementation that crashes, tears writes or fails with EIO at any call.
 *
 * Errors are thrown as Node's errors are (`{ code: 'ENOENT' }` …): this is the I/O boundary.
 *
 * @example
 * const session = await Session.create({ path, meta, fileSystem: nodeFileSystem });
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
  /** Take an exclusive kernel lock on an open file without waiting; false when held. */
  tryLock(fd: number): boolean;
  /** Whether some process holds a kernel lock on `path`, found without taking one. */
  isLocked(path: string): Promise<boolean>;
  /** fstat(2) of an open descriptor. */
  identity(fd: number): Promise<FileIdentity>;
  /** lstat(2) of a path (a symlink is not followed); null when nothing is there. */
  identityOf(path: string): Promise<FileIdentity | null>;
  /** Remove a name (unlink(2)); a folder is refused. */
  unlink(path: string): Promise<void>;
}

const FLAGS: Record<OpenMode, number> = {
  append: fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT,
  create:
    fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_EXCL,
  read: fs.constants.O_RDONLY,
  'read-write': fs.constants.O_RDWR,
  lock: fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW,
  replace: fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC,
};

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

function identityOfStats(stats: fs.BigIntStats): FileIdentity {
  const kind = stats.isFile()
    ? 'file'
    : stats.isDirectory()
      ? 'directory'
      : stats.isSymbolicLink()
        ? 'symlink'
        : 'other';
  return { dev: stats.dev, ino: stats.ino, kind, links: Number(stats.nlink) };
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
 * The real file system, through Node's `fs` with raw descriptors. Tests wrap it (or replace it)
 * to inject faults, which is why every transcript function takes a `FileSystem`.
 *
 * @example
 * const session = await Session.create('runs/a.jsonl', meta, { fileSystem: nodeFileSystem });
 */
export const nodeFileSystem: FileSystem = {
  open: (path, mode) => call<number>((callback) => fs.open(path, FLAGS[mode], 0o600, callback)),
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
  tryLock: (fd) => nativeExtensions().tryLock(fd),
  async isLocked(path) {
    const answer = await lockedPerProc(path);
    if (answer !== null) return answer;
    // Without /proc/locks, look without taking anything the writer could trip on: a probe
    // that briefly held a lock could make a real writer's acquire fail.
    return lockFileNamesLivePid(path);
  },
  identity: async (fd) =>
    identityOfStats(
      await call<fs.BigIntStats>((callback) => fs.fstat(fd, { bigint: true }, callback)),
    ),
  async identityOf(path) {
    try {
      return identityOfStats(await fs.promises.lstat(path, { bigint: true }));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      throw error;
    }
  },
  unlink: (path) => fs.promises.unlink(path),
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
  open: async (path, mode) => fs.openSync(path, FLAGS[mode], 0o600),
  read: async (fd, buffer, position) => fs.readSync(fd, buffer, 0, buffer.length, position),
  size: async (fd) => fs.fstatSync(fd).size,
  close: async (fd) => fs.closeSync(fd),
};

async function lockFileNamesLivePid(path: string): Promise<boolean> {
  try {
    const text = await fs.promises.readFile(path, 'utf8');
    const holder = JSON.parse(text) as { pid?: unknown };
    if (typeof holder.pid !== 'number') return false;
    process.kill(holder.pid, 0);
    return true;
  } catch {
    return false;
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
