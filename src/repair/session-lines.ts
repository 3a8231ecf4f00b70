import type { ForeignLine } from './foreign-format.ts';

/**
 * A session file's bytes as lines: split on `\n` only (Claude Code writes raw U+2028 inside
 * strings), each parsed as JSON when it is (a line that is not stays, with `value` undefined:
 * the clients skip such lines). A last line without its newline is torn — never data, its
 * offset in `tornAt` — unless it parses as a whole JSON object (`unterminated`): a process can
 * die between writing a record and its newline, and the clients read that record.
 *
 * The lines are made when they are read, from `data`: what is held is the bytes and one
 * number a line, never every line's text and value at once (a session of millions of tiny
 * lines held them all: 18 MB took 400 MB, and more). Each read of a line parses it again, and
 * gives a new object: a format keeps only the lines it needs.
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
  // Where each line starts; it ends where the next starts, less its newline (or at `end`).
  const end = tornAt ?? data.length;
  let starts = new Float64Array(1024);
  let count = 0;
  for (let start = 0; start < end; ) {
    if (count === starts.length) {
      const grown = new Float64Array(starts.length * 2);
      grown.set(starts);
      starts = grown;
    }
    starts[count] = start;
    count += 1;
    const found = data.indexOf(0x0a, start);
    start = found === -1 || found >= end ? end + 1 : found + 1;
  }
  const line = (index: number): ForeignLine => {
    const next = index + 1 < count ? (starts[index + 1] as number) - 1 : lastEnd(data, end);
    const text = data.toString('utf8', starts[index], next);
    return { number: index + 1, text, value: parsed(text) };
  };
  return { lines: linesMadeWhenRead(count, line), tornAt, unterminated };
}

/** Where the last line before `end` ends: before its newline, if it has one. */
function lastEnd(data: Buffer, end: number): number {
  return end > 0 && data[end - 1] === 0x0a ? end - 1 : end;
}

/**
 * An array of `count` lines, each made by `line` when it is read (by index, by iteration, or
 * by any array method): read-only, nothing kept.
 */
function linesMadeWhenRead(count: number, line: (index: number) => ForeignLine): ForeignLine[] {
  const target: ForeignLine[] = [];
  target.length = count;
  const indexOf = (key: string | symbol): number | undefined => {
    if (typeof key !== 'string') return undefined;
    const index = Number(key);
    return Number.isInteger(index) && index >= 0 && index < count && String(index) === key
      ? index
      : undefined;
  };
  return new Proxy(target, {
    get(array, key, receiver) {
      const index = indexOf(key);
      return index === undefined ? Reflect.get(array, key, receiver) : line(index);
    },
    has(array, key) {
      return indexOf(key) !== undefined || Reflect.has(array, key);
    },
    getOwnPropertyDescriptor(array, key) {
      const index = indexOf(key);
      if (index === undefined) return Reflect.getOwnPropertyDescriptor(array, key);
      return { value: line(index), writable: false, enumerable: true, configurable: true };
    },
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  });
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
