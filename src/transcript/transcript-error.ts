import { describeError } from './describe-error.ts';
import type { LockHolder } from './writer-lock.ts';

// Long imported from here by the whole package; its home is its own file.
export { describeError } from './describe-error.ts';

/**
 * Why a session could not be opened or written:
 * - `locked`: another live writer holds the transcript (see `holder`);
 * - `exists`: `create` found a file already there;
 * - `unreadable`: the transcript is damaged, from a newer version, or not a transcript;
 * - `poisoned`: an earlier write or sync failed; reopen the session (which repairs) to go on;
 * - `ownership-lost`: the file at the transcript's path is no longer the file this session
 *   holds (deleted, renamed away, replaced by another file or a symbolic link); the session
 *   stopped writing and refuses everything — find out who moved the file before going on;
 * - `closed`: the session was closed;
 * - `io`: the file system refused an operation (see `cause`).
 *
 * @example
 * if (TranscriptError.isInstance(error)) {
 *   const code: TranscriptErrorCode = error.code;
 *   if (code === 'locked') console.error(`held by pid ${error.holder?.pid}`);
 * }
 */
export type TranscriptErrorCode =
  | 'locked'
  | 'exists'
  | 'unreadable'
  | 'poisoned'
  | 'ownership-lost'
  | 'closed'
  | 'io';

const MARKER: unique symbol = Symbol.for('llm-agent.SessionError');

/**
 * The one error a session throws. Its message names the file and, where there is one, the
 * line and the cause.
 *
 * @example
 * try {
 *   await Session.open('run.jsonl');
 * } catch (error) {
 *   if (TranscriptError.isInstance(error) && error.code === 'locked') console.error(error.message);
 * }
 */
export class TranscriptError extends Error {
  readonly code: TranscriptErrorCode;
  readonly path: string;
  readonly line: number | undefined;
  readonly holder: LockHolder | undefined;
  readonly [MARKER] = true;

  constructor(
    code: TranscriptErrorCode,
    path: string,
    message: string,
    details: { line?: number; holder?: LockHolder; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.code = code;
    this.path = path;
    this.line = details.line;
    this.holder = details.holder;
  }

  /** True for a TranscriptError, even one from another copy of this package. */
  static isInstance(error: unknown): error is TranscriptError {
    return (
      typeof error === 'object' &&
      error !== null &&
      (error as Record<symbol, unknown>)[MARKER] === true
    );
  }
}

/**
 * Run one file-system step of a session, turning its failure into a {@link TranscriptError}
 * (`io`) that names the file, the step and the cause. A TranscriptError passes through as it is.
 *
 * @example
 * const fd = await sessionIo(path, 'open for appending', () => fileSystem.open(path, 'append'));
 */
export async function sessionIo<T>(
  path: string,
  what: string,
  operation: () => Promise<T>,
): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (TranscriptError.isInstance(error)) throw error;
    throw new TranscriptError('io', path, `${path}: cannot ${what} (${describeError(error)})`, {
      cause: error,
    });
  }
}
