import { EXIT, type ExitCode } from '../render/exit-codes.ts';
import { ModelSpecError } from '../subagents/model-spec.ts';
import { TranscriptError } from '../transcript/transcript-error.ts';

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

/**
 * A configuration problem met while starting a run, as one line for the user; anything else
 * unchanged.
 *
 * @example
 * throw asUserError('runs/a.jsonl', error);
 */
export function asUserError(path: string, error: unknown): unknown {
  if (TranscriptError.isInstance(error)) return new UserError(error.message.split('\n')[0] ?? path);
  if (error instanceof ModelSpecError || error instanceof TypeError) {
    return new UserError(`${path}: ${error.message}`);
  }
  return error;
}
