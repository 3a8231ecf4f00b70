import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  importCycles,
  importsOf,
  longFunctions,
  MAX_FUNCTION_LINES,
  shapeProblems,
} from '../../scripts/check-shape.ts';

/*
 * scripts/check-shape.ts, run by `npm run check`: it catches a function over the limit and an
 * import cycle, and src/ as it is passes.
 */

/** A function of exactly `lines` lines, in one of the shapes src/ writes them. */
function functionOf(lines: number, shape: 'declaration' | 'arrow' | 'method'): string {
  const body = Array.from({ length: lines - 2 }, (_, index) => `  void ${index};`).join('\n');
  switch (shape) {
    case 'declaration':
      return `export function long(): void {\n${body}\n}\n`;
    case 'arrow':
      return `const long = (): void => {\n${body}\n};\n`;
    case 'method':
      return `const run = {\n  long(): void {\n${body}\n  },\n};\n`;
  }
}

test('a function one line over the limit is caught, in each shape; one at the limit is not', () => {
  for (const shape of ['declaration', 'arrow', 'method'] as const) {
    const over = longFunctions('x/long.ts', functionOf(MAX_FUNCTION_LINES + 1, shape));
    assert.equal(over.length, 1, shape);
    assert.equal(over[0]?.key, 'x/long.ts: long');
    assert.equal(over[0]?.lines, MAX_FUNCTION_LINES + 1);
    assert.deepEqual(longFunctions('x/ok.ts', functionOf(MAX_FUNCTION_LINES, shape)), [], shape);
  }
});

test('an import cycle is caught, through dynamic and type imports too; a chain is not', () => {
  assert.deepEqual(importsOf('loop/a.ts', "import type { B } from '../store/b.ts';"), [
    'store/b.ts',
  ]);
  const cycle = new Map([
    ['loop/a.ts', importsOf('loop/a.ts', "import type { B } from './b.ts';")],
    ['loop/b.ts', importsOf('loop/b.ts', "const c = await import('./c.ts');")],
    ['loop/c.ts', importsOf('loop/c.ts', "import { a } from './a.ts';")],
    ['loop/d.ts', importsOf('loop/d.ts', "import { a } from './a.ts';")],
  ]);
  assert.deepEqual(importCycles(cycle), ['loop/a.ts → loop/b.ts → loop/c.ts']);
  const chain = new Map([
    ['loop/a.ts', ['loop/b.ts']],
    ['loop/b.ts', ['loop/c.ts']],
    ['loop/c.ts', []],
  ]);
  assert.deepEqual(importCycles(chain), []);
});

test('src/ as it is passes, with no exception', async () => {
  assert.deepEqual(await shapeProblems(), []);
});
