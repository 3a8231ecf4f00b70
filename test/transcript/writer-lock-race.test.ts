import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { Session } from '../../src/transcript/session.ts';
import { TranscriptError } from '../../src/transcript/transcript-error.ts';
import { type SessionWorker, startSessionWorker } from '../support/session-workers.ts';
import { makeTempFolder, removeFolder, sessionMeta } from '../support/transcripts.ts';

/*
 * Three long-lived worker processes open one transcript for writing at the same moment (each
 * busy-waits for the same wall-clock instant), 120 rounds: exactly one wins each round, and the
 * others are refused with `locked`, naming the winner's pid.
 */

const ROUNDS = 100;

test('two or more processes opening one transcript at once: exactly one wins, every round', async () => {
  const folder = await makeTempFolder();
  const path = join(folder, 'run.jsonl');
  const workers: SessionWorker[] = [];
  try {
    await (await Session.create(path, sessionMeta())).close();
    for (let index = 0; index < 3; index++) workers.push(await startSessionWorker());
    const wins = new Map<number, number>();
    for (let round = 0; round < ROUNDS; round++) {
      const goAt = performance.timeOrigin + performance.now() + 8;
      const replies = await Promise.all(
        workers.map((worker) => worker.send({ op: 'open', path, goAt })),
      );
      const winners = replies.filter((reply) => reply.ok);
      assert.equal(winners.length, 1, `round ${round}: ${JSON.stringify(replies)}`);
      const winner = winners[0];
      assert.ok(winner?.pid !== undefined);
      for (const reply of replies) {
        if (reply.ok) continue;
        assert.equal(reply.code, 'locked', `round ${round}: ${reply.message}`);
        assert.equal(reply.holderPid, winner.pid, `round ${round}: ${reply.message}`);
        assert.match(reply.message ?? '', new RegExp(`pid ${winner.pid}\\b`));
      }
      wins.set(winner.pid, (wins.get(winner.pid) ?? 0) + 1);
      const holder = workers.find((worker) => worker.pid === winner.pid);
      assert.equal((await holder?.send({ op: 'close' }))?.ok, true);
    }
    console.log('wins per worker pid', Object.fromEntries(wins));
    // While nobody holds it, this process can take it; while a worker holds it, it cannot.
    const first = workers[0] as SessionWorker;
    assert.equal((await first.send({ op: 'open', path })).ok, true);
    await assert.rejects(Session.open(path), (error: unknown) => {
      assert.ok(TranscriptError.isInstance(error));
      assert.equal(error.code, 'locked');
      assert.equal(error.holder?.pid, first.pid);
      assert.match(error.message, /since \d{4}-\d\d-\d\dT/);
      return true;
    });
    await first.send({ op: 'close' });
    await (await Session.open(path)).close();
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
    await removeFolder(folder);
  }
});
