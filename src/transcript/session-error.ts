import type { LockHolder } from './writer-lock.ts';

/**
 * Why a session could not be opened or written:
 * - `locked`: another live writer holds the transcript (see `holder`);
 * - `exists`: `create` found a file already there;
 * - `unreadable`: the transcript is damaged, from a newer version, or not a transcript;
 * - `poisoned`: an earlier write or sync failed; reopen the session (which repairs) to go on;
 * - `closed`: the session was closed;
 * - `io`: the file system refused an operation (see `cause`).
 */
export type SessionErrorCode = 'locked' | 'exists' | 'unreadable' | 'poisoned' | 'closed' | 'io';

const MARKER: unique symbol = Symbol.for('llm-agent.SessionError');

/**
 * The one error a session throws. Its message names the file and, where there is one, the
 * line and the cause.
 *
 * @example
 * try {
 *   await Session.open('run.jsonl');
 * } catch (error) {
 *   if (SessionError.isInstance(error) && error.code === 'locked') console.error(error.message);
 * }
 */
export class SessionError extends Error {
  readonly code: SessionErrorCode;
  readonly path: string;
  readonly line: number | undefined;
  readonly holder: LockHolder | undefined;
  readonly [MARKER] = true;

  constructor(
    code: SessionErrorCode,
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

  /** True for a SessionError, even one from another copy of this package. */
  static isInstance(error: unknown): error is SessionError {
    return (
      typeof error === 'object' &&
      error !== null &&
      (error as Record<symbol, unknown>)[MARKER] === true
    );
  }
}
