import { describeError } from './describe-error.ts';
import { hostname } from 'node:os';
import { type FileIdentity, type FileSystem, sameFile } from './file-system.ts';
import { temporaryPathOf } from './temporary-path.ts';

/**
 * Who holds a transcript's writer lock, as the holder wrote it into its nametag.
 *
 * @example
 * const holder: LockHolder = { pid: 4242, since: '2026-01-01T09:00:00.000Z', host: 'build-1' };
 */
export interface LockHolder {
  pid: number | null;
  since: string | null;
  host: string | null;
  /**
   * Set when a probe could not tell whether the lock is held, or who holds it (the error, in a
   * few words): a caller treats the lock as held — guessing "free" could let two writers in.
   */
  unknownBecause?: string;
}

/**
 * A held writer lock: an exclusive kernel lock on the transcript's own open descriptor, `fd`,
 * which is the descriptor the writer reads, repairs and appends through. The kernel drops it
 * if the process dies, so it is never stale.
 *
 * @example
 * const result = await acquireWriterLock(fileSystem, path, new Date());
 * if (!result.ok) throw new Error(`held by pid ${result.holder.pid}`);
 * const lock: WriterLock = result.lock;
 * if ((await lock.lost()) === null) await fileSystem.write(lock.fd, bytes);
 * await lock.release(); // the nametag removed, then the descriptor closed
 */
export interface WriterLock {
  /** The transcript's path. */
  readonly path: string;
  /** The transcript's descriptor, opened read-write with O_APPEND, locked. */
  readonly fd: number;
  /**
   * Null while the file at `path` is still the file this lock holds — same device and inode,
   * a regular file, not a symbolic link — else what happened to it (`was replaced by a
   * symbolic link`, …). One fstat and one lstat.
   */
  lost(): Promise<string | null>;
  /** Remove the nametag (when it is still this writer's), then close the descriptor. */
  release(): Promise<void>;
  /**
   * Null when the nametag was written; else why not (a full disk, a folder in its place, …).
   * The lock holds all the same — the nametag only names the holder — but another process
   * refused the lock then sees its holder as unknown, and this says why.
   */
  readonly nametagProblem: string | null;
}

/**
 * The outcome of {@link acquireWriterLock}.
 *
 * @example
 * const result: AcquireResult = await acquireWriterLock(fileSystem, 'runs/a.jsonl', new Date());
 * if (result.ok) await result.lock.release();
 */
export type AcquireResult = { ok: true; lock: WriterLock } | { ok: false; holder: LockHolder };

/**
 * The nametag of a transcript: a small file beside it naming the process that holds its writer
 * lock (`{"pid":…,"since":…,"host":…}`), so that a refused writer can say who holds it. Only a
 * name: exclusion is the kernel lock on the transcript itself, and deleting or forging the
 * nametag changes no one's right to write.
 *
 * @example
 * nametagPathOf('/runs/a.jsonl'); // '/runs/a.jsonl.owner'
 */
export function nametagPathOf(transcriptPath: string): string {
  return `${transcriptPath}.owner`;
}

/**
 * Options of {@link acquireWriterLock}.
 *
 * @example
 * const options: AcquireOptions = { create: true };
 */
export interface AcquireOptions {
  /** Create the transcript (O_CREAT|O_EXCL) instead of opening an existing one. */
  create?: boolean;
  /** The random part of the nametag's temporary name (default: crypto). */
  random?: () => string;
}

/**
 * Take the writer lock of a transcript without waiting: open the transcript itself (read-write,
 * O_APPEND, never following a symbolic link, non-blocking; with `create`, O_CREAT|O_EXCL), check
 * that it is a regular file, and take an exclusive kernel lock (an OFD lock on Linux) on that
 * descriptor, held until {@link WriterLock.release} or the process's death. The holder then
 * names itself in the nametag ({@link nametagPathOf}), written under an unpredictable temporary
 * name created exclusively and renamed into place; failing to write it costs only the name.
 * Errors of the open are thrown as they are (ENOENT, ELOOP, EEXIST…); a path that is not a
 * regular file throws an error with code `ENOTREG`.
 *
 * @example
 * const result = await acquireWriterLock(fileSystem, 'run.jsonl', new Date());
 * if (!result.ok) console.error(`held by pid ${result.holder.pid}`);
 */
export async function acquireWriterLock(
  fileSystem: FileSystem,
  transcriptPath: string,
  now: Date,
  options: AcquireOptions = {},
): Promise<AcquireResult> {
  const fd = await fileSystem.open(transcriptPath, options.create === true ? 'create' : 'append');
  let locked = false;
  try {
    const opened = await fileSystem.identity(fd);
    if (opened.kind !== 'file') {
      throw Object.assign(new Error(`${transcriptPath} is not a regular file`), {
        code: 'ENOTREG',
      });
    }
    locked = fileSystem.tryLock(fd);
    if (!locked) {
      return { ok: false, holder: await awaitHolderName(fileSystem, transcriptPath) };
    }
  } finally {
    if (!locked) await fileSystem.close(fd);
  }
  const holder = JSON.stringify({ pid: process.pid, since: now.toISOString(), host: hostName() });
  const written = await writeNametag(fileSystem, transcriptPath, holder, options.random);
  const nametag = 'identity' in written ? written.identity : null;
  let released = false;
  return {
    ok: true,
    lock: {
      path: transcriptPath,
      fd,
      nametagProblem: 'problem' in written ? written.problem : null,
      lost: () => lostOwnership(fileSystem, transcriptPath, fd),
      async release() {
        if (released) return;
        released = true;
        try {
          if (nametag !== null) await removeNametag(fileSystem, transcriptPath, nametag);
        } finally {
          await fileSystem.close(fd);
        }
      },
    },
  };
}

/**
 * What happened to the transcript at `path` since `fd` was opened on it, or null when the
 * path still names that very file, as a regular file.
 */
async function lostOwnership(
  fileSystem: FileSystem,
  path: string,
  fd: number,
): Promise<string | null> {
  const [opened, atPath] = await Promise.all([
    fileSystem.identity(fd),
    fileSystem.identityOf(path),
  ]);
  const ours = opened.links === 0 ? 'was deleted' : 'was renamed or moved away';
  if (atPath === null) return `is gone: the file this session writes ${ours}`;
  if (atPath.kind === 'symlink') {
    return `was replaced by a symbolic link (the file this session writes ${ours})`;
  }
  if (!sameFile(opened, atPath)) {
    return `was replaced by another file (the file this session writes ${ours})`;
  }
  if (atPath.kind !== 'file') return 'is no longer a regular file';
  return null;
}

/**
 * Write the nametag: a new file under an unpredictable name (created exclusively, never through
 * a link), renamed over the nametag's name (a rename replaces a link itself, never its target).
 * Returns the nametag's identity, so that release removes only this writer's; or, when it could
 * not be written (a full disk, a folder in its place), why not: the lock holds all the same.
 */
async function writeNametag(
  fileSystem: FileSystem,
  transcriptPath: string,
  holder: string,
  random: (() => string) | undefined,
): Promise<{ identity: FileIdentity } | { problem: string }> {
  const nametag = nametagPathOf(transcriptPath);
  const temporary = temporaryPathOf(nametag, random);
  let fd: number;
  try {
    fd = await fileSystem.open(temporary, 'create');
  } catch (error) {
    return { problem: `cannot create ${temporary}: ${describeError(error)}` };
  }
  try {
    let identity: FileIdentity;
    try {
      await fileSystem.write(fd, Buffer.from(holder));
      identity = await fileSystem.identity(fd);
    } finally {
      await fileSystem.close(fd);
    }
    await fileSystem.rename(temporary, nametag);
    return { identity };
  } catch (error) {
    await fileSystem.unlink(temporary).catch(() => undefined);
    return { problem: `cannot write ${nametag}: ${describeError(error)}` };
  }
}

/** Remove the nametag if it is still the one this writer wrote (never another writer's). */
async function removeNametag(
  fileSystem: FileSystem,
  transcriptPath: string,
  written: FileIdentity,
): Promise<void> {
  const nametag = nametagPathOf(transcriptPath);
  try {
    const atPath = await fileSystem.identityOf(nametag);
    if (atPath !== null && sameFile(atPath, written)) await fileSystem.unlink(nametag);
  } catch {
    // A nametag left behind names a process that is gone: a probe ignores it.
  }
}

/** How long a refused caller waits for the holder to write its name (it is between syscalls). */
const HOLDER_NAME_WAIT_MS = 250;
const HOLDER_NAME_POLL_MS = 2;

/**
 * The holder's name. A holder writes its nametag just after taking the lock, and a holder that
 * died without releasing left its own: so a refused caller that reads no name, or the name of a
 * process that is gone, reads again for a short while before answering.
 */
async function awaitHolderName(
  fileSystem: FileSystem,
  transcriptPath: string,
): Promise<LockHolder> {
  const deadline = Date.now() + HOLDER_NAME_WAIT_MS;
  for (;;) {
    const holder = await readHolder(fileSystem, transcriptPath);
    if (isPlausibleHolder(holder) || Date.now() >= deadline) return holder;
    await new Promise((resolve) => setTimeout(resolve, HOLDER_NAME_POLL_MS));
  }
}

function isPlausibleHolder(holder: LockHolder): boolean {
  if (holder.pid === null) return false;
  if (holder.host !== null && holder.host !== hostName()) return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

let cachedHostName: string | undefined;

function hostName(): string {
  cachedHostName ??= hostname();
  return cachedHostName;
}

/**
 * Who holds the writer lock of a transcript, when a live process holds it; null when nobody
 * does. Probes without locking (so a real writer's acquire never fails because of it): on
 * Linux it looks for the transcript's inode in /proc/locks. The holder's name is read from its
 * nametag, read-only, creating nothing; the nametag decides nothing (a missing or forged one
 * only changes the name shown). A probe that fails counts as no holder: whoever means to write
 * takes the lock for real, so a wrong "nobody" here cannot make two writers. Never throws.
 *
 * @example
 * const holder = await probeWriterLock(nodeFileSystem, 'runs/a.jsonl');
 * if (holder !== null) console.log(`running: ${describeHolder(holder)}`);
 */
export async function probeWriterLock(
  fileSystem: FileSystem,
  transcriptPath: string,
): Promise<LockHolder | null> {
  try {
    if (!(await fileSystem.isLocked(transcriptPath))) return null;
  } catch {
    return null;
  }
  return readHolder(fileSystem, transcriptPath);
}

/** The holder's name as its nametag says; all null when it cannot be read. */
async function readHolder(fileSystem: FileSystem, transcriptPath: string): Promise<LockHolder> {
  const unknown: LockHolder = { pid: null, since: null, host: null };
  const nametag = nametagPathOf(transcriptPath);
  let fd: number;
  try {
    // Only a regular file is read: a FIFO or device put there could block or never end.
    if ((await fileSystem.identityOf(nametag))?.kind !== 'file') return unknown;
    fd = await fileSystem.open(nametag, 'read');
  } catch {
    return unknown;
  }
  try {
    const buffer = Buffer.alloc(4096);
    const read = await fileSystem.read(fd, buffer, 0);
    const value = JSON.parse(buffer.toString('utf8', 0, read)) as Record<string, unknown>;
    return {
      pid: typeof value.pid === 'number' ? value.pid : null,
      since: typeof value.since === 'string' ? value.since : null,
      host: typeof value.host === 'string' ? value.host : null,
    };
  } catch {
    // The holder may be between taking the lock and writing its name.
    return unknown;
  } finally {
    await Promise.resolve()
      .then(() => fileSystem.close(fd))
      .catch(() => undefined);
  }
}

/**
 * One line naming a lock holder, for error messages.
 *
 * @example
 * describeHolder({ pid: 42, since: '2026-01-01T00:00:00.000Z', host: null });
 * // 'pid 42 since 2026-01-01T00:00:00.000Z'
 */
export function describeHolder(holder: LockHolder): string {
  if (holder.pid === null) return 'another writer (not yet named)';
  const host = holder.host !== null && holder.host !== hostName() ? ` on ${holder.host}` : '';
  return `pid ${holder.pid}${host} since ${holder.since ?? 'an unknown time'}`;
}
