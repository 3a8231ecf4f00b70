/**
 * `status --json` made from each run's own JSON, kept as text: for `status --database`, which
 * reads 100,000 runs and keeps a line of text for each instead of its objects (the objects of
 * every run held at once were most of its garbage collection). The text is the same as
 * `JSON.stringify(statusJson(roots, maxRevivals))` for the tree the parts describe. Pure.
 *
 * @module
 */
import { emptyStatusSummary, runJson, type StatusJson, statusExitCode } from './format-status.ts';
import type { RunNode, StatusState } from './run-node.ts';

/**
 * A run's own part of `status --json`: its JSON with no children (`"children":[]`, filled in
 * when the tree is written) and what the summary counts of it.
 *
 * @example
 * const part: StatusJsonPart = statusJsonPart(node);
 */
export interface StatusJsonPart {
  text: string;
  state: StatusState;
  /** The run's `resumeTokens`: its estimate when it is revivable, else 0. */
  resumeTokens: number;
}

/**
 * Where each run sits: the runs at the top, in order, and each run's children by index (in
 * order; undefined for none), indexes into the parts.
 *
 * @example
 * const forest: StatusForest = { roots: [0, 2], children: [[1]] };
 */
export interface StatusForest {
  roots: readonly number[];
  children: readonly (readonly number[] | undefined)[];
}

/** What a run with no children has in its JSON, once: a string cannot hold it unescaped. */
const NO_CHILDREN = '"children":[]';

/**
 * The part of a run with no children (those of `node` are not looked at).
 *
 * @example
 * const part = statusJsonPart({ ...node, children: [] });
 */
export function statusJsonPart(node: RunNode): StatusJsonPart {
  const inspection = node.inspection;
  return {
    text: JSON.stringify(runJson({ ...node, children: [] })),
    state: node.state,
    resumeTokens: inspection.revivable ? inspection.estimatedTokens : 0,
  };
}

/**
 * The text of `status --json` for the runs of `parts` arranged as `forest`, in pieces (each
 * run's text is one; its children go between its `"children":[` and `]`), counting the summary
 * as it goes (and returning it): runs no root leads to are neither written nor counted, as in {@link statusJson}.
 * No recursion: a tree of any depth is written.
 *
 * @example
 * for (const piece of statusJsonFromParts(parts, { roots: [0], children: [] }, 3)) out.write(piece);
 */
export function* statusJsonFromParts(
  parts: readonly StatusJsonPart[],
  forest: StatusForest,
  maxRevivals: number,
): Generator<string, StatusJson['summary']> {
  const summary = emptyStatusSummary();
  yield `{"maxRevivals":${JSON.stringify(maxRevivals)},"runs":[`;
  let first = true;
  for (const root of forest.roots) {
    if (!first) yield ',';
    first = false;
    yield* treePieces(parts, forest.children, root, summary);
  }
  yield `],"summary":${JSON.stringify(summary)},"exitCode":${statusExitCode(summary)}}`;
  return summary;
}

function* treePieces(
  parts: readonly StatusJsonPart[],
  children: StatusForest['children'],
  root: number,
  summary: StatusJson['summary'],
): Generator<string> {
  // Each open run: its index, the next of its children to write, where its `]` of children is.
  const stack: { index: number; next: number; close: number }[] = [];
  const open = (index: number): string => {
    const part = parts[index] as StatusJsonPart;
    summary.total += 1;
    summary[part.state] += 1;
    summary.resumeTokens += part.resumeTokens;
    if ((children[index]?.length ?? 0) === 0) return part.text;
    const close = part.text.lastIndexOf(NO_CHILDREN) + NO_CHILDREN.length - 1;
    stack.push({ index, next: 0, close });
    return part.text.slice(0, close);
  };
  yield open(root);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as (typeof stack)[number];
    const kids = children[frame.index] as readonly number[];
    if (frame.next < kids.length) {
      if (frame.next > 0) yield ',';
      frame.next += 1;
      yield open(kids[frame.next - 1] as number);
    } else {
      stack.pop();
      yield (parts[frame.index] as StatusJsonPart).text.slice(frame.close);
    }
  }
}
