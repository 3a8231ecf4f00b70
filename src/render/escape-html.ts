/**
 * The one way text from a transcript becomes HTML: element text, never markup.
 *
 * @module
 */
import { terminalSafeLines } from './terminal-safe.ts';

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Text from a transcript as HTML element text: control and invisible format characters shown
 * escaped (as {@link terminalSafeLines} does: newlines and tabs kept), then `& < > " '` as
 * character references. The one way any transcript string reaches a page.
 *
 * @example
 * escapeHtml('<img src=x onerror="a()">\u202e'); // '&lt;img src=x onerror=&quot;a()&quot;&gt;\\u202e'
 */
export function escapeHtml(text: string): string {
  return terminalSafeLines(text).replace(/[&<>"']/g, (char) => ENTITIES[char] as string);
}
