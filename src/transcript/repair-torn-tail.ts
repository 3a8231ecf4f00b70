import { basename, dirname, join } from 'node:path';
import type { FileSystem } from './file-system.ts';
import type { TailRepair } from './records.ts';
import { TranscriptError, sessionIo as io } from './transcript-error.ts';
import { temporaryPathOf } from './temporary-path.ts';

/** How much of a torn tail is held in memory at once, however long the tail. */
const CHUNK_BYTES = 1024 * 1024;

/**
 * Copy the torn bytes of the transcript open on `fd` (the writer's own, locked descriptor) to
 * `<name>.torn-<validBytes>`, then truncate the transcript through `fd` and sync it. The copy
 * streams in 1 MiB chunks (a torn tail of any length costs 2 MiB of memory at most) into a
 * temporary file with an unpredictable name, created exclusively and never through a symbolic
 * link, synced, then renamed into place and its folder synced. Each step can be interrupted
 * and redone: the next open finds the same torn tail and reuses the same sidecar. A name that
 * holds other bytes (an earlier repair at the same length, whose repair record was torn in
 * turn), or holds anything but a regular file (a symbolic link, a FIFO), is never written nor
 * followed: the next free `<name>.torn-<validBytes>-<n>` is used. Throws a {@link TranscriptError}
 * (`io`) naming the file and the step that failed.
 *
 * @example
 * const repair = await repairTornTail(fileSystem, 'runs/a.jsonl', lock.fd, 4096, 37);
 * repair.sidecar; // 'a.jsonl.torn-4096'
 */
export async function repairTornTail(
  fileSystem: FileSystem,
  path: string,
  fd: number,
  validBytes: number,
  tornBytes: number,
  random?: () => string,
): Promise<TailRepair> {
  const size = await io(path, 'read the torn tail', () => fileSystem.size(fd));
  const length = Math.max(0, Math.min(tornBytes, size - validBytes));
  const source: Range = { fd, path, from: validBytes, length };
  // Sized to the tail when it is short: a repair of a few bytes allocates a few bytes.
  const chunk = Math.max(1, Math.min(CHUNK_BYTES, length));
  const buffers: Buffers = { left: Buffer.allocUnsafe(chunk), right: null };
  let sidecar = sidecarName(path, validBytes, 1);
  for (let attempt = 1; ; attempt++) {
    sidecar = sidecarName(path, validBytes, attempt);
    const found = await compareExisting(fileSystem, join(dirname(path), sidecar), source, buffers);
    if (found === 'same') break;
    if (found === 'missing') {
      await writeSidecar(fileSystem, source, join(dirname(path), sidecar), buffers.left, random);
      break;
    }
  }
  await io(path, 'truncate the torn tail', () => fileSystem.truncate(fd, validBytes));
  await io(path, 'sync the truncation', () => fileSystem.sync(fd));
  return { validBytes, tornBytes: length, sidecar };
}

/**
 * The name of the `attempt`-th sidecar of a repair at `validBytes` (a name in the transcript's
 * folder): `<name>.torn-<validBytes>`, then `…-2`, `…-3` when an earlier one holds other bytes.
 *
 * @example
 * sidecarName('runs/a.jsonl', 4096, 2); // 'a.jsonl.torn-4096-2'
 */
export function sidecarName(path: string, validBytes: number, attempt: number): string {
  const base = `${basename(path)}.torn-${validBytes}`;
  return attempt === 1 ? base : `${base}-${attempt}`;
}

/** The copy's buffer, and the comparison's (allocated only when a sidecar is compared). */
interface Buffers {
  left: Buffer;
  right: Buffer | null;
}

/** Bytes `from`…`from + length` of the file open on `fd`. */
interface Range {
  fd: number;
  path: string;
  from: number;
  length: number;
}

/** Read up to `buffer.length` bytes of `range` at `offset` into it (fewer only at its end). */
async function readRange(
  fileSystem: FileSystem,
  range: Range,
  offset: number,
  buffer: Buffer,
): Promise<number> {
  const wanted = Math.min(buffer.length, range.length - offset);
  let filled = 0;
  while (filled < wanted) {
    const read = await io(range.path, 'read', () =>
      fileSystem.read(range.fd, buffer.subarray(filled, wanted), range.from + offset + filled),
    );
    if (read === 0) break;
    filled += read;
  }
  return filled;
}

/**
 * Whether `file` holds exactly the bytes of `source` (compared chunk by chunk): `missing` when
 * nothing is there, `other` when something else is (other bytes, or not a regular file).
 */
async function compareExisting(
  fileSystem: FileSystem,
  file: string,
  source: Range,
  buffers: Buffers,
): Promise<'missing' | 'same' | 'other'> {
  const found = await io(file, 'look at', () => fileSystem.identityOf(file));
  if (found === null) return 'missing';
  // A link is never followed and a FIFO never opened: the name is simply not free.
  if (found.kind !== 'file') return 'other';
  const fd = await io(file, 'open', () => fileSystem.open(file, 'read'));
  try {
    const existing: Range = { fd, path: file, from: 0, length: source.length };
    if ((await io(file, 'read', () => fileSystem.size(fd))) !== source.length) return 'other';
    buffers.right ??= Buffer.allocUnsafe(buffers.left.length);
    for (let offset = 0; offset < source.length; ) {
      const left = await readRange(fileSystem, source, offset, buffers.left);
      const right = await readRange(fileSystem, existing, offset, buffers.right);
      if (left === 0 || left !== right) return 'other';
      if (!buffers.left.subarray(0, left).equals(buffers.right.subarray(0, right))) return 'other';
      offset += left;
    }
    return 'same';
  } finally {
    await fileSystem.close(fd).catch(() => undefined);
  }
}

/**
 * Write a sidecar durably under its final name: a temporary file (an unpredictable name,
 * created exclusively, never through a link) filled chunk by chunk, synced, renamed (a rename
 * replaces a link itself, never its target), folder synced.
 */
async function writeSidecar(
  fileSystem: FileSystem,
  source: Range,
  sidecarPath: string,
  buffer: Buffer,
  random: (() => string) | undefined,
): Promise<void> {
  const path = source.path;
  const temporary = temporaryPathOf(sidecarPath, random);
  const target = await io(path, 'write the sidecar', () => fileSystem.open(temporary, 'create'));
  let named = false;
  try {
    try {
      for (let offset = 0; offset < source.length; ) {
        const count = await readRange(fileSystem, source, offset, buffer);
        if (count === 0) break;
        const written = await io(path, 'write the sidecar', () =>
          fileSystem.write(target, buffer.subarray(0, count)),
        );
        if (written !== count) {
          throw new TranscriptError('io', path, `${path}: short write to the sidecar ${temporary}`);
        }
        offset += count;
      }
      await io(path, 'sync the sidecar', () => fileSystem.sync(target));
    } finally {
      await fileSystem.close(target).catch(() => undefined);
    }
    await io(path, 'name the sidecar', () => fileSystem.rename(temporary, sidecarPath));
    named = true;
  } finally {
    // A temporary file left by a failed step is of no use to anyone (its name is random).
    if (!named) await fileSystem.unlink(temporary).catch(() => undefined);
  }
  await io(path, 'sync the folder', () => fileSystem.syncFolder(dirname(path)));
}
