/**
 * `status --json` written as the runs arrive, for `status --database`, which reads 100,000 of
 * them: each run is decided and turned into its own line of JSON as its row comes, and a run
 * at the top whose tree is complete is written at once and forgotten — only the trees still
 * waiting for a run are kept, as text. Keeping every run's objects until the end was most of
 * the garbage collection, and keeping every run's text most of the rest. The text is the one
 * `JSON.stringify(statusJson(roots, maxRevivals))` makes of the same tree. Pure: the pieces go
 * to the function given.
 *
 * @module
 */
import { emptyStatusSummary, runJson, type StatusJson, statusExitCode } from './format-status.ts';
import type { RunNode, StatusState } from './run-node.ts';

/**
 * A run's own part of `status --json`: its JSON with no children (`"children":[]`, filled in
 * when its tree is written) and what the summary counts of it.
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

/** What a run with no children has in its JSON, once: a string cannot hold it unescaped. */
const NO_CHILDREN = '"children":[]';

/**
 * The part of a run, its children left out (those of `node` are not looked at).
 *
 * @example
 * const part = statusJsonPart(node);
 */
export function statusJsonPart(node: RunNode): StatusJsonPart {
  const inspection = node.inspection;
  return {
    text: JSON.stringify(runJson(node.children.length === 0 ? node : { ...node, children: [] })),
    state: node.state,
    resumeTokens: inspection.revivable ? inspection.estimatedTokens : 0,
  };
}

/**
 * `status --json` made from runs given one at a time in the order of their names, each with
 * its parent and how many children it has: the runs at the top in that order, each child
 * under its parent in that order — the tree `databaseTree` makes. A run's tree is written once
 * every run in it has come and been decided; until then it waits, as do the trees after it.
 * A run whose parent never comes is written at the top at the end (a store's foreign key
 * keeps that from happening); runs whose parents form a loop are neither written nor counted,
 * as in `statusJson`, where no run at the top leads to them.
 *
 * @example
 * const stream = new StatusJsonStream((piece) => out.write(piece), 3);
 * stream.add('main', null, 1, statusJsonPart(mainNode));
 * stream.add('main.agents/a', 'main', 0, statusJsonPart(childNode));
 * const summary = stream.end();
 */
export class StatusJsonStream {
  readonly #write: (piece: string) => void;
  readonly #summary = emptyStatusSummary();
  /** The runs at the top not written yet, in order, from `#head` on. */
  readonly #roots: string[] = [];
  #head = 0;
  #wroteOne = false;
  /** The runs kept until their tree is written: their parts, children and parents. */
  readonly #parts = new Map<string, StatusJsonPart>();
  readonly #children = new Map<string, string[]>();
  readonly #parentOf = new Map<string, string>();
  /** For each run not complete yet: its part if not decided, plus its children not complete. */
  readonly #open = new Map<string, number>();
  /** Children complete before their parent came, by parent. */
  readonly #doneEarly = new Map<string, number>();
  readonly #arrived = new Set<string>();

  constructor(write: (piece: string) => void, maxRevivals: number) {
    this.#write = write;
    write(`{"maxRevivals":${JSON.stringify(maxRevivals)},"runs":[`);
  }

  /**
   * A run, in the order of the runs: `parent` null for one at the top, `children` how many
   * runs name it as their parent, `part` null when it is decided later ({@link decided}).
   */
  add(run: string, parent: string | null, children: number, part: StatusJsonPart | null): void {
    if (parent === null && children === 0 && part !== null && this.#head === this.#roots.length) {
      // Nothing waits before it and nothing is to come under it: written now, kept nowhere.
      this.#writeTree(run, part);
      return;
    }
    this.#arrived.add(run);
    if (part !== null) this.#parts.set(run, part);
    if (parent === null) this.#roots.push(run);
    else {
      this.#parentOf.set(run, parent);
      const siblings = this.#children.get(parent);
      if (siblings === undefined) this.#children.set(parent, [run]);
      else siblings.push(run);
    }
    const open = (part === null ? 1 : 0) + children - (this.#doneEarly.get(run) ?? 0);
    this.#doneEarly.delete(run);
    if (open > 0) this.#open.set(run, open);
    else this.#complete(run);
    this.#flush();
  }

  /** The part of a run added without one. */
  decided(run: string, part: StatusJsonPart): void {
    this.#parts.set(run, part);
    this.#settle(run);
    this.#flush();
  }

  /** Write the trees still waiting and the end; the summary of what was written. */
  end(): StatusJson['summary'] {
    // Only runs whose parent never came (or a part never decided) are still waiting.
    for (const [run, parent] of this.#parentOf) {
      if (!this.#arrived.has(parent) && this.#parts.has(run)) this.#roots.push(run);
    }
    for (; this.#head < this.#roots.length; this.#head += 1) {
      this.#writeTree(this.#roots[this.#head] as string);
    }
    const summary = this.#summary;
    this.#write(`],"summary":${JSON.stringify(summary)},"exitCode":${statusExitCode(summary)}}`);
    return summary;
  }

  /** One of `run`'s open counts is done. */
  #settle(run: string): void {
    const open = (this.#open.get(run) ?? 1) - 1;
    if (open > 0) this.#open.set(run, open);
    else this.#complete(run);
  }

  /** `run`'s tree is complete: so is one more child of its parent's. */
  #complete(run: string): void {
    this.#open.delete(run);
    const parent = this.#parentOf.get(run);
    if (parent === undefined) return;
    if (this.#arrived.has(parent)) this.#settle(parent);
    else this.#doneEarly.set(parent, (this.#doneEarly.get(parent) ?? 0) + 1);
  }

  /** Write the trees at the top that are complete, in order, up to the first that is not. */
  #flush(): void {
    while (this.#head < this.#roots.length) {
      const root = this.#roots[this.#head] as string;
      if (this.#open.has(root)) return;
      this.#head += 1;
      this.#writeTree(root);
    }
    this.#roots.length = 0;
    this.#head = 0;
  }

  /** A tree, each run counted and forgotten as it is written; no recursion, for any depth. */
  #writeTree(root: string, rootPart?: StatusJsonPart): void {
    if (this.#wroteOne) this.#write(',');
    this.#wroteOne = true;
    const stack: TreeFrame[] = [];
    this.#writeRun(root, rootPart ?? (this.#parts.get(root) as StatusJsonPart), stack);
    while (stack.length > 0) {
      const frame = stack[stack.length - 1] as TreeFrame;
      if (frame.next < frame.children.length) {
        if (frame.next > 0) this.#write(',');
        const child = frame.children[frame.next] as string;
        frame.next += 1;
        this.#writeRun(child, this.#parts.get(child) as StatusJsonPart, stack);
      } else {
        stack.pop();
        this.#write(frame.text.slice(frame.close));
      }
    }
  }

  /** Count and write a run: whole when it has no children, else up to them (pushed on `stack`). */
  #writeRun(run: string, part: StatusJsonPart, stack: TreeFrame[]): void {
    this.#summary.total += 1;
    this.#summary[part.state] += 1;
    this.#summary.resumeTokens += part.resumeTokens;
    const children = this.#children.get(run);
    this.#parts.delete(run);
    this.#parentOf.delete(run);
    this.#arrived.delete(run);
    this.#children.delete(run);
    if (children === undefined) {
      this.#write(part.text);
      return;
    }
    const close = part.text.lastIndexOf(NO_CHILDREN) + NO_CHILDREN.length - 1;
    this.#write(part.text.slice(0, close));
    stack.push({ text: part.text, children, next: 0, close });
  }
}

/** A run being written whose children are: the next to write, where its `]` of them is. */
interface TreeFrame {
  text: string;
  children: readonly string[];
  next: number;
  close: number;
}
