import { hostname } from 'node:os';
import type { FileSystem } from './file-system.ts';

/**
 * Who holds a transcript's writer lock, as the holder wrote it into the lock file.
 *
 * @example
 * const holder: LockHolder = { pid: 4242, since: '2026-01-01T09:00:00.000Z', host: 'build-1' };
 */
export interface LockHolder {
  pid: number | null;
  since: string | null;
  host: string | null;
}

/**
 * A held writer lock: the kernel drops it if the process dies, so it is never stale.
 *
 * @example
 * const lock: WriterLock = result.lock; // acquireWriterLock(…) answered ok
 * await lock.release(); // the lock file stays, unlocked
 */
export interface WriterLock {
  readonly path: string;
  release(): Promise<void>;
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
 * The lock file of a transcript: beside it, never deleted (deleting and re-creating a lock
 * file lets two processes lock two different inodes).
 *
 * @example
 * lockPathOf('/runs/a.jsonl'); // '/runs/a.jsonl.lock'
 */
export function lockPathOf(transcriptPath: string): string {
  return `${transcriptPath}.lock`;
}

/**
 * Take the writer lock of a transcript without waiting: an exclusive kernel lock (an OFD lock
 * on Linux) on its lock file, held until {@link WriterLock.release} or the process's death.
 * The holder's pid and start time are written into the lock file so that a refused caller can
 * be told who holds it. I/O errors are thrown.
 *
 * @example
 * const result = await acquireWriterLock(fileSystem, 'run.jsonl', new Date());
 * if (!result.ok) console.error(`held by pid ${result.holder.pid}`);
 */
export async function acquireWriterLock(
  fileSystem: FileSystem,
  transcriptPath: string,
  now: Date,
): Promise<AcquireResult> {
  const path = lockPathOf(transcriptPath);
  const fd = await fileSystem.open(path, 'lock');
  let locked = false;
  try {
    locked = fileSystem.tryLock(fd);
    if (!locked) return { ok: false, holder: await awaitHolderName(fileSystem, fd) };
    const holder = JSON.stringify({ pid: process.pid, since: now.toISOString(), host: hostName() });
    try {
      await fileSystem.truncate(fd, 0);
      await fileSystem.write(fd, Buffer.from(holder));
    } catch (error) {
      // Closing the descriptor drops the lock: a failed acquire must not leave it held.
      locked = false;
      throw error;
    }
  } finally {
    if (!locked) await fileSystem.close(fd);
  }
  let released = false;
  return {
    ok: true,
    lock: {
      path,
      async release() {
        if (released) return;
        released = true;
        try {
          await fileSystem.truncate(fd, 0);
        } finally {
          await fileSystem.close(fd);
        }
      },
    },
  };
}

/** How long a refused caller waits for the holder to write its name (it is between syscalls). */
const HOLDER_NAME_WAIT_MS = 250;
const HOLDER_NAME_POLL_MS = 2;

/**
 * The holder's name. A holder writes it just after taking the lock (truncate, then write), and
 * a holder that died without releasing left its own: so a refused caller that reads no name, or
 * the name of a process that is gone, reads again for a short while before answering.
 */
async function awaitHolderName(fileSystem: FileSystem, fd: number): Promise<LockHolder> {
  const deadline = Date.now() + HOLDER_NAME_WAIT_MS;
  for (;;) {
    const holder = await readHolder(fileSystem, fd);
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
 * does. Probes without locking (so a real writer's acquire never fails because of it) and reads
 * the lock file read-only, creating nothing. A probe that fails counts as no holder: whoever
 * means to write takes the lock for real, so a wrong "nobody" here cannot make two writers.
 * Never throws.
 *
 * @example
 * const holder = await probeWriterLock(nodeFileSystem, 'runs/a.jsonl');
 * if (holder !== null) console.log(`running: ${describeHolder(holder)}`);
 */
export async function probeWriterLock(
  fileSystem: FileSystem,
  transcriptPath: string,
): Promise<LockHolder | null> {
  const path = lockPathOf(transcriptPath);
  try {
    if (!(await fileSystem.isLocked(path))) return null;
  } catch {
    return null;
  }
  let fd: number;
  try {
    fd = await fileSystem.open(path, 'read');
  } catch {
    return { pid: null, since: null, host: null };
  }
  try {
    return await readHolder(fileSystem, fd);
  } finally {
    await Promise.resolve()
      .then(() => fileSystem.close(fd))
      .catch(() => undefined);
  }
}

/** The holder's name as it wrote it into the lock file; all null when it cannot be read. */
async function readHolder(fileSystem: FileSystem, fd: number): Promise<LockHolder> {
  const unknown: LockHolder = { pid: null, since: null, host: null };
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
