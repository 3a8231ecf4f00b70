/**
 * One line about an error, with the system's code when it has one.
 *
 * @example
 * describeError(Object.assign(new Error('no space left'), { code: 'ENOSPC' }));
 * // 'ENOSPC: no space left'
 */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Node's own file-system errors start with their code already.
    if (code === undefined || error.message.startsWith(`${code}:`)) return error.message;
    return `${code}: ${error.message}`;
  }
  return String(error);
}
