/**
 * Whether a value parsed from a session file is a plain JSON object (not null, not an array).
 *
 * @example
 * if (isObject(line.value) && line.value.type === 'session') console.log('a pi header');
 */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A value from a session file, fit for a message: as JSON (so control characters and bidi
 * marks are escaped), cut at 40 characters.
 *
 * @example
 * shown('2.1.\u001b[31m'); // '"2.1.\\u001b[31m"'
 */
export function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
