import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runDistributed } from '../../crashtest/distributed/driver.ts';

/*
 * The quick form of `npm run crashtest -- --distributed`: four worker processes on one
 * PostgreSQL, SIGKILLed, paused past their lease and cut off from the database at random, and
 * every invariant checked from the database and the ledger afterwards. The chaos must really
 * have happened: kills, pauses that became zombies, terminated connections, and zombie writes
 * refused by the fence.
 */

test('distributed crashtest, quick: kills, zombies and cut connections; nothing lost, doubled, replayed or revived twice', async () => {
  const seed = Number(process.env.SEED ?? Date.now() % 2 ** 31);
  console.log(`crashtest-distributed (quick): seed ${seed} (replay with SEED=${seed})`);
  const result = await runDistributed({
    seed,
    runs: 30,
    workers: 4,
    kills: 12,
    stops: 4,
    terminations: 10,
    leaseMs: 600,
    maxRevivals: 10,
    concurrency: 8,
    log: (line) => console.log(line),
  });
  const { figures, breaches } = result;
  console.log(JSON.stringify(figures));
  assert.deepEqual(
    { ...breaches, shortfalls: result.shortfalls },
    {
      lost: [],
      doubled: [],
      replayed: [],
      pairing: [],
      doubleRevived: [],
      failed: [],
      shortfalls: [],
    },
  );
  assert.ok(
    figures.kills >= 12 && figures.stops >= 4 && figures.terminations >= 10,
    'the chaos happened',
  );
  assert.ok(figures.fenced > 0, 'a zombie tried to write and was refused');
  assert.ok(figures.revivals > 0, 'runs were revived');
  assert.ok(figures.joins > 0, 'parents joined their children');
  assert.equal(figures.finished + figures.capped, figures.runs, 'every run ended');
});

test('distributed crashtest, quick, with reconciles: every call a reconcile settled agrees with the ledger', async () => {
  const seed = Number(process.env.SEED ?? Date.now() % 2 ** 31);
  console.log(
    `crashtest-distributed (quick, --reconcile): seed ${seed} (replay with SEED=${seed})`,
  );
  const result = await runDistributed({
    seed,
    runs: 30,
    workers: 4,
    kills: 12,
    stops: 4,
    terminations: 10,
    leaseMs: 600,
    maxRevivals: 10,
    concurrency: 8,
    reconcile: true,
    log: (line) => console.log(line),
  });
  const { figures, breaches } = result;
  console.log(JSON.stringify(figures));
  // A reconcile's answer that disagreed with the ledger is a `failed` breach.
  assert.deepEqual(
    { ...breaches, shortfalls: result.shortfalls },
    {
      lost: [],
      doubled: [],
      replayed: [],
      pairing: [],
      doubleRevived: [],
      failed: [],
      shortfalls: [],
    },
  );
  assert.ok(figures.kills >= 12, 'the chaos happened');
  assert.ok(figures.reconciled > 0, 'calls were settled by a reconcile, across workers');
  assert.equal(figures.finished + figures.capped, figures.runs, 'every run ended');
});
