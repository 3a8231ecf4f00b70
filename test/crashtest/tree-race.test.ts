import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runTreeRace } from '../../crashtest/tree-race.ts';

/*
 * The crashtest's tree race in a reduced form (`npm run crashtest` runs 200 rounds): 2–4
 * concurrent `llm-agent revive --yes` on a crashed three-level tree with joins pending at two
 * levels. Every round exactly one process revives the whole tree, every child's answer reaches
 * its parent's task_wait, no join is answered "running", no side effect runs twice, and the
 * others refuse naming the reviver.
 */

const seed = Number(process.env.SEED ?? Date.now());
const ROUNDS = Number(process.env.TREE_RACE_ROUNDS ?? 12);

test(`${ROUNDS} rounds of 2–4 revivers on one crashed three-level tree: one reviver each round (seed ${seed})`, async () => {
  console.log('seed', seed);
  const figures = await runTreeRace({ rounds: ROUNDS, workers: 4, seed });
  console.log(
    `tree race: ${figures.rounds} rounds, ${figures.processes} processes, ${figures.clean} clean; losers: ${[...figures.losers].map(([kind, count]) => `${kind} ×${count}`).join(', ')}`,
  );
  assert.deepEqual(figures.failures, []);
  assert.equal(figures.clean, ROUNDS);
  // The race really raced: some process was refused by the claim while the reviver held it.
  assert.ok((figures.losers.get('refused naming the holder') ?? 0) > 0, 'no loser met the claim');
});
