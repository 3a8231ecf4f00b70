import * as fs from 'node:fs';
import { type FileSystem, fileKind, nodeFileSystem } from './file-system.ts';

const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = fs.constants.O_NONBLOCK ?? 0;

/**
 * A file opened once and checked through its descriptor: a regular file (never a FIFO, a
 * device, a socket or a folder — decided by `fstat` before the first read), reached without
 * following a symbolic link, at most the caller's bound in size. Everything read afterwards is
 * read through `fd`, so a path swapped after the check changes nothing that is read.
 *
 * @example
 * const file: CheckedFile = { fd: 7, size: 1834, fileSystem: nodeFileSystem };
 */
export interface CheckedFile {
  fd: number;
  /** The size `fstat` gave at the check: nothing past it is read. */
  size: number;
  /** {@link nodeFileSystem} reading only the first `size` bytes of `fd`. */
  fileSystem: FileSystem;
}

/**
 * Why a file was not opened: `missing`, `link` (a symbolic link at the path), `not-regular`
 * (`detail` names the kind), `too-large`, `io-error`.
 *
 * @example
 * const refused: CheckedFileRefusal = { reason: 'too-large', detail: 'a.jsonl: 2147483648 bytes' };
 */
export interface CheckedFileRefusal {
  reason: 'missing' | 'link' | 'not-regular' | 'too-large' | 'io-error';
  detail: string;
}

/**
 * Open `path` for reading (`O_RDONLY|O_NONBLOCK|O_NOFOLLOW`) and check the descriptor: a
 * regular file of at most `maxBytes`. Never blocks (a FIFO is opened non-blocking and refused),
 * never follows a link at the path's last part (pass a resolved path), never throws: a refusal
 * is an answer. Close the `fd` of a success.
 *
 * @example
 * const opened = await openCheckedFile('/runs/a.jsonl', 1024 ** 3);
 * if ('fd' in opened) fs.closeSync(opened.fd);
 */
export async function openCheckedFile(
  path: string,
  maxBytes: number,
): Promise<CheckedFile | CheckedFileRefusal> {
  let fd: number;
  try {
    fd = await new Promise<number>((resolve, reject) =>
      fs.open(path, fs.constants.O_RDONLY | O_NONBLOCK | O_NOFOLLOW, (error, opened) =>
        error ? reject(error) : resolve(opened),
      ),
    );
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      return { reason: 'missing', detail: `${path}: no such file` };
    if (code === 'ELOOP')
      return { reason: 'link', detail: `${path}: is a symbolic link (not followed)` };
    return { reason: 'io-error', detail: `${path}: cannot open (${code ?? String(error)})` };
  }
  const refusal = await checkDescriptor(fd, path, maxBytes);
  if (typeof refusal !== 'number') {
    fs.close(fd, () => undefined);
    return refusal;
  }
  return { fd, size: refusal, fileSystem: upTo(refusal) };
}

/** The descriptor's size when it is a regular file within the bound; else why not. */
async function checkDescriptor(
  fd: number,
  path: string,
  maxBytes: number,
): Promise<number | CheckedFileRefusal> {
  let stat: fs.Stats;
  try {
    stat = await fstat(fd);
  } catch (error) {
    return { reason: 'io-error', detail: `${path}: cannot stat (${String(error)})` };
  }
  const kind = fileKind(stat);
  if (kind !== null)
    return { reason: 'not-regular', detail: `${path}: not a regular file (${kind})` };
  if (stat.size > maxBytes) {
    return {
      reason: 'too-large',
      detail: `${path}: ${stat.size} bytes, more than the bound of ${maxBytes}`,
    };
  }
  return stat.size;
}

function fstat(fd: number): Promise<fs.Stats> {
  return new Promise((resolve, reject) =>
    fs.fstat(fd, (error, stat) => (error ? reject(error) : resolve(stat))),
  );
}

/** {@link nodeFileSystem}'s reads and size, stopped at `size` bytes. */
function upTo(size: number): FileSystem {
  return {
    ...nodeFileSystem,
    size: async () => size,
    read: (fd, buffer, position) =>
      position >= size
        ? Promise.resolve(0)
        : nodeFileSystem.read(
            fd,
            buffer.subarray(0, Math.min(buffer.length, size - position)),
            position,
          ),
  };
}

/**
 * The bytes `[from, to)` of an open file, read through its descriptor in chunks of `chunkBytes`
 * (default 1 MiB): a fresh buffer each, so a consumer may keep one. A file that ends before
 * `to` (it shrank) throws an `EIO`-coded error.
 *
 * @example
 * for await (const chunk of readChunks(file.fileSystem, file.fd, 0, file.size)) hash.update(chunk);
 */
export async function* readChunks(
  fileSystem: FileSystem,
  fd: number,
  from: number,
  to: number,
  chunkBytes = 1024 * 1024,
): AsyncGenerator<Buffer, void, undefined> {
  for (let position = from; position < to; ) {
    const chunk = Buffer.allocUnsafe(Math.min(chunkBytes, to - position));
    const read = await fileSystem.read(fd, chunk, position);
    if (read === 0) {
      const error: NodeJS.ErrnoException = new Error(
        `the file ended at byte ${position}, before byte ${to} (it shrank while it was read)`,
      );
      error.code = 'EIO';
      throw error;
    }
    position += read;
    yield chunk.subarray(0, read);
  }
}
