import type { ForeignFormatName, SessionLines } from './foreign-format.ts';
import { lineShape, shapeFingerprint } from './line-shape.ts';
import { SEEN_SHAPES } from './seen-shapes.ts';

/**
 * The first line that `repair --allow-newer` may not rely on: a line of the session, or one the
 * repair would append, whose shape ({@link lineShape}) the real-client tests never saw in a
 * session of a tested release of `format`. Null when every line is of a seen shape. A format
 * without a list of seen shapes has no line to rely on.
 *
 * @example
 * const unseen = unseenShape('codex', lines, plan.append);
 * if (unseen !== null) console.log(`refused: ${unseen}`);
 */
export function unseenShape(
  format: ForeignFormatName,
  lines: SessionLines,
  append: readonly string[],
): string | null {
  const seen = format === 'claude-code' || format === 'codex' ? SEEN_SHAPES[format] : undefined;
  if (seen === undefined) return `no line shapes of ${format} are known to repair`;
  const known = new Set(seen);
  for (const line of lines) {
    if (line.value === undefined) continue;
    const shape = lineShape(line.value);
    if (!known.has(shapeFingerprint(shape))) {
      return `line ${line.number} is of a shape the tests never saw: ${shortened(shape)}`;
    }
  }
  for (const [index, text] of append.entries()) {
    const shape = lineShape(JSON.parse(text));
    if (!known.has(shapeFingerprint(shape))) {
      return `appended line ${index + 1} (the repair's) is of a shape the tests never saw: ${shortened(shape)}`;
    }
  }
  return null;
}

function shortened(shape: string): string {
  return shape.length > 300 ? `${shape.slice(0, 300)}…` : shape;
}
