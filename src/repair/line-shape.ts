import { createHash } from 'node:crypto';

/** Objects this deep are shown as `{…}`: a tool's input or a usage breakdown may hold anything. */
const MAX_DEPTH = 3;

/**
 * The shape of one parsed session line: its keys (sorted) and the kinds of their values, three
 * objects deep (an array is the union of its items' shapes), with the value of every `type` and
 * `role` key spelled out, since they say what a line is. Text, ids and numbers are not part of
 * it. Two lines of one shape are written by the same code path of their client.
 *
 * @example
 * lineShape({ type: 'user', uuid: 'a', message: { role: 'user', content: 'hi' } });
 * // '{"message":{"content":string,"role"="user"},"type"="user","uuid":string}'
 */
export function lineShape(value: unknown): string {
  return shapeOf(value, 0);
}

/**
 * A short, stable fingerprint of a {@link lineShape} (16 hex digits of its SHA-256), as
 * `SEEN_SHAPES` lists them.
 *
 * @example
 * const seen = SEEN_SHAPES.codex.includes(shapeFingerprint(lineShape(value)));
 */
export function shapeFingerprint(shape: string): string {
  return createHash('sha256').update(shape).digest('hex').slice(0, 16);
}

function shapeOf(value: unknown, depth: number): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    const items = new Set(value.map((item) => shapeOf(item, depth)));
    return `[${[...items].sort().join('|')}]`;
  }
  if (typeof value === 'object') {
    if (depth >= MAX_DEPTH) return '{…}';
    const record = value as Record<string, unknown>;
    const fields = Object.keys(record)
      .sort()
      .map((key) => {
        const field = record[key];
        const literal = (key === 'type' || key === 'role') && typeof field === 'string';
        return literal
          ? `${JSON.stringify(key)}=${JSON.stringify(field)}`
          : `${JSON.stringify(key)}:${shapeOf(field, depth + 1)}`;
      });
    return `{${fields.join(',')}}`;
  }
  return typeof value;
}
