/**
 * A run's branch of a large tree: what a run's page of a tree of many runs shows above the run,
 * instead of every run of the tree.
 *
 * @module
 */
import type { RunNode } from '../render/run-node.ts';

/**
 * The roots of a tree cut down to `target`'s branch: the runs that led to it (each with only
 * the next one as its child), the run itself and its children (without theirs). The nodes
 * are copies; the tree is not changed. Undefined when `target` is not in the tree.
 *
 * @example
 * const branch = runBranch(roots, shown); // [root → … → parent → shown → its children]
 */
export function runBranch(roots: readonly RunNode[], target: RunNode): RunNode[] | undefined {
  const path = pathTo(roots, target);
  if (path === undefined) return undefined;
  let branch: RunNode = {
    ...target,
    children: target.children.map((child) => ({ ...child, children: [] })),
  };
  for (let index = path.length - 2; index >= 0; index -= 1) {
    branch = { ...(path[index] as RunNode), children: [branch] };
  }
  return [branch];
}

/** The runs from a root down to `target`, both included (depth first, without recursion). */
function pathTo(roots: readonly RunNode[], target: RunNode): RunNode[] | undefined {
  const stack: RunNode[][] = roots.map((root) => [root]);
  while (stack.length > 0) {
    const path = stack.pop() as RunNode[];
    const node = path[path.length - 1] as RunNode;
    if (node === target) return path;
    for (const child of node.children) stack.push([...path, child]);
  }
  return undefined;
}
