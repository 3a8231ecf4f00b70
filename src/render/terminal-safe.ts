/**
 * Text from a transcript or a model, made harmless for a terminal. Such text is untrusted: a
 * label, an agent type, a tool name or a message can carry escape sequences that clear the
 * screen (`ESC[2J`), plant a hyperlink that shows one address and opens another (OSC 8), write
 * the clipboard (OSC 52), rewind the line to overwrite what was printed (`\r`), or reorder what
 * a person reads (bidi overrides such as U+202E). Every such character is shown escaped
 * (`\x1b`, `\r`, `\u202e`, `\U000e0041`), so the person sees that it was there and the terminal acts on
 * none of it. Escaping the ESC (or C1) that starts a sequence is enough to neutralise all of
 * it: the rest of the sequence is then ordinary printable text.
 *
 * Shown escaped: C0 and C1 control characters and DEL (`\p{Cc}`); format characters
 * (`\p{Cf}`: bidi embeddings, overrides, isolates and marks, zero-width space, word joiner,
 * soft hyphen, byte-order mark, tag characters) except the zero-width joiner and non-joiner,
 * which emoji sequences and Persian and Indic scripts need and which move nothing; the line
 * and paragraph separators U+2028 and U+2029; lone surrogates (a string that is not valid
 * UTF-16, which a terminal would see as U+FFFD); and the Hangul fillers, letters that print as
 * nothing. Backslashes are left as they are: the point is that no byte reaches the terminal
 * that it would act on, not that the text can be decoded back (`--json` is exact).
 *
 * Our own colour codes are added after this, around text already made safe.
 *
 * @module
 */

const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\u115F\u1160\u3164\uFFA0]/gu;
const ZERO_WIDTH_NON_JOINER = '\u200c';
const ZERO_WIDTH_JOINER = '\u200d';

/**
 * Text for one field of one line: every control or invisible format character shown escaped,
 * newlines and tabs included.
 *
 * @example
 * terminalSafe('evil\u001b[2J\u202eexe.txt'); // 'evil\\x1b[2J\\u202eexe.txt'
 * terminalSafe('two\nlines'); // 'two\\nlines'
 */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (char) => escapeChar(char, false));
}

/**
 * Text laid out over lines (a message, reasoning): as {@link terminalSafe}, but newlines and
 * tabs are kept, since they only move the cursor down and forward. A carriage return is still
 * escaped: it would move the cursor back over text already printed.
 *
 * @example
 * terminalSafeLines('line 1\nline 2\r\u0007'); // 'line 1\nline 2\\r\\x07'
 */
export function terminalSafeLines(text: string): string {
  return text.replace(UNSAFE, (char) => escapeChar(char, true));
}

function escapeChar(char: string, keepLayout: boolean): string {
  switch (char) {
    case ZERO_WIDTH_JOINER:
    case ZERO_WIDTH_NON_JOINER:
      return char;
    case '\n':
      return keepLayout ? char : '\\n';
    case '\t':
      return keepLayout ? char : '\\t';
    case '\r':
      return '\\r';
  }
  const code = char.codePointAt(0) ?? 0;
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\U${code.toString(16).padStart(8, '0')}`;
}
