import assert from 'node:assert/strict';
import { test } from 'node:test';
import { layerViolations, violations } from '../../scripts/check-layers.ts';

/* The layer check of `npm run check` (scripts/check-layers.ts): it holds, and it can fail. */

test('every import in src/ points down the layers', async () => {
  assert.deepEqual(await layerViolations(), []);
});

test('the check finds what it forbids (it can fail)', () => {
  assert.deepEqual(violations('transcript/x.ts', "import { Loop } from '../loop/loop.ts';"), [
    'transcript/x.ts: imports ../loop/loop.ts (transcript may not import loop)',
  ]);
  assert.equal(
    violations('loop/x.ts', "const m = await import('../store/file-store.ts');").length,
    1,
    'a sibling, dynamically',
  );
  assert.equal(violations('revival/x.ts', "import { main } from '../cli/main.ts';").length, 1);
  assert.equal(violations('store/x.ts', "import { APICallError } from 'ai';").length, 1);
  assert.deepEqual(violations('cli/x.ts', "import { Worker } from '../fleet/worker.ts';"), []);
  assert.deepEqual(
    violations('runs/x.ts', "import { plural } from '../render/format-status.ts';"),
    [],
  );
  assert.deepEqual(
    violations('render/x.ts', "import { inspectTree } from '../runs/inspect-tree.ts';"),
    ['render/x.ts: imports ../runs/inspect-tree.ts (render may not import runs)'],
  );
  assert.equal(violations('runs/x.ts', "import { main } from '../cli/main.ts';").length, 1);
  assert.deepEqual(violations('loop/x.ts', "import { APICallError } from 'ai';"), []);
  assert.deepEqual(violations('cli/x.ts', "import { ScriptedModel } from '../testing/index.ts';"), [
    'cli/x.ts: imports ../testing/index.ts (testing is for tests; no layer imports it)',
  ]);
  assert.deepEqual(
    violations('testing/x.ts', "import type { FileSystem } from '../transcript/file-system.ts';"),
    [],
  );
});
