import { createHash } from 'node:crypto';
import type { JsonValue } from '../transcript/records.ts';

/**
 * JSON with object members sorted by key at every depth, so that the same input always has the
 * same text (and so the same digest) whatever order a model wrote its members in.
 *
 * @example
 * canonicalJson({ b: 1, a: [true, null] }); // '{"a":[true,null],"b":1}'
 */
export function canonicalJson(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    const members = keys.flatMap((key) => {
      const member = value[key];
      return member === undefined ? [] : [`${JSON.stringify(key)}:${canonicalJson(member)}`];
    });
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The digest a `tool-dispatched` record carries: `sha256:` and the hex SHA-256 of the input's
 * canonical JSON. It lets a reader compare inputs without the transcript storing them twice.
 *
 * @example
 * inputDigest({ path: 'a.txt' }); // 'sha256:…' (64 hex digits)
 */
export function inputDigest(input: JsonValue): string {
  return `sha256:${createHash('sha256').update(canonicalJson(input)).digest('hex')}`;
}
