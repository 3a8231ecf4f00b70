import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { exampleProblems } from '../../scripts/check-doc-examples.ts';
import { ROOT } from '../../scripts/compile-snippets.ts';

/* The example check of `npm run check` (scripts/check-doc-examples.ts): every @example of the
 * public API compiles, and the check fails on one that does not, naming file, line and name. */

test('every @example of the public API compiles', () => {
  const { examples, problems } = exampleProblems();
  assert.deepEqual(problems, []);
  // A floor, so that a check that silently finds nothing fails: 177 with the surface of 139 names.
  assert.ok(examples.length > 150, `only ${examples.length} examples found`);
});

/** A small package: an entry point re-exporting from a module, and a module it does not export. */
const SOURCE = `/**
 * The sum of some numbers.
 *
 * @example
 * const sum = await Promise.resolve(total([path.length, 2])); // top-level await, the prelude's path
 */
export function total(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0);
}

/**
 * Counts.
 *
 * @example
 * import { Counter } from 'fixture';
 * const counter: Counter = new Counter();
 */
export class Counter {
  count = 0;

  /**
   * Count one more.
   *
   * @example
   * new Counter().add();
   */
  add(): void {
    this.count += 1;
  }
}

/**
 * Not exported by the entry point, so its example is not compiled.
 *
 * @example
 * thisDoesNotExist();
 */
export function internal(): void {}
`;

test('a stale example fails the check at its file and line; a good one passes', (t) => {
  mkdirSync(join(ROOT, 'tmp'), { recursive: true });
  const folder = mkdtempSync(join(ROOT, 'tmp', 'doc-examples-'));
  t.after(() => rmSync(folder, { recursive: true, force: true }));
  writeFileSync(join(folder, 'index.ts'), "export { Counter, total } from './counter.ts';\n");
  const file = join(folder, 'counter.ts');
  const entry = new Map([['fixture', relative(ROOT, join(folder, 'index.ts'))]]);

  writeFileSync(file, SOURCE);
  const good = exampleProblems(entry);
  assert.deepEqual(good.problems, []);
  assert.deepEqual(good.examples.map((example) => example.name).sort(), [
    'Counter',
    'Counter.add',
    'total',
  ]);

  const stale = SOURCE.replace('new Counter().add();', 'new Counter().increment();');
  writeFileSync(file, stale);
  const line = stale.split('\n').findIndex((text) => text.includes('increment')) + 1;
  assert.deepEqual(exampleProblems(entry).problems, [
    `${relative(ROOT, file)}:${line}: Counter.add: @example does not compile: Property 'increment' does not exist on type 'Counter'.`,
  ]);
});
