import { StreamedLines, sessionTail } from './streamed-lines.ts';

/**
 * A session's bytes, already in memory, as `repair` reads a file: the same streamed lines
 * (split on `\n` only, each parsed as JSON when it is, read again in chunks for every pass) and
 * the same tail — a last line without its newline is torn, never data, its offset in
 * `tornAt`, unless it parses as a whole JSON object (`unterminated`). For tests and tools that
 * hold a session already; `repairSession` reads the file itself, never whole.
 *
 * @example
 * const { lines, tornAt } = sessionLines(Buffer.from('{"type":"session"}\n{"typ'));
 * // [...lines]: one line, tornAt: 19
 */
export function sessionLines(data: Buffer): {
  lines: StreamedLines;
  tornAt: number | null;
  unterminated: boolean;
} {
  const readAt = (buffer: Buffer, position: number): number =>
    data.copy(buffer, 0, position, position + buffer.length);
  const { tornAt, unterminated } = sessionTail(readAt, data.length);
  return {
    lines: new StreamedLines(readAt, data.length, tornAt ?? data.length),
    tornAt,
    unterminated,
  };
}
