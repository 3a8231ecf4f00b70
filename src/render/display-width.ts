/**
 * How many terminal columns text takes, so that columns line up when a label is written in
 * Chinese, Japanese or Korean, or holds an emoji.
 *
 * Per grapheme cluster (what a person sees as one character, split by `Intl.Segmenter`): 0 for
 * a cluster of only combining marks, format characters, default-ignorable characters and
 * Hangul vowel jamo (which join the syllable before them); 2 for an emoji shown as a picture
 * (emoji presentation, an emoji followed by VS16, a flag); otherwise the East Asian Width of
 * its first code point: 2 for wide and fullwidth, 1 for everything else (ambiguous is narrow,
 * as Unicode advises when the context is unknown). The East Asian Width table comes from
 * `get-east-asian-width` (no dependencies, about 5 KB of ranges kept in step with each Unicode
 * release), rather than a table of our own that would age. Terminals disagree at the edges
 * (some emoji sequences, ambiguous characters in CJK locales); this is what most modern ones do.
 *
 * @module
 */
import { eastAsianWidth } from 'get-east-asian-width';

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const ZERO_WIDTH =
  /^[\p{Mn}\p{Me}\p{Cf}\p{Cc}\p{Default_Ignorable_Code_Point}\u1160-\u11ff\ud7b0-\ud7ff]+$/u;
const PICTURE_EMOJI = /\p{Emoji_Presentation}|\p{Emoji}\ufe0f|\p{Regional_Indicator}/u;
/** Made when first needed: loading its data costs a read-only command's start-up 15 ms. */
let segmenter: Intl.Segmenter | undefined;

function graphemesOf(text: string): Intl.Segments {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  return segmenter.segment(text);
}

/**
 * The number of columns `text` takes on a terminal (text without escape sequences: make it
 * safe with `terminalSafe` and strip colour first).
 *
 * @example
 * displayWidth('main'); // 4
 * displayWidth('報告書'); // 6
 * displayWidth('e\u0301'); // 1 (e and a combining acute accent)
 * displayWidth('🚀'); // 2
 */
export function displayWidth(text: string): number {
  if (PRINTABLE_ASCII.test(text)) return text.length;
  let width = 0;
  for (const { segment } of graphemesOf(text)) width += clusterWidth(segment);
  return width;
}

function clusterWidth(cluster: string): number {
  if (ZERO_WIDTH.test(cluster)) return 0;
  if (PICTURE_EMOJI.test(cluster)) return 2;
  return eastAsianWidth(cluster.codePointAt(0) ?? 0);
}

/**
 * `text` cut to at most `maxWidth` columns, ending in `…` when it was cut (at a grapheme
 * boundary, so no character is split): for table cells whose text a transcript controls.
 *
 * @example
 * fitWidth('報告書を書く', 7); // '報告書…'
 * fitWidth('short', 40); // 'short'
 */
export function fitWidth(text: string, maxWidth: number): string {
  // No cluster is wider than 2 columns nor shorter than one code unit.
  if (text.length * 2 <= maxWidth) return text;
  let width = 0;
  let cutAt = -1;
  // Stops a little past maxWidth columns, however long the text.
  for (const { segment, index } of graphemesOf(text)) {
    const next = clusterWidth(segment);
    if (cutAt === -1 && width + next > maxWidth - 1) cutAt = index;
    width += next;
    if (width > maxWidth) return `${text.slice(0, cutAt)}…`;
  }
  return text;
}
