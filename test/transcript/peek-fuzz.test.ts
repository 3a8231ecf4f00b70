import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { encodeLine } from '../../src/transcript/line-codec.ts';
import { type PeekResult, peek } from '../../src/transcript/peek.ts';
import { FORMAT_VERSION } from '../../src/transcript/records.ts';
import { Session } from '../../src/transcript/session.ts';
import { randomBytesFrom, seededRandom, testSeed } from '../support/seeded-random.ts';
import { type SessionWorker, startSessionWorker } from '../support/session-workers.ts';
import {
  buildTranscript,
  makeTempFolder,
  removeFolder,
  sampleBodies,
  sessionMeta,
  snapshotFolder,
} from '../support/transcripts.ts';

/*
 * peek never throws and never writes: over 10^4 random and mutated files (seeded; the seed is
 * logged), a missing file, a folder, an empty file, and a transcript another process is
 * appending to at that moment. The folder is listed and hashed before and after.
 */

const FILES = 10_000;
const BATCH = 1_000;
const REASONS = new Set(['missing', 'not-a-transcript', 'damaged', 'newer-version', 'io-error']);

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T =>
  items[Math.floor(random() * items.length)] as T;
const between = (random: Random, low: number, high: number) =>
  low + Math.floor(random() * (high - low + 1));

/** A valid transcript of random size and shape. */
function validTranscript(random: Random): Buffer {
  const count = between(random, 1, 12);
  return buildTranscript(sampleBodies(count, between(random, 1, 3000), 'z')).bytes;
}

/** One mutation a crash, a disk or a person could make. */
const MUTATIONS: ((bytes: Buffer, random: Random) => Buffer)[] = [
  (bytes, random) => bytes.subarray(0, between(random, 0, bytes.length)),
  (bytes, random) => {
    const copy = Buffer.from(bytes);
    for (let flips = between(random, 1, 4); flips > 0 && copy.length > 0; flips--) {
      const at = between(random, 0, copy.length - 1);
      copy[at] = (copy[at] ?? 0) ^ (1 << between(random, 0, 7));
    }
    return copy;
  },
  (bytes, random) => {
    const copy = Buffer.from(bytes);
    const at = between(random, 0, copy.length);
    copy.fill(
      pick(random, [0, 0xff, 0x0a, 0x7b]),
      at,
      Math.min(copy.length, at + between(random, 1, 600)),
    );
    return copy;
  },
  (bytes, random) => Buffer.concat([bytes, randomBytesFrom(random, between(random, 1, 2000))]),
  (bytes, random) => {
    const at = between(random, 0, bytes.length);
    return Buffer.concat([
      bytes.subarray(0, at),
      randomBytesFrom(random, between(random, 1, 64)),
      bytes.subarray(at),
    ]);
  },
  (bytes, random) => {
    const at = between(random, 0, bytes.length);
    return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + between(random, 1, 300))]);
  },
  (bytes, random) => {
    // Duplicate, drop or swap whole lines (a gap or repeat in seq).
    const lines = bytes.toString('latin1').split(/(?<=\n)/);
    const at = between(random, 0, Math.max(0, lines.length - 1));
    const choice = between(random, 0, 2);
    if (choice === 0) lines.splice(at, 0, lines[at] ?? '');
    else if (choice === 1) lines.splice(at, 1);
    else lines.reverse();
    return Buffer.from(lines.join(''), 'latin1');
  },
  (bytes) => {
    // A record from a newer version after the valid ones.
    const seq = bytes.toString('latin1').split('\n').length - 1;
    const line = encodeLine(
      { v: FORMAT_VERSION + 1, seq, at: '2030-01-01T00:00:00.000Z' },
      { type: 'session-meta', ...sessionMeta() },
    );
    return Buffer.concat([bytes, line.bytes]);
  },
  (bytes) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]),
  (bytes) =>
    Buffer.from(bytes.toString('latin1').replaceAll(/,"crc":"[0-9a-f]{8}"/g, ''), 'latin1'),
];

/** A file for the fuzzer: pure junk, text-like junk, or a valid transcript mutated 0–3 times. */
function fuzzFile(random: Random): Buffer {
  const kind = random();
  if (kind < 0.08) return randomBytesFrom(random, between(random, 0, 4096));
  if (kind < 0.12) {
    const text = '{"v":1,"seq":0,"type":"message"}\n'.repeat(between(random, 0, 20));
    return Buffer.from(text + '\n'.repeat(between(random, 0, 3)));
  }
  if (kind < 0.13) return Buffer.alloc(between(random, 1, 70_000), 0x61); // one long line
  let bytes = validTranscript(random);
  for (let count = between(random, 0, 3); count > 0; count--) {
    bytes = pick(random, MUTATIONS)(bytes, random);
  }
  return bytes;
}

/** peek must answer, with a well-formed result, and never throw. */
function checkShape(result: PeekResult, path: string, label: string): void {
  if (result.ok) {
    assert.ok(Array.isArray(result.records), label);
    assert.ok(result.state === 'clean' || result.state === 'torn-tail', label);
    result.records.forEach((record, index) => {
      assert.equal(record.seq, index, `${label}: records come in seq order from 0`);
    });
    assert.equal(result.state === 'torn-tail', result.torn !== undefined, label);
  } else {
    assert.ok(REASONS.has(result.reason), `${label}: ${result.reason}`);
    assert.ok(result.detail.startsWith(path), `${label}: ${result.detail}`);
  }
}

test('peek fuzz: 10^4 random and mutated files, no throw, nothing created or changed', async () => {
  const seed = testSeed('peek-fuzz');
  const random = seededRandom(seed);
  const folder = await makeTempFolder();
  const outcomes = new Map<string, number>();
  let throws = 0;
  try {
    for (let batch = 0; batch < FILES / BATCH; batch++) {
      const sub = join(folder, `batch-${batch}`);
      mkdirSync(sub, { mode: 0o700 });
      const names: string[] = [];
      for (let index = 0; index < BATCH; index++) {
        const name = `f${index}.jsonl`;
        writeFileSync(join(sub, name), fuzzFile(random), { mode: 0o600 });
        names.push(name);
      }
      mkdirSync(join(sub, 'a-folder.jsonl'));
      writeFileSync(join(sub, 'empty.jsonl'), '');
      names.push('a-folder.jsonl', 'empty.jsonl', 'missing.jsonl', 'missing/deeper.jsonl');
      const before = await snapshotFolder(sub);
      // Peeks run 16 at a time: each waits mostly on the thread pool.
      for (let from = 0; from < names.length; from += 16) {
        await Promise.all(
          names.slice(from, from + 16).map(async (name) => {
            const path = join(sub, name);
            let result: PeekResult;
            try {
              result = await peek(path);
            } catch (error) {
              throws += 1;
              console.error(`seed ${seed}: peek threw on ${path}`, error);
              return;
            }
            checkShape(result, path, `seed ${seed}, ${path}`);
            const key = result.ok ? result.state : result.reason;
            outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
          }),
        );
      }
      assert.deepEqual(await snapshotFolder(sub), before, `seed ${seed}: peek changed the folder`);
    }
  } finally {
    await removeFolder(folder);
  }
  console.log('peek outcomes', Object.fromEntries(outcomes));
  assert.equal(throws, 0);
  const total = [...outcomes.values()].reduce((sum, count) => sum + count, 0);
  assert.equal(total, (FILES / BATCH) * (BATCH + 4));
  // The fuzzer reached every kind of answer a file can get.
  for (const key of [
    'clean',
    'torn-tail',
    'damaged',
    'not-a-transcript',
    'newer-version',
    'missing',
  ]) {
    assert.ok((outcomes.get(key) ?? 0) > 0, `no file was ${key}`);
  }
});

test('peek reads a transcript another process is appending to right now', async () => {
  const folder = await makeTempFolder();
  const path = join(folder, 'live.jsonl');
  let worker: SessionWorker | undefined;
  try {
    await (await Session.create(path, sessionMeta())).close();
    worker = await startSessionWorker();
    assert.equal((await worker.send({ op: 'open', path, durability: 'flush' })).ok, true);
    const started = await worker.send({
      op: 'start-appending',
      bytes: 400,
      batch: 2,
      pauseMs: 5,
      count: 1000,
    });
    assert.equal(started.ok, true);
    let finished = false;
    const done = worker.send({ op: 'wait-appending' }).then((reply) => {
      finished = true;
      return reply;
    });
    const counts: number[] = [];
    let torn = 0;
    let throws = 0;
    let previous: PeekResult | null = null;
    while (!finished || counts.length < 3) {
      let result: PeekResult;
      try {
        result = await peek(path);
      } catch (error) {
        throws += 1;
        console.error(error);
        continue;
      }
      checkShape(result, path, 'live');
      assert.ok(result.ok, result.ok ? '' : result.detail);
      if (result.state === 'torn-tail') torn += 1;
      // What one peek saw is a prefix of what the next one sees.
      if (previous?.ok === true) {
        assert.ok(result.records.length >= previous.records.length);
        assert.deepEqual(result.records.slice(0, previous.records.length), previous.records);
      }
      previous = result;
      counts.push(result.records.length);
    }
    const reply = await done;
    assert.equal(reply.ok, true);
    assert.equal(throws, 0);
    const growing = counts.filter((count, index) => index > 0 && count > (counts[index - 1] ?? 0));
    console.log(`live peeks: ${counts.length}, saw growth ${growing.length} times, torn ${torn}`);
    // The writer was writing while peek read: successive peeks saw the file grow.
    assert.ok(growing.length >= 2, `peeks saw ${JSON.stringify(counts.slice(0, 20))}`);
    await worker.send({ op: 'close' });
    const final = await peek(path);
    assert.ok(final.ok && final.state === 'clean');
    // Every record the writer appended, and the checkpoint its close added.
    assert.equal(final.records.length, (reply.lastSeq ?? 0) + 2);
    assert.equal(final.records.at(-1)?.type, 'checkpoint');
    const names = Object.keys(Object.fromEntries(await snapshotFolder(folder))).sort();
    assert.deepEqual(names, ['live.jsonl'], 'a clean close leaves no nametag');
  } finally {
    await worker?.stop();
    await removeFolder(folder);
  }
});
