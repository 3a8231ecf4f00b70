import { EXIT, type ExitCode } from './exit-codes.ts';

/**
 * A mistake the user can fix (a missing file, a bad option): printed as one line, never with
 * a stack trace, and the process exits with `exitCode` (2 unless said otherwise).
 *
 * @example
 * throw new UserError(`${path}: no such file or folder`);
 */
export class UserError extends Error {
  readonly exitCode: ExitCode;

  constructor(message: string, exitCode: ExitCode = EXIT.usage) {
    super(message);
    this.name = 'UserError';
    this.exitCode = exitCode;
  }
}
