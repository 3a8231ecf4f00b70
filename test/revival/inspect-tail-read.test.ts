import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Revival } from '../../src/revival/index.ts';
import { readTailState } from '../../src/transcript/read-tail-state.ts';
import { mayHoldDispatch } from '../../src/transcript/classify-tail.ts';
import type { FileSystem } from '../../src/transcript/file-system.ts';
import type { RecordBody } from '../../src/transcript/records.ts';
import { Session } from '../../src/transcript/session.ts';
import { assumeTurnDispatched } from '../../src/transcript/tail-state.ts';
import { abandonSession } from '../support/abandon-session.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';
import {
  assistant,
  call,
  dispatch,
  fixedClock,
  META,
  result,
  settle,
  user,
} from './support/transcripts.ts';

const seed = Number(process.env.SEED ?? Date.now());
console.log('seed', seed);

type Action =
  | { kind: 'user'; size: number }
  | { kind: 'system' }
  | { kind: 'assistant'; calls: number }
  | { kind: 'dispatch'; pick: number; join: boolean }
  | { kind: 'result'; pick: number; byRevival: boolean }
  | { kind: 'settle'; pick: number }
  | { kind: 'compaction'; from: number; span: number }
  | { kind: 'revived'; back: number }
  | { kind: 'foreign' };

const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ kind: fc.constant('user' as const), size: fc.nat({ max: 1500 }) }),
  fc.constant({ kind: 'system' as const }),
  fc.record({ kind: fc.constant('assistant' as const), calls: fc.nat({ max: 3 }) }),
  fc.record({ kind: fc.constant('dispatch' as const), pick: fc.nat(), join: fc.boolean() }),
  fc.record({ kind: fc.constant('result' as const), pick: fc.nat(), byRevival: fc.boolean() }),
  fc.record({ kind: fc.constant('settle' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('compaction' as const), from: fc.nat(), span: fc.nat({ max: 6 }) }),
  fc.record({ kind: fc.constant('revived' as const), back: fc.nat({ max: 4 }) }),
  fc.constant({ kind: 'foreign' as const }),
);

const tornTail = fc.oneof(
  fc.constant(''),
  fc.constant('{"v":1,"seq":'),
  fc.constant('{"v":1,"seq":999,"type":"checkpoint","at":"x","state":{'),
  fc
    .uint8Array({ minLength: 1, maxLength: 40 })
    .map((bytes) => Buffer.from(bytes).toString('latin1').replaceAll('\n', ' ')),
);

/** Play the actions into a transcript the way a (chaotic) run would, through the real writer. */
async function play(
  fileSystem: MemoryFileSystem,
  path: string,
  actions: Action[],
  checkpointBytes: number,
  ending: 'close' | 'die',
): Promise<Session['state']> {
  const session = await Session.create(path, META, {
    fileSystem,
    durability: 'none',
    clock: fixedClock(),
    checkpointBytes,
  });
  const calls: string[] = [];
  let next = 0;
  const pick = (index: number) => calls[index % Math.max(1, calls.length)] ?? 'none';
  for (const step of actions) {
    let body: RecordBody;
    switch (step.kind) {
      case 'user':
        body = user('u'.repeat(step.size));
        break;
      case 'system':
        body = { type: 'message', role: 'system', content: [{ type: 'text', text: 'sys' }] };
        break;
      case 'assistant': {
        const made = Array.from({ length: step.calls }, () => `c${next++}`);
        calls.push(...made);
        body = assistant(
          'thinking',
          made.map((id) => call(id)),
        );
        break;
      }
      case 'dispatch':
        body = step.join
          ? dispatch(pick(step.pick), 'task_wait', ['child-1'])
          : dispatch(pick(step.pick));
        break;
      case 'result':
        body = step.byRevival
          ? { ...result(pick(step.pick)), extras: { injected: 'revival' } }
          : result(pick(step.pick));
        break;
      case 'settle':
        body = settle(pick(step.pick));
        break;
      case 'compaction': {
        const last = session.lastSeq;
        if (last < 1) continue;
        const from = 1 + (step.from % last);
        body = {
          type: 'compaction',
          fromSeq: from,
          toSeq: Math.min(last, from + step.span),
          summary: 's',
        };
        break;
      }
      case 'revived':
        body = {
          type: 'run-revived',
          ordinal: 1,
          maxRevivals: 3,
          afterSeq: Math.max(0, session.lastSeq - step.back),
          interrupted: [],
          completedUnpersisted: [],
          orphaned: [],
        };
        break;
      case 'foreign':
        body = { type: 'x-annotation', note: 'from a newer writer' } as unknown as RecordBody;
        break;
    }
    await session.append(body);
  }
  // Closed (ending with its closing checkpoint when it has a conversation) or killed after its
  // last append (ending wherever it was).
  if (ending === 'close') {
    await session.close();
    return session.state;
  }
  const state = session.state;
  await abandonSession(session, fileSystem);
  return state;
}

describe('inspect: its answer is the same whether it reads the whole file or only the tail', () => {
  test('the fast path (from the last checkpoint) and a full scan agree on random transcripts', async () => {
    let fromCheckpoint = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(action, { minLength: 0, maxLength: 80 }),
        fc.integer({ min: 150, max: 4000 }),
        tornTail,
        // From a window too small to hold any checkpoint (the backward search) to whole files.
        fc.integer({ min: 1, max: 6000 }),
        fc.constantFrom('close', 'die'),
        async (actions, checkpointBytes, torn, windowBytes, ending) => {
          const fileSystem = new MemoryFileSystem();
          const path = '/runs/a.jsonl';
          const written = await play(fileSystem, path, actions, checkpointBytes, ending);
          if (torn !== '') {
            fileSystem.writeFile(
              path,
              Buffer.concat([fileSystem.readFile(path), Buffer.from(torn, 'latin1')]),
            );
          }
          const full = await readTailState(path, { fileSystem, strategy: 'full' });
          const fast = await readTailState(path, {
            fileSystem,
            chunkBytes: 97,
            windowBytes,
          });
          assert.ok(
            full.ok && fast.ok,
            `${full.ok ? '' : full.detail} ${fast.ok ? '' : fast.detail}`,
          );
          assert.deepStrictEqual(fast.state, full.state);
          assert.equal(fast.bytes, full.bytes);
          assert.equal(fast.torn, full.torn);
          // The writer's own fold agrees with both: the checkpoint is what the writer knew —
          // and, past a torn tail that may hold a dispatch, what its repair will mark.
          const expected =
            torn !== '' && mayHoldDispatch(Buffer.from(torn, 'latin1'), written.lastSeq + 1)
              ? assumeTurnDispatched(written, written.lastSeq + 1)
              : written;
          assert.deepStrictEqual(full.state, JSON.parse(JSON.stringify(expected)));
          runs += 1;
          if (fast.fromCheckpoint !== null) fromCheckpoint += 1;
          const inspected = await Revival.inspect({ path, maxRevivals: 2, fileSystem });
          assert.equal(inspected.revivalsUsed, full.state.revivals);
        },
      ),
      { seed, numRuns: 150 },
    );
    // A property that never took the fast path would prove nothing about it.
    assert.ok(
      fromCheckpoint > runs / 3,
      `${fromCheckpoint} of ${runs} runs read from a checkpoint`,
    );
  });

  test('reads at the same time each get their own window, and no answer changes after it is given', async () => {
    // The window buffers are reused: reads interleaved on an asynchronous file system must not
    // see each other's bytes, and an answer must not point into a buffer read into again later.
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            actions: fc.array(action, { minLength: 1, maxLength: 40 }),
            torn: tornTail,
            ending: fc.constantFrom<'close' | 'die'>('close', 'die'),
          }),
          { minLength: 2, maxLength: 6 },
        ),
        async (transcripts) => {
          const fileSystem = new MemoryFileSystem();
          const paths = transcripts.map((_, index) => `/runs/t${index}.jsonl`);
          for (const [index, transcript] of transcripts.entries()) {
            const path = paths[index] as string;
            await play(fileSystem, path, transcript.actions, 700, transcript.ending);
            const bytes = fileSystem.readFile(path);
            fileSystem.writeFile(
              path,
              Buffer.concat([bytes, Buffer.from(transcript.torn, 'latin1')]),
            );
          }
          const together = await Promise.all(
            paths.map((path) => readTailState(path, { fileSystem })),
          );
          const given = together.map((read) => JSON.stringify(read));
          for (const [index, path] of paths.entries()) {
            const full = await readTailState(path, { fileSystem, strategy: 'full' });
            const read = together[index];
            assert.ok(full.ok && read?.ok, `${path}: ${JSON.stringify(read)}`);
            assert.deepStrictEqual(read.state, full.state, path);
            assert.equal(read.bytes, full.bytes, path);
          }
          // Read again, reusing the windows: what was handed out before is unchanged.
          await Promise.all(paths.map((path) => readTailState(path, { fileSystem })));
          assert.deepEqual(
            together.map((read) => JSON.stringify(read)),
            given,
          );
        },
      ),
      { seed, numRuns: 60 },
    );
  });
});

/** Counts the bytes read through it. */
function countingReads(base: FileSystem): FileSystem & { bytesRead: number } {
  const counter: FileSystem & { bytesRead: number } = {
    bytesRead: 0,
    open: (path, mode) => base.open(path, mode),
    write: (fd, bytes) => base.write(fd, bytes),
    async read(fd, buffer, position) {
      const read = await base.read(fd, buffer, position);
      counter.bytesRead += read;
      return read;
    },
    sync: (fd) => base.sync(fd),
    truncate: (fd, length) => base.truncate(fd, length),
    size: (fd) => base.size(fd),
    close: (fd) => base.close(fd),
    identity: (fd) => base.identity(fd),
    identityOf: (path) => base.identityOf(path),
    unlink: (path) => base.unlink(path),
    rename: (from, to) => base.rename(from, to),
    syncFolder: (path) => base.syncFolder(path),
    makeFolder: (path) => base.makeFolder(path),
    tryLock: (fd) => base.tryLock(fd),
    isLocked: (path) => base.isLocked(path),
  };
  return counter;
}

describe('inspect: its cost does not grow with the length of the transcript', () => {
  test('inspecting a transcript sixteen times longer reads no more bytes (measured, not timed)', async () => {
    const checkpointBytes = 32 * 1024;
    const readFor = async (records: number) => {
      const fileSystem = new MemoryFileSystem();
      const path = '/runs/long.jsonl';
      const session = await Session.create(path, META, {
        fileSystem,
        durability: 'none',
        checkpointBytes,
      });
      for (let index = 0; index < records; index++) {
        await session.append(index % 2 === 0 ? user('x'.repeat(900)) : assistant('y'.repeat(900)));
      }
      await session.append(user('the last turn'));
      await session.close();
      const counter = countingReads(fileSystem);
      const found = await Revival.inspect({ path, maxRevivals: 1, fileSystem: counter });
      assert.equal(found.tail, 'user-turn', JSON.stringify(found));
      return { bytesRead: counter.bytesRead, size: fileSystem.readFile(path).length };
    };
    const short = await readFor(256);
    const long = await readFor(256 * 16);
    assert.ok(long.size > 15 * short.size);
    assert.ok(
      long.bytesRead <= short.bytesRead + checkpointBytes,
      `${long.bytesRead} vs ${short.bytesRead}`,
    );
    assert.ok(long.bytesRead < long.size / 8, `${long.bytesRead} of ${long.size}`);
  });
});
