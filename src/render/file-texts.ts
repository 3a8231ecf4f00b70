/**
 * A tool's input or output split into what a person reads as text and what they read as data:
 * `write_file`'s `{ "path": "a.ts", "content": "line 1\nline 2\n…" }` is a path (data) and a
 * file (text, shown with its lines numbered), not one JSON string full of `\n`.
 *
 * @module
 */
import type { JsonValue } from '../transcript/records.ts';

/**
 * One piece of a value as a page shows it: data as JSON, or a text (a file's contents, a
 * command's output) shown as numbered lines, with the key it was under, if any.
 *
 * @example
 * const piece: ValuePiece = { kind: 'lines', key: 'content', text: 'a\nb' };
 */
export type ValuePiece =
  | { kind: 'json'; value: JsonValue }
  | { kind: 'lines'; key?: string; text: string };

/** A string output longer than this is not tried as JSON (it is shown as text). */
const PARSE_LIMIT = 1_000_000;

/**
 * The pieces of a tool's value: an object's string fields that hold more than one line become
 * texts of their own (in the object's order), the rest stays data; a string holding more than
 * one line is a text; a string that is a JSON object or array is that data, split the same way.
 * Anything else is one piece of data.
 *
 * @example
 * fileTexts({ path: 'a.ts', content: 'x\ny' });
 * // [{ kind: 'json', value: { path: 'a.ts' } }, { kind: 'lines', key: 'content', text: 'x\ny' }]
 */
export function fileTexts(value: JsonValue): ValuePiece[] {
  if (typeof value === 'string') {
    const parsed = jsonIn(value);
    if (parsed !== undefined) return fileTexts(parsed);
    return value.includes('\n') ? [{ kind: 'lines', text: value }] : [{ kind: 'json', value }];
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return [{ kind: 'json', value }];
  }
  const rest: { [key: string]: JsonValue } = {};
  const texts: ValuePiece[] = [];
  for (const [key, field] of Object.entries(value)) {
    if (typeof field === 'string' && field.includes('\n'))
      texts.push({ kind: 'lines', key, text: field });
    else rest[key] = field;
  }
  if (texts.length === 0) return [{ kind: 'json', value }];
  return Object.keys(rest).length === 0 ? texts : [{ kind: 'json', value: rest }, ...texts];
}

/** The object or array a string holds as JSON text, or undefined. */
function jsonIn(text: string): JsonValue | undefined {
  if (text.length > PARSE_LIMIT) return undefined;
  const start = text.trimStart().charAt(0);
  if (start !== '{' && start !== '[') return undefined;
  try {
    const parsed = JSON.parse(text) as JsonValue;
    return parsed !== null && typeof parsed === 'object' ? parsed : undefined;
  } catch {
    return undefined;
  }
}
