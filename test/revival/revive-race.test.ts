import assert from 'node:assert/strict';
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Revival } from '../../src/revival/index.ts';
import type { WorkerCommand, WorkerReply } from './support/revive-worker.ts';
import { tempFolder } from './support/temp-folder.ts';
import {
  assistant,
  call,
  dispatch,
  META,
  ofType,
  recordsOf,
  user,
  writeTranscript,
} from './support/transcripts.ts';

const WORKERS = 3;
const ROUNDS = 200;

interface Worker {
  child: ChildProcess;
  next(predicate: (reply: WorkerReply) => boolean): Promise<WorkerReply>;
  send(command: WorkerCommand): void;
}

function startWorker(): Worker {
  const child = fork(new URL('./support/revive-worker.ts', import.meta.url), [], {
    execPath: process.execPath,
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting: {
    predicate: (reply: WorkerReply) => boolean;
    resolve: (reply: WorkerReply) => void;
  }[] = [];
  child.on('message', (reply: WorkerReply) => {
    if (reply.type === 'error') throw new Error(`worker ${child.pid}: ${reply.message}`);
    const index = waiting.findIndex((entry) => entry.predicate(reply));
    if (index === -1) throw new Error(`unexpected reply ${JSON.stringify(reply)}`);
    const [entry] = waiting.splice(index, 1);
    entry?.resolve(reply);
  });
  return {
    child,
    next: (predicate) => new Promise((resolve) => waiting.push({ predicate, resolve })),
    send: (command) => child.send(command),
  };
}

let workers: Worker[] = [];
const folder = await tempFolder('revival-race-', true);

before(() => {
  workers = Array.from({ length: WORKERS }, startWorker);
});

after(async () => {
  await Promise.all(
    workers.map(
      (worker) =>
        new Promise<void>((resolve) => {
          const { child } = worker;
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          // A worker that does not leave when asked is stopped: only ever our own children.
          setTimeout(() => child.kill(), 5000).unref();
          worker.send({ type: 'exit' });
        }),
    ),
  );
});

const crashed = [user('Write a.txt'), assistant('', [call('c1')]), dispatch('c1')];

describe('revive: "two revivers racing: exactly one wins"', () => {
  test(`${WORKERS} processes revive one transcript at once, ${ROUNDS} rounds: exactly one ok each round, the others running`, async () => {
    const winners = new Map<number, number>();
    for (let round = 0; round < ROUNDS; round++) {
      const path = join(folder, `round-${round}.jsonl`);
      await writeTranscript(path, crashed);
      const answers = workers.map((worker) =>
        worker.next((reply) => reply.type === 'revived' && reply.round === round),
      );
      for (const worker of workers) {
        worker.send({ type: 'revive', round, path, agentId: META.agentId });
      }
      const replies = (await Promise.all(answers)) as Extract<WorkerReply, { type: 'revived' }>[];
      const won = replies.filter((reply) => reply.ok);
      assert.equal(won.length, 1, `round ${round}: ${JSON.stringify(replies)}`);
      assert.deepEqual(
        replies.filter((reply) => !reply.ok).map((reply) => reply.reason),
        Array(WORKERS - 1).fill('running'),
        `round ${round}`,
      );
      // While the winner holds the revived run, nobody else may revive it.
      assert.equal((await Revival.inspect({ path, maxRevivals: 1000 })).reason, 'running');
      const winner = workers.find((worker) => worker.child.pid === won[0]?.pid) as Worker;
      winners.set(winner.child.pid ?? 0, (winners.get(winner.child.pid ?? 0) ?? 0) + 1);
      const released = winner.next((reply) => reply.type === 'released' && reply.round === round);
      winner.send({ type: 'release', round });
      await released;
      const records = await recordsOf(path);
      assert.equal(ofType(records, 'run-revived').length, 1, `round ${round}: one envelope`);
      assert.equal(ofType(records, 'tool-settled').length, 1, `round ${round}: one settle`);
      // The count survives the process that made it.
      const found = await Revival.inspect({ path, maxRevivals: 1 });
      assert.deepEqual([found.revivalsUsed, found.reason], [1, 'revival-cap'], `round ${round}`);
    }
    console.log('wins per process', Object.fromEntries(winners));
  });

  test('a run whose writer is alive is never revived, however often it is tried', async () => {
    const path = join(folder, 'live.jsonl');
    await writeTranscript(path, crashed);
    const [runner, ...revivers] = workers as [Worker, ...Worker[]];
    const holding = runner.next((reply) => reply.type === 'holding');
    runner.send({ type: 'hold', path });
    await holding;
    const reasons = new Set<string>();
    for (let round = 0; round < 30; round++) {
      const answers = revivers.map((worker) =>
        worker.next((reply) => reply.type === 'revived' && reply.round === -1 - round),
      );
      for (const worker of revivers)
        worker.send({ type: 'revive', round: -1 - round, path, agentId: META.agentId });
      for (const reply of (await Promise.all(answers)) as Extract<
        WorkerReply,
        { type: 'revived' }
      >[]) {
        reasons.add(reply.ok ? 'ok' : (reply.reason ?? ''));
      }
      reasons.add((await Revival.inspect({ path, maxRevivals: 1000 })).reason ?? 'revivable');
    }
    const stopped = runner.next((reply) => reply.type === 'stopped');
    runner.send({ type: 'stop' });
    const { appended } = (await stopped) as Extract<WorkerReply, { type: 'stopped' }>;
    assert.deepEqual([...reasons], ['running']);
    assert.ok(appended > 0, 'the run was writing all along');
    const records = await recordsOf(path);
    assert.equal(ofType(records, 'run-revived').length, 0);
    assert.equal(ofType(records, 'tool-settled').length, 0);
  });
});
