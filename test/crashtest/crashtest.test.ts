import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runScenarioImages } from '../../crashtest/crash-images.ts';
import { runFuzz } from '../../crashtest/fuzz.ts';
import type { BreachFigures } from '../../crashtest/invariants.ts';
import { runIoErrors } from '../../crashtest/io-errors.ts';
import { runLedgerKills } from '../../crashtest/ledger-kills.ts';
import { runReviverRace } from '../../crashtest/reviver-race.ts';
import { SCENARIOS } from '../../crashtest/scenarios.ts';
import { runSigkillLoop } from '../../crashtest/sigkill-loop.ts';
import { runWrapperKills } from '../../crashtest/wrapper-kills.ts';

/*
 * The reduced crashtest that runs with `npm test`: a sample of every part of `npm run
 * crashtest` (docs/crash-safety.md), each asserting that its faults fired and that no
 * invariant broke. The full run is `npm run crashtest`.
 */

const seed = Number(process.env.SEED ?? Date.now() % 2 ** 31);
console.log('crashtest seed', seed, `(replay with SEED=${seed})`);

const zero = (figures: BreachFigures) => {
  assert.deepEqual(
    {
      lost: figures.lost,
      doubled: figures.doubled,
      pairing: figures.pairing,
      throws: figures.throws,
      failed: figures.failed,
    },
    { lost: 0, doubled: 0, pairing: 0, throws: 0, failed: 0 },
  );
};

describe('crashtest (reduced)', { concurrency: false }, () => {
  for (const name of ['tree', 'torn-tail-repair']) {
    it(`crash images of ${name}: every sampled boundary, every fate`, {
      timeout: 240_000,
    }, async () => {
      const scenario = SCENARIOS.find((entry) => entry.name === name);
      assert.ok(scenario !== undefined);
      const breaches: string[] = [];
      const figures = await runScenarioImages(scenario, {
        seed,
        stride: 9,
        reorderedPerBoundary: 1,
        onBreach: (figure, line) => breaches.push(`${figure}: ${line}`),
      });
      assert.ok(figures.images >= 20, `only ${figures.images} images`);
      assert.ok(figures.revived > 0, 'no image was revived: the crashes proved nothing');
      assert.deepEqual(breaches.slice(0, 5), []);
      zero(figures);
    });
  }

  it('SIGKILL: real kills of a process running the tree, revived and checked', {
    timeout: 240_000,
  }, async () => {
    const figures = await runSigkillLoop({ kills: 4, lanes: 2, seed });
    assert.equal(figures.bySigkill, 4, 'every process died by SIGKILL');
    assert.deepEqual(figures.failures, []);
    zero(figures);
  });

  it('AI SDK: real kills of a process running a wrapped ToolLoopAgent, revived and checked', {
    timeout: 240_000,
  }, async () => {
    const figures = await runWrapperKills({ program: 'ai-sdk', kills: 4, lanes: 2, seed });
    assert.equal(figures.bySigkill, 4, 'every process died by SIGKILL');
    assert.ok(figures.revived > 0, 'no kill landed mid-run: the kills proved nothing');
    assert.deepEqual(figures.failures, []);
    zero(figures);
  });

  it('OpenAI Agents: real kills of a process running a wrapped OpenAI Agents JS run, revived and checked', {
    timeout: 240_000,
  }, async () => {
    const figures = await runWrapperKills({ program: 'openai-agents', kills: 4, lanes: 2, seed });
    assert.equal(figures.bySigkill, 4, 'every process died by SIGKILL');
    assert.ok(figures.revived > 0, 'no kill landed mid-run: the kills proved nothing');
    assert.deepEqual(figures.failures, []);
    zero(figures);
  });

  it('ledger kills: reconciles answer what the ledger says, the others fall back, nothing twice', {
    timeout: 240_000,
  }, async () => {
    const figures = await runLedgerKills({ kills: 8, lanes: 2, seed });
    assert.equal(figures.bySigkill, 8, 'every process died by SIGKILL');
    assert.deepEqual(figures.failures, []);
    assert.ok(figures.reconciled > 0, 'no call was reconciled: the kills proved nothing');
    zero(figures);
  });

  it('reviver races: exactly one of four processes wins each round', {
    timeout: 240_000,
  }, async () => {
    const figures = await runReviverRace({ rounds: 25, workers: 4, seed });
    assert.equal(figures.clean, 25, figures.failures.join('\n'));
    assert.equal(figures.losers.get('running'), 75);
  });

  it('I/O errors: fail the Nth call until the work completes, once and forever', {
    timeout: 600_000,
  }, async () => {
    const figures = await runIoErrors({
      long: false,
      works: ['parallel run'],
      faults: ['enospc', 'sync-fails', 'short-write'],
    });
    assert.ok(figures.fired > 10, `the fault fired in only ${figures.fired} runs`);
    assert.deepEqual(figures.failures.slice(0, 5), []);
    zero(figures);
  });

  it('fuzz: mutated transcripts into peek and inspect never throw and never write', {
    timeout: 240_000,
  }, async () => {
    const figures = await runFuzz({ cases: 3000, seed });
    assert.equal(figures.cases, 3000);
    assert.equal(figures.throws, 0, figures.failures.join('\n'));
    assert.equal(figures.writes, 0);
  });
});
