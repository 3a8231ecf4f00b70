import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Revival } from '../../src/revival/index.ts';
import { mayHoldDispatch } from '../../src/transcript/classify-tail.ts';
import type { RecordBody } from '../../src/transcript/records.ts';
import type { CallRecord } from '../../src/testing/faulty-file-system.ts';
import { FaultyFileSystem } from '../../src/testing/index.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';
import {
  assistant,
  call,
  comparable,
  dispatch,
  fixedClock,
  META,
  ofType,
  recordsOf,
  result,
  user,
  writeTranscript,
} from './support/transcripts.ts';

/*
 * "each step itself crash-safe: a revive killed half-way is completed by the next one, never
 * doubled". A revive is killed at each of its own writes and syncs in turn — the write lost,
 * half written, or written whole just before the death; the sync failed with the page cache
 * kept (the process died) or dropped (the power went) — and then run again. The result must be
 * the transcript an uninterrupted revive writes.
 */

const PATH = '/runs/run.jsonl';

/** A run that died with every shape open: see the comments for what each call becomes. */
const EVERYTHING: RecordBody[] = [
  user('Tidy the repository'), // 1
  assistant('', [call('old')]), // 2
  dispatch('old'), // 3: its turn compacted away below → orphaned
  { type: 'compaction', fromSeq: 1, toSeq: 2, summary: 'Earlier, a tidy-up started.' }, // 4
  user('Now the three files, and wait for the child'), // 5
  assistant('', [call('a'), call('b'), call('c'), call('j', 'task_wait'), call('n', 'read_file')]), // 6
  dispatch('a'), // in flight → interrupted
  dispatch('b'), // in flight → interrupted
  dispatch('c'), // answered, never settled → completed-unpersisted
  dispatch('j', 'task_wait', ['child-1']), // a join → left open
  result('c', 'write_file', 'wrote c.txt'),
  // n: never dispatched → left to the Loop
];

interface Scenario {
  name: string;
  bodies: RecordBody[];
  /** Bytes a crashed Loop left after its last good record. */
  torn?: string;
  /** Revivals completed before the one under test … */
  priorRevivals?: number;
  /** … and what the revived run wrote after them before it died in turn. */
  afterPrior?: RecordBody[];
}

const SCENARIOS: Scenario[] = [
  { name: 'every shape open at once', bodies: EVERYTHING },
  {
    name: 'a torn tail left by the Loop',
    bodies: EVERYTHING,
    torn: '{"v":1,"seq":12,"type":"mess',
  },
  {
    name: 'a second revival, the conversation already ending with the notice',
    bodies: [user('Write a.txt'), assistant('', [call('x'), call('y')]), dispatch('x')],
    priorRevivals: 1,
    // The revived run dispatched the call it had never started, and died running it.
    afterPrior: [dispatch('y')],
  },
];

async function startingPoint(scenario: Scenario): Promise<MemoryFileSystem> {
  const fileSystem = new MemoryFileSystem();
  await writeTranscript(PATH, scenario.bodies, { fileSystem });
  for (let index = 0; index < (scenario.priorRevivals ?? 0); index++) {
    const revived = await Revival.revive({
      path: PATH,
      agentId: META.agentId,
      maxRevivals: 5,
      fileSystem,
    });
    assert.ok(revived.ok);
    for (const body of scenario.afterPrior ?? []) await revived.session.append(body);
    await revived.session.close();
  }
  if (scenario.torn !== undefined) {
    fileSystem.writeFile(
      PATH,
      Buffer.concat([fileSystem.readFile(PATH), Buffer.from(scenario.torn)]),
    );
  }
  return fileSystem;
}

function copyOf(fileSystem: MemoryFileSystem): MemoryFileSystem {
  return fileSystem.crashImage({ unsynced: 'keep', unsyncedNames: 'keep' });
}

async function reviveToEnd(fileSystem: MemoryFileSystem) {
  const revived = await Revival.revive({
    path: PATH,
    agentId: META.agentId,
    maxRevivals: 5,
    fileSystem,
    clock: fixedClock(Date.parse('2026-06-01T00:00:00.000Z')),
  });
  assert.ok(revived.ok, revived.ok ? '' : `${revived.reason}: ${revived.detail}`);
  await revived.session.close();
  return revived;
}

type WriteDeath = 'lost' | 'half' | 'whole';

/** Run a revive that dies at the nth transcript write (or sync). */
async function reviveDying(
  fileSystem: MemoryFileSystem,
  at: { operation: 'write'; nth: number; death: WriteDeath } | { operation: 'sync'; nth: number },
) {
  let seen = 0;
  let dead = false;
  let reviving = true;
  const faulty = new FaultyFileSystem(fileSystem, {
    keepBytes: true,
    beforeCall: async (entry: CallRecord) => {
      // Only revive's own calls are counted and killed: closing what it hands on is not one.
      if (!reviving) return;
      if (dead) {
        if (entry.operation === 'close') return;
        throw Object.assign(new Error('the process is dead'), { code: 'EIO' });
      }
      if (entry.operation !== at.operation || entry.path !== PATH) return;
      seen += 1;
      if (seen !== at.nth) return;
      dead = true;
      if (at.operation === 'write' && entry.fd !== undefined && entry.bytes !== undefined) {
        if (at.death === 'half')
          await fileSystem.write(entry.fd, entry.bytes.subarray(0, entry.bytes.length >> 1));
        if (at.death === 'whole') await fileSystem.write(entry.fd, entry.bytes);
      }
      throw Object.assign(new Error('killed here'), { code: 'EIO' });
    },
  });
  const revived = await Revival.revive({
    path: PATH,
    agentId: META.agentId,
    maxRevivals: 5,
    fileSystem: faulty,
  });
  reviving = false;
  if (revived.ok) await revived.session.close();
  return { died: dead, revived };
}

/** Comparable records without what answers or settles `callId` (and it in revival lists). */
function withoutCall(records: unknown[], callId: string): unknown[] {
  return records
    .filter((record) => {
      const text = JSON.stringify(record);
      const r = record as { type?: string; callId?: string; role?: string };
      if (r.type === 'tool-settled' && r.callId === callId) return false;
      return !(r.type === 'message' && r.role === 'tool' && text.includes(`"callId":"${callId}"`));
    })
    .map((record) => {
      const r = record as { type?: string; interrupted?: string[] };
      if (r.type !== 'run-revived') return record;
      return { ...r, interrupted: (r.interrupted ?? []).filter((id) => id !== callId) };
    });
}

async function countTranscriptCalls(start: MemoryFileSystem) {
  const faulty = new FaultyFileSystem(copyOf(start));
  const revived = await Revival.revive({
    path: PATH,
    agentId: META.agentId,
    maxRevivals: 5,
    fileSystem: faulty,
  });
  assert.ok(revived.ok);
  // Revive's own calls: closing the session it hands on is not part of it.
  const calls = { writes: faulty.count('write', PATH), syncs: faulty.count('sync', PATH) };
  await revived.session.close();
  return calls;
}

describe('revive: "a revive killed half-way is completed by the next one, never doubled"', () => {
  for (const scenario of SCENARIOS) {
    test(`killed at every one of its own writes and syncs, then run again: ${scenario.name}`, async () => {
      const start = await startingPoint(scenario);
      const reference = await recordsOf(
        PATH,
        await (async () => {
          const copy = copyOf(start);
          await reviveToEnd(copy);
          return copy;
        })(),
      );
      const expected = comparable(reference);
      const revivalsBefore = scenario.priorRevivals ?? 0;
      const { writes, syncs } = await countTranscriptCalls(start);
      assert.ok(writes >= 2 && syncs >= 1, `${writes} writes, ${syncs} syncs`);
      const cases: { label: string; image: () => Promise<MemoryFileSystem> }[] = [];
      for (let nth = 1; nth <= writes; nth++) {
        for (const death of ['lost', 'half', 'whole'] as const) {
          cases.push({
            label: `write ${nth} ${death}`,
            image: async () => {
              const copy = copyOf(start);
              const { died, revived } = await reviveDying(copy, { operation: 'write', nth, death });
              assert.ok(died, 'the crash was injected');
              assert.equal(revived.ok, false);
              return copy;
            },
          });
        }
      }
      for (let nth = 1; nth <= syncs; nth++) {
        for (const death of ['process', 'power', 'power-torn'] as const) {
          cases.push({
            label: `sync ${nth} ${death}`,
            image: async () => {
              const copy = copyOf(start);
              const { died, revived } = await reviveDying(copy, { operation: 'sync', nth });
              assert.ok(died, 'the crash was injected');
              assert.equal(revived.ok, false);
              if (death === 'process') return copy;
              return copy.crashImage({
                unsynced:
                  death === 'power'
                    ? 'drop'
                    : ({ durable, current }) =>
                        current.subarray(
                          0,
                          durable.length + ((current.length - durable.length) >> 1),
                        ),
              });
            },
          });
        }
      }
      let completedBeforeDeath = 0;
      let unsureCases = 0;
      for (const entry of cases) {
        const image = await entry.image();
        const envelopesLeft = ofType(
          await recordsOf(PATH, image).catch(() => []),
          'run-revived',
        ).length;
        const finishedBeforeDeath = envelopesLeft > revivalsBefore;
        const before = await Revival.inspect({ path: PATH, maxRevivals: 5, fileSystem: image });
        // The cap counts completed revivals only.
        assert.equal(
          before.revivalsUsed,
          revivalsBefore + (finishedBeforeDeath ? 1 : 0),
          entry.label,
        );
        // A torn last line too short to name its record type may be a durable dispatch cut
        // short: the calls of the last turn that never started are then answered as
        // interrupted rather than left to run (docs/transcript-format.md §6).
        const bytes = image.readFile(PATH);
        const tail = bytes.subarray(bytes.lastIndexOf(0x0a) + 1);
        const lines = bytes
          .subarray(0, bytes.length - tail.length)
          .filter((b) => b === 0x0a).length;
        const unsure = tail.length > 0 && mayHoldDispatch(tail, lines);
        const again = await reviveToEnd(image);
        const after = await recordsOf(PATH, image);
        if (unsure) {
          assert.ok(
            !ofType(after, 'tool-dispatched').some((record) => record.callId === 'n'),
            `${entry.label}: n was dispatched`,
          );
          assert.deepEqual(
            withoutCall(comparable(after), 'n'),
            withoutCall(expected, 'n'),
            entry.label,
          );
          unsureCases += 1;
        } else if (!finishedBeforeDeath) {
          assert.deepEqual(comparable(after), expected, entry.label);
          assert.equal(again.revival.ordinal, revivalsBefore + 1, entry.label);
        } else {
          // Its envelope reached the file: the run was revived, and then died writing nothing —
          // from the file alone, the same as a revived run that died before its first record.
          // Running again is a revival of its own, and counts: that is what stops a crash that
          // reproduces at start-up from reviving for ever. Nothing else is written twice.
          completedBeforeDeath += 1;
          assert.deepEqual(comparable(after).slice(0, -1), expected, entry.label);
          assert.equal(again.revival.ordinal, revivalsBefore + 2, entry.label);
          assert.deepEqual(again.interrupted, [], entry.label);
        }
        const inspected = await Revival.inspect({ path: PATH, maxRevivals: 5, fileSystem: image });
        assert.equal(inspected.revivalsUsed, again.revival.ordinal, entry.label);
      }
      if (unsureCases > 0)
        console.log(`${scenario.name}: ${unsureCases} torn tails of unknown type`);
      // Only deaths after the envelope landed: its write done whole, or the last sync.
      assert.ok(completedBeforeDeath >= 1 && completedBeforeDeath <= 3, `${completedBeforeDeath}`);
    });
  }

  test('killed twice — at every write of the first revive and every write of the second — then run a third time', async () => {
    const start = await startingPoint(SCENARIOS[0] as Scenario);
    const referenceCopy = copyOf(start);
    await reviveToEnd(referenceCopy);
    const expected = comparable(await recordsOf(PATH, referenceCopy));
    const { writes } = await countTranscriptCalls(start);
    let runs = 0;
    for (let first = 1; first <= writes; first++) {
      for (let second = 1; second <= writes; second++) {
        const copy = copyOf(start);
        assert.ok(
          (await reviveDying(copy, { operation: 'write', nth: first, death: 'half' })).died,
        );
        const secondRun = await reviveDying(copy, {
          operation: 'write',
          nth: second,
          death: 'half',
        });
        if (!secondRun.died) continue; // the second revive had fewer writes left to do
        await reviveToEnd(copy);
        assert.deepEqual(comparable(await recordsOf(PATH, copy)), expected, `${first}, ${second}`);
        runs += 1;
      }
    }
    assert.ok(runs > writes, `${runs} double crashes`);
  });
});
