import { describeError } from './transcript-error.ts';
import { hostname } from 'node:os';
import type { FileIdentity, FileSystem } from './file-system.ts';
import type { LockHolder } from './writer-lock.ts';

/*
 * One reviver per tree. A tree of runs (a root transcript, its children in `X.agents/`, theirs
 * below) is claimed as a whole through one file beside its root, `ROOT.jsonl.claim`: an
 * exclusive kernel lock on it, held while the tree is revived and its revived runs go on. The
 * lock dies with its process, so a claim is never stale.
 *
 * Deleting, renaming or replacing the file must not let a second claimer in: a claimer that
 * locked an inode proves, before it counts as holding the claim, that the inode is the regular
 * file now at the path, with no other name (fstat of its descriptor against lstat of the path,
 * nlink 1). A holder releases by unlinking the file before it closes the descriptor, so a
 * claimer that opened the old inode and locks it after the close finds it no longer at the path
 * and tries again on the new one.
 */

/**
 * A held tree claim. Release it once the revived runs of the tree have ended; the kernel drops
 * it if the process dies first.
 *
 * @example
 * const claimed = await Revival.claimTree({ path: '/runs/main.jsonl' });
 * const claim: TreeClaim | null = claimed.ok ? claimed.claim : null;
 * await claim?.release();
 */
export interface TreeClaim {
  /** The root transcript of the claimed tree. */
  readonly root: string;
  /** The claim file, `root` + `.claim`. */
  readonly path: string;
  readonly holder: LockHolder;
  /** Whether it is still held (not released by this process). */
  readonly held: boolean;
  /**
   * Whether the claim still stands: held, and its file is still the one at the path (another
   * process that deleted or replaced it could claim the tree anew). An I/O error while looking
   * (not a missing file, which is an answer) is thrown: the caller cannot tell, and says so.
   */
  verify(): Promise<boolean>;
  release(): Promise<void>;
}

/**
 * The outcome of {@link claimTree}: the claim, or who holds it (`detail` says it in one line).
 *
 * @example
 * const result: TreeClaimResult = await claimTree(fileSystem, root, new Date());
 * if (!result.ok) console.error(result.detail);
 */
export type TreeClaimResult =
  | { ok: true; claim: TreeClaim }
  | { ok: false; holder: LockHolder; detail: string };

/**
 * The claim file of a tree whose root transcript is `rootPath`.
 *
 * @example
 * claimPathOf('/runs/main.jsonl'); // '/runs/main.jsonl.claim'
 */
export function claimPathOf(rootPath: string): string {
  return `${rootPath}.claim`;
}

/** A claimer that keeps locking inodes that are gone from the path gives up after this many. */
const ATTEMPTS = 8;

/**
 * Claim the tree whose root transcript is `rootPath`, without waiting: open (or create, mode
 * 0600, never through a symlink) its claim file, take an exclusive kernel lock on it, prove the
 * locked inode is the one regular file at the path (else let go and try again, a few times),
 * then write the holder's name (pid, since, host) into it. Refused when a live process holds
 * the claim, naming it. I/O errors are thrown.
 *
 * @example
 * const claimed = await claimTree(nodeFileSystem, '/runs/main.jsonl', new Date());
 * if (!claimed.ok) console.error(claimed.detail); // 'the tree of /runs/main.jsonl is being revived by pid 42 since …'
 */
export async function claimTree(
  fileSystem: FileSystem,
  rootPath: string,
  now: Date,
): Promise<TreeClaimResult> {
  const path = claimPathOf(rootPath);
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    let fd: number;
    try {
      fd = await fileSystem.open(path, 'lock');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // O_NOFOLLOW answers ELOOP for a symlink; a folder or a device there is no claim file.
      if (code === 'ELOOP' || code === 'EISDIR' || code === 'ENXIO') {
        return notAClaimFile(rootPath, path, code);
      }
      throw error;
    }
    let keep = false;
    try {
      if (!fileSystem.tryLock(fd)) {
        const holder = await awaitHolderName(fileSystem, fd);
        return { ok: false, holder, detail: heldDetail(rootPath, holder) };
      }
      const [locked, named] = await Promise.all([
        fileSystem.identity(fd),
        fileSystem.identityOf(path),
      ]);
      if (locked.kind !== 'file') return notAClaimFile(rootPath, path, locked.kind);
      // Not the file at the path (unlinked by a releasing holder, or replaced), or a file with
      // another name too: try again with whatever is at the path now.
      if (!sameFile(locked, named) || locked.links !== 1) continue;
      const holder: LockHolder = { pid: process.pid, since: now.toISOString(), host: hostName() };
      await fileSystem.truncate(fd, 0);
      await fileSystem.write(fd, Buffer.from(JSON.stringify(holder)));
      keep = true;
      return { ok: true, claim: heldClaim(fileSystem, rootPath, path, fd, locked, holder) };
    } finally {
      // Closing the descriptor drops the lock: a claim not kept is not held.
      if (!keep) await fileSystem.close(fd).catch(() => undefined);
    }
  }
  return {
    ok: false,
    holder: { pid: null, since: null, host: null },
    detail: `${path}: the claim file kept changing under this reviver (${ATTEMPTS} attempts); another process is claiming or removing it`,
  };
}

function heldClaim(
  fileSystem: FileSystem,
  root: string,
  path: string,
  fd: number,
  identity: FileIdentity,
  holder: LockHolder,
): TreeClaim {
  let released: Promise<void> | undefined;
  return {
    root,
    path,
    holder,
    get held() {
      return released === undefined;
    },
    async verify() {
      if (released !== undefined) return false;
      const named = await fileSystem.identityOf(path);
      return sameFile(identity, named) && named?.links === 1;
    },
    release() {
      released ??= (async () => {
        try {
          // Unlink before closing: a claimer that locks this inode afterwards finds it gone
          // from the path. Only our own file is removed; a file someone put there is theirs.
          const named = await fileSystem.identityOf(path).catch(() => null);
          if (sameFile(identity, named)) await fileSystem.unlink(path).catch(() => undefined);
        } finally {
          await fileSystem.close(fd);
        }
      })();
      return released;
    },
  };
}

function sameFile(left: FileIdentity, right: FileIdentity | null): boolean {
  return (
    right !== null && right.dev === left.dev && right.ino === left.ino && right.kind === 'file'
  );
}

function notAClaimFile(rootPath: string, path: string, what: string): TreeClaimResult {
  return {
    ok: false,
    holder: { pid: null, since: null, host: null },
    detail: `${path}: not a claim file (${what}); the tree of ${rootPath} is not revived while it is there`,
  };
}

/**
 * Who holds the claim of the tree whose root is `rootPath`, when a live process holds it; null
 * when nobody does. Probes without locking and reads the claim file read-only (only when it is
 * a regular file), creating nothing. Never throws: a probe that fails counts as no holder —
 * whoever means to revive takes the claim for real.
 *
 * @example
 * const holder = await probeTreeClaim(nodeFileSystem, '/runs/main.jsonl');
 * if (holder !== null) console.log(`being revived by pid ${holder.pid}`);
 */
export async function probeTreeClaim(
  fileSystem: FileSystem,
  rootPath: string,
): Promise<LockHolder | null> {
  const path = claimPathOf(rootPath);
  try {
    if (!(await fileSystem.isLocked(path))) return null;
  } catch (error) {
    // Cannot tell: a tree taken for free could get a second reviver; taken for claimed, it
    // waits for a person to look — the safe side, with the reason.
    return {
      pid: null,
      since: null,
      host: null,
      unknownBecause: `cannot probe ${path}: ${describeError(error)}`,
    };
  }
  let fd: number;
  try {
    const identity = await fileSystem.identityOf(path);
    if (identity?.kind !== 'file') {
      return {
        pid: null,
        since: null,
        host: null,
        unknownBecause: `${path} is not a regular file`,
      };
    }
    fd = await fileSystem.open(path, 'read');
  } catch (error) {
    return {
      pid: null,
      since: null,
      host: null,
      unknownBecause: `cannot read who holds ${path}: ${describeError(error)}`,
    };
  }
  try {
    // A claimer names itself just after it takes the lock: a probe between the two waits a moment.
    return await awaitHolderName(fileSystem, fd);
  } finally {
    await Promise.resolve()
      .then(() => fileSystem.close(fd))
      .catch(() => undefined);
  }
}

/**
 * One line saying who is reviving a tree, for refusals and `status`.
 *
 * @example
 * heldDetail('/runs/main.jsonl', { pid: 42, since: '2026-01-01T00:00:00.000Z', host: null });
 * // 'the tree of /runs/main.jsonl is being revived by pid 42 since 2026-01-01T00:00:00.000Z'
 */
export function heldDetail(rootPath: string, holder: LockHolder): string {
  if (holder.unknownBecause !== undefined && holder.pid === null) {
    return `the tree of ${rootPath} may be being revived: ${holder.unknownBecause}; it is left alone until that can be checked`;
  }
  if (holder.pid === null)
    return `the tree of ${rootPath} is being revived by another process (not yet named)`;
  const host = holder.host !== null && holder.host !== hostName() ? ` on ${holder.host}` : '';
  return `the tree of ${rootPath} is being revived by pid ${holder.pid}${host} since ${holder.since ?? 'an unknown time'}`;
}

/** How long a refused claimer waits for the holder to write its name (it is between syscalls). */
const HOLDER_NAME_WAIT_MS = 250;
const HOLDER_NAME_POLL_MS = 2;

async function awaitHolderName(fileSystem: FileSystem, fd: number): Promise<LockHolder> {
  const deadline = Date.now() + HOLDER_NAME_WAIT_MS;
  for (;;) {
    const holder = await readHolder(fileSystem, fd);
    if (holder.pid !== null || Date.now() >= deadline) return holder;
    await new Promise((resolve) => setTimeout(resolve, HOLDER_NAME_POLL_MS));
  }
}

/** The holder's name as it wrote it; all null when it cannot be read (or is not one). */
async function readHolder(fileSystem: FileSystem, fd: number): Promise<LockHolder> {
  const unknown: LockHolder = { pid: null, since: null, host: null };
  try {
    const buffer = Buffer.alloc(1024);
    const read = await fileSystem.read(fd, buffer, 0);
    const value = JSON.parse(buffer.toString('utf8', 0, read)) as Record<string, unknown>;
    return {
      pid: Number.isSafeInteger(value.pid) ? (value.pid as number) : null,
      since: typeof value.since === 'string' ? value.since.slice(0, 64) : null,
      host: typeof value.host === 'string' ? value.host.slice(0, 255) : null,
    };
  } catch {
    return unknown;
  }
}

let cachedHostName: string | undefined;

function hostName(): string {
  cachedHostName ??= hostname();
  return cachedHostName;
}
