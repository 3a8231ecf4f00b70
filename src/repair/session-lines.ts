import type { ForeignLine } from './foreign-format.ts';

/**
 * A session file's bytes as lines: split on `\n` only (Claude Code writes raw U+2028 inside
 * strings), each parsed as JSON when it is (a line that is not stays, with `value` undefined:
 * the clients skip such lines). A last line without its newline is torn — never data, its
 * offset in `tornAt` — unless it parses as a whole JSON object (`unterminated`): a process can
 * die between writing a record and its newline, and the clients read that record.
 *
 * @example
 * const { lines, tornAt } = sessionLines(Buffer.from('{"type":"session"}\n{"typ'));
 * // lines: one, tornAt: 19
 */
export function sessionLines(data: Buffer): {
  lines: ForeignLine[];
  tornAt: number | null;
  unterminated: boolean;
} {
  const lastNewline = data.lastIndexOf(0x0a);
  let tornAt: number | null = lastNewline === data.length - 1 ? null : lastNewline + 1;
  let unterminated = false;
  if (tornAt !== null && isObject(parsed(data.toString('utf8', tornAt)))) {
    unterminated = true;
    tornAt = null;
  }
  const lines: ForeignLine[] = [];
  let number = 0;
  for (let start = 0; start < data.length && (tornAt === null || start < tornAt); ) {
    const found = data.indexOf(0x0a, start);
    const end = found === -1 ? data.length : found;
    number += 1;
    const text = data.toString('utf8', start, end);
    lines.push({ number, text, value: parsed(text) });
    start = end + 1;
  }
  return { lines, tornAt, unterminated };
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null;
}
