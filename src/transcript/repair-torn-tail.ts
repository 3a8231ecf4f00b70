import { basename, dirname, join } from 'node:path';
import type { FileSystem } from './file-system.ts';
import type { TailRepair } from './records.ts';
import { describeError, SessionError, sessionIo as io } from './session-error.ts';

/**
 * Copy the torn bytes to `<name>.torn-<validBytes>` (via a temporary file, renamed and its
 * folder synced), then truncate the transcript and sync it. Each step can be interrupted and
 * redone: the next open finds the same torn tail and reuses the same sidecar. A sidecar of that
 * name holding other bytes (an earlier repair at the same length, whose repair record was torn
 * in turn) is never overwritten: the next free `<name>.torn-<validBytes>-<n>` is used.
 * Throws a {@link SessionError} (`io`) naming the file and the step that failed.
 *
 * @example
 * const repair = await repairTornTail(fileSystem, 'runs/a.jsonl', 4096, 37);
 * repair.sidecar; // 'a.jsonl.torn-4096'
 */
export async function repairTornTail(
  fileSystem: FileSystem,
  path: string,
  validBytes: number,
  tornBytes: number,
): Promise<TailRepair> {
  const torn = Buffer.alloc(tornBytes);
  const source = await io(path, 'open for repair', () => fileSystem.open(path, 'read-write'));
  let filled = 0;
  let sidecar = '';
  try {
    while (filled < tornBytes) {
      const read = await io(path, 'read the torn tail', () =>
        fileSystem.read(source, torn.subarray(filled), validBytes + filled),
      );
      if (read === 0) break;
      filled += read;
    }
    const bytes = torn.subarray(0, filled);
    const base = `${basename(path)}.torn-${validBytes}`;
    let saved = false;
    for (let attempt = 1; ; attempt++) {
      sidecar = attempt === 1 ? base : `${base}-${attempt}`;
      const existing = await readIfExists(fileSystem, join(dirname(path), sidecar));
      if (existing === null) break;
      if (existing.equals(bytes)) {
        saved = true;
        break;
      }
    }
    if (!saved) await writeSidecar(fileSystem, path, join(dirname(path), sidecar), bytes);
    await io(path, 'truncate the torn tail', () => fileSystem.truncate(source, validBytes));
    await io(path, 'sync the truncation', () => fileSystem.sync(source));
  } finally {
    await fileSystem.close(source).catch(() => undefined);
  }
  return { validBytes, tornBytes: filled, sidecar };
}

/** The bytes of a file, or null when there is none. */
async function readIfExists(fileSystem: FileSystem, file: string): Promise<Buffer | null> {
  let fd: number;
  try {
    fd = await fileSystem.open(file, 'read');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new SessionError('io', file, `${file}: cannot read (${describeError(error)})`, {
      cause: error,
    });
  }
  try {
    const length = await io(file, 'read', () => fileSystem.size(fd));
    const bytes = Buffer.alloc(length);
    let filled = 0;
    while (filled < length) {
      const read = await io(file, 'read', () =>
        fileSystem.read(fd, bytes.subarray(filled), filled),
      );
      if (read === 0) break;
      filled += read;
    }
    return bytes.subarray(0, filled);
  } finally {
    await fileSystem.close(fd).catch(() => undefined);
  }
}

/** Write a sidecar durably under its final name: a temporary file, synced, renamed, folder synced. */
async function writeSidecar(
  fileSystem: FileSystem,
  path: string,
  sidecarPath: string,
  bytes: Buffer,
): Promise<void> {
  const temporary = `${sidecarPath}.tmp`;
  const target = await io(path, 'write the sidecar', () => fileSystem.open(temporary, 'replace'));
  try {
    const written = await io(path, 'write the sidecar', () => fileSystem.write(target, bytes));
    if (written !== bytes.length) {
      throw new SessionError('io', path, `${path}: short write to the sidecar ${temporary}`);
    }
    await io(path, 'sync the sidecar', () => fileSystem.sync(target));
  } finally {
    await fileSystem.close(target).catch(() => undefined);
  }
  await io(path, 'name the sidecar', () => fileSystem.rename(temporary, sidecarPath));
  await io(path, 'sync the folder', () => fileSystem.syncFolder(dirname(path)));
}
