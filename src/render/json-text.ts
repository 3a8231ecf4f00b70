/**
 * `--json` output as text: indented for a person at a terminal, one line when it goes to a pipe
 * or a file, where a program reads it (`jq` indents it again). Over the 10,000 runs of the
 * status benchmark the indentation was 2 of the 6.7 MB and a third of the formatting time.
 * Exact whatever the depth: a value nested too deep for `JSON.stringify` (which recurses, and
 * throws a RangeError near 10,000 levels) is written by {@link serializeJson} instead, on one
 * line even for a terminal (indenting 100,000 levels would take billions of spaces).
 *
 * @example
 * io.stdout.write(`${jsonText(statusJson(roots, 3), io.stdout)}\n`);
 */
export function jsonText(value: unknown, stream: NodeJS.WritableStream): string {
  const indent = (stream as { isTTY?: boolean }).isTTY === true ? 2 : 0;
  try {
    return indent === 0 ? JSON.stringify(value) : JSON.stringify(value, null, indent);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return serializeJson(value);
  }
}

/**
 * Options of {@link serializeJson}.
 *
 * @example
 * serializeJson(value, { indent: 2, maxDepth: 64 });
 */
export interface SerializeJsonOptions {
  /** Spaces per level, as `JSON.stringify`'s third argument (default 0: one line). */
  indent?: number;
  /**
   * Containers nested deeper than this are replaced by a marker saying so (the text is then
   * no longer JSON: for people). Default: no limit.
   */
  maxDepth?: number;
}

/** One open array or object while serialising. */
interface Frame {
  close: string;
  /** The entries still to write: an array's items, or an object's [key, value] pairs. */
  entries: [string | null, unknown][];
  next: number;
  depth: number;
}

/**
 * JSON text for data (objects, arrays, strings, numbers, booleans, null: what `JSON.parse`
 * gives), without recursion, so that no depth of nesting overflows the stack. The same text
 * as `JSON.stringify(value, null, indent)` for such data (`toJSON` and replacers are not
 * supported); `maxDepth` cuts deeper containers with the marker
 * `… (truncated: nested deeper than N)`.
 *
 * @example
 * serializeJson({ a: [1, 'x'] }); // '{"a":[1,"x"]}'
 * serializeJson([[[1]]], { maxDepth: 2 }); // '[[… (truncated: nested deeper than 2)]]'
 */
export function serializeJson(value: unknown, options: SerializeJsonOptions = {}): string {
  const indent = ' '.repeat(options.indent ?? 0);
  const maxDepth = options.maxDepth ?? Number.POSITIVE_INFINITY;
  const out: string[] = [];
  const stack: Frame[] = [];
  const newline = (depth: number): string => (indent === '' ? '' : `\n${indent.repeat(depth)}`);
  const colon = indent === '' ? ':' : ': ';
  // Writes a scalar, or opens a container (pushing its frame).
  const open = (item: unknown, depth: number): void => {
    if (item === null || typeof item !== 'object') {
      out.push(JSON.stringify(item) ?? 'null');
      return;
    }
    const isArray = Array.isArray(item);
    if (depth >= maxDepth) {
      out.push(`… (truncated: nested deeper than ${maxDepth})`);
      return;
    }
    const entries: [string | null, unknown][] = isArray
      ? (item as unknown[]).map((element) => [null, element])
      : Object.entries(item).filter(([, member]) => !skippedMember(member));
    if (entries.length === 0) {
      out.push(isArray ? '[]' : '{}');
      return;
    }
    out.push(isArray ? '[' : '{');
    stack.push({ close: isArray ? ']' : '}', entries, next: 0, depth: depth + 1 });
  };
  open(value, 0);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as Frame;
    if (frame.next === frame.entries.length) {
      stack.pop();
      out.push(newline(frame.depth - 1), frame.close);
      continue;
    }
    const [key, item] = frame.entries[frame.next] as [string | null, unknown];
    if (frame.next > 0) out.push(',');
    frame.next += 1;
    out.push(newline(frame.depth));
    if (key !== null) out.push(JSON.stringify(key), colon);
    open(skippedMember(item) ? null : item, frame.depth);
  }
  return out.join('');
}

/** What `JSON.stringify` leaves out of an object (and writes as null in an array). */
function skippedMember(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}
