import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunNode } from '../../src/render/run-node.ts';
import { runBranch } from '../../src/ui/run-branch.ts';

function node(path: string, children: RunNode[] = []): RunNode {
  return { path, children } as unknown as RunNode;
}

function shape(nodes: RunNode[]): unknown {
  return nodes.map((each) => [each.path, shape(each.children)]);
}

test("a run's branch: the runs that led to it, it and its children without theirs; the tree unchanged", () => {
  const grandchild = node('a/b/c', [node('a/b/c/d')]);
  const target = node('a/b', [grandchild, node('a/b/e')]);
  const roots = [node('a', [target, node('a/x', [node('a/x/y')])]), node('z')];
  const before = shape(roots);
  const branch = runBranch(roots, target);
  assert.deepEqual(shape(branch ?? []), [
    [
      'a',
      [
        [
          'a/b',
          [
            ['a/b/c', []],
            ['a/b/e', []],
          ],
        ],
      ],
    ],
  ]);
  assert.deepEqual(shape(roots), before, 'the tree is not changed');
  assert.deepEqual(shape(runBranch(roots, roots[1] as RunNode) ?? []), [['z', []]]);
  assert.equal(runBranch(roots, node('a/b')), undefined, 'a node of another tree');
});
