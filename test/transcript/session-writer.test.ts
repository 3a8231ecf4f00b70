import assert from 'node:assert/strict';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { FaultyFileSystem, MemoryFileSystem } from '../../src/testing/index.ts';
import { decodeLine } from '../../src/transcript/line-codec.ts';
import type { RecordBody } from '../../src/transcript/records.ts';
import { Session } from '../../src/transcript/session.ts';
import { TranscriptError } from '../../src/transcript/transcript-error.ts';
import { readAll } from '../support/repair-checks.ts';
import { seededRandom, testSeed } from '../support/seeded-random.ts';
import {
  makeTempFolder,
  removeFolder,
  sessionMeta,
  steppingClock,
  textMessage,
} from '../support/transcripts.ts';

/*
 * The writer's promises (docs/transcript-format.md §5): serialised appends, one sync per barrier, the three
 * durability modes, poisoning on a failed write or sync, file and folder modes, the folder
 * synced on create. Faults come from the recording FaultyFileSystem, and each test checks that
 * its fault fired.
 */

const PATH = '/runs/run.jsonl';
const isTranscript = (path: string) => path === PATH;

function setup(rules: ConstructorParameters<typeof FaultyFileSystem>[1] = {}) {
  const memory = new MemoryFileSystem();
  const fileSystem = new FaultyFileSystem(memory, { keepBytes: true, ...rules });
  return { memory, fileSystem };
}

function lines(bytes: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let from = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, from)) {
    parts.push(bytes.subarray(from, at));
    from = at + 1;
  }
  return parts;
}

function expectSessionError(code: TranscriptError['code']) {
  return (error: unknown) => {
    assert.ok(TranscriptError.isInstance(error), String(error));
    assert.equal(error.code, code, error.message);
    return true;
  };
}

test('concurrent appends never interleave or reorder: seq order = call order = file order', async () => {
  const random = seededRandom(testSeed('concurrent-appends'));
  const memory = new MemoryFileSystem();
  // Every write waits a random while before reaching the file, to shake out any reordering.
  const fileSystem = new FaultyFileSystem(memory, {
    keepBytes: true,
    beforeCall: async (call) => {
      if (call.operation !== 'write') return;
      const turns = Math.floor(random() * 4);
      for (let turn = 0; turn < turns; turn++)
        await new Promise((resolve) => setImmediate(resolve));
    },
  });
  // No checkpoints but the closing one: this test counts the lines it asked for.
  const session = await Session.create(PATH, sessionMeta(), {
    fileSystem,
    checkpointBytes: Number.POSITIVE_INFINITY,
  });
  fileSystem.clearCalls();
  const texts = Array.from({ length: 300 }, (_, index) => `#${index} ${'y'.repeat(index % 97)}`);
  const appended = await Promise.all(
    texts.map((text, index) =>
      index % 50 === 49
        ? session.appendDurable(textMessage('user', text))
        : session.append(textMessage('user', text)),
    ),
  );
  await session.close();
  appended.forEach((record, index) => {
    assert.equal(record.seq, index + 1, 'seq follows call order');
  });
  const writes = fileSystem.callsOf('write').filter((call) => isTranscript(call.path ?? ''));
  assert.equal(writes.length, texts.length + 1, 'one write per line, the closing checkpoint too');
  for (const write of writes) assert.equal(lines(write.bytes ?? Buffer.alloc(0)).length, 1);
  const closing = decodeLine(lines(memory.readFile(PATH)).at(-1) ?? Buffer.alloc(0));
  assert.ok(closing.ok && closing.record.type === 'checkpoint', 'the closing checkpoint is last');
  assert.equal(closing.record.seq, texts.length + 1);
  const onDisk = lines(memory.readFile(PATH)).slice(1, -1);
  assert.equal(onDisk.length, texts.length);
  onDisk.forEach((line, index) => {
    const decoded = decodeLine(line);
    assert.ok(decoded.ok && decoded.record.type === 'message');
    assert.equal(decoded.record.seq, index + 1);
    assert.deepEqual(decoded.record.content, [{ type: 'text', text: texts[index] }]);
  });
});

test('fsync: one fdatasync per barrier, however many records; none when nothing is new', async () => {
  const { fileSystem } = setup();
  const session = await Session.create(PATH, sessionMeta(), { fileSystem });
  fileSystem.clearCalls();
  for (let index = 0; index < 40; index++) void session.append(textMessage('user', `${index}`));
  await session.barrier();
  assert.equal(fileSystem.count('sync', PATH), 1);
  assert.equal(fileSystem.count('write', PATH), 40);
  await session.barrier();
  assert.equal(fileSystem.count('sync', PATH), 1, 'a barrier with nothing new syncs nothing');
  await session.appendDurable(textMessage('user', 'durable'));
  assert.equal(fileSystem.count('sync', PATH), 2);
  await session.barrier();
  assert.equal(fileSystem.count('sync', PATH), 2, 'nothing new since the durable append');
  await session.close();
  assert.equal(fileSystem.count('write', PATH), 42, 'close writes its closing checkpoint');
  assert.equal(fileSystem.count('sync', PATH), 3, 'and syncs that, once');
});

test('closing: a checkpoint after what this session appended, none after nothing or an empty run', async () => {
  const { fileSystem, memory } = setup();
  const types = async () => (await readAll(PATH, memory)).map((record) => record.type);
  const empty = await Session.create(PATH, sessionMeta(), { fileSystem });
  await empty.close();
  assert.deepEqual(await types(), ['session-meta'], 'no conversation: nothing to summarise');

  const first = await Session.open(PATH, { fileSystem });
  await first.append(textMessage('user', 'hello'));
  const before = JSON.parse(JSON.stringify(first.state));
  await first.close();
  assert.deepEqual(await types(), ['session-meta', 'message', 'checkpoint']);
  const checkpoint = (await readAll(PATH, memory)).at(-1) as { state?: unknown };
  assert.deepEqual(checkpoint.state, before, 'the state of everything before it');

  fileSystem.clearCalls();
  const reader = await Session.open(PATH, { fileSystem });
  await reader.close();
  assert.equal(
    fileSystem.count('write', PATH),
    0,
    'a session that appended nothing writes nothing',
  );
  assert.deepEqual(await types(), ['session-meta', 'message', 'checkpoint']);
});

test('closing twice at once: one close, one checkpoint, neither rejects; appends are refused from the first call', async () => {
  const { fileSystem, memory } = setup();
  const session = await Session.create(PATH, sessionMeta(), { fileSystem });
  await session.append(textMessage('user', 'hello'));
  fileSystem.clearCalls();
  const first = session.close();
  const second = session.close();
  assert.equal(first, second, 'the same promise');
  assert.throws(() => session.append(textMessage('user', 'late')), expectSessionError('closed'));
  assert.throws(() => session.barrier(), expectSessionError('closed'));
  const settled = await Promise.allSettled([first, second]);
  assert.deepEqual(
    settled.map((outcome) => outcome.status),
    ['fulfilled', 'fulfilled'],
  );
  assert.equal(fileSystem.count('close', PATH), 1, 'the descriptor is closed once');
  assert.equal(fileSystem.count('write', PATH), 1, 'one closing checkpoint');
  const types = (await readAll(PATH, memory)).map((record) => record.type);
  assert.deepEqual(types, ['session-meta', 'message', 'checkpoint']);
});

test('flush never syncs; none writes only at barriers, all of it in one write', async () => {
  const flush = setup();
  const flushed = await Session.create(PATH, sessionMeta(), {
    fileSystem: flush.fileSystem,
    durability: 'flush',
  });
  for (let index = 0; index < 10; index++) await flushed.append(textMessage('user', `${index}`));
  await flushed.barrier();
  await flushed.close();
  assert.equal(flush.fileSystem.count('sync'), 0);
  assert.equal(flush.fileSystem.count('syncFolder'), 0);
  assert.equal(flush.fileSystem.count('write', PATH), 12, 'meta, 10 records, closing checkpoint');

  const none = setup();
  const buffered = await Session.create(PATH, sessionMeta(), {
    fileSystem: none.fileSystem,
    durability: 'none',
  });
  none.fileSystem.clearCalls();
  for (let index = 0; index < 10; index++) await buffered.append(textMessage('user', `${index}`));
  assert.equal(none.fileSystem.count('write', PATH), 0, 'nothing is written before a barrier');
  assert.equal(lines(none.memory.readFile(PATH)).length, 1);
  await buffered.barrier();
  assert.equal(none.fileSystem.count('write', PATH), 1, 'the barrier writes once');
  assert.equal(lines(none.memory.readFile(PATH)).length, 11);
  await buffered.append(textMessage('user', 'at close'));
  await buffered.close();
  assert.equal(none.fileSystem.count('write', PATH), 2, 'close is a barrier');
  assert.equal(none.fileSystem.count('sync'), 0);
  const records = await readAll(PATH, none.memory);
  assert.equal(records.length, 13, 'meta, 11 records, and the closing checkpoint');
  assert.equal(records.at(-1)?.type, 'checkpoint');
});

for (const fault of [
  { name: 'a failed sync (EIO)', operation: 'sync', kind: { kind: 'error', code: 'EIO' } },
  { name: 'a failed write (ENOSPC)', operation: 'write', kind: { kind: 'error', code: 'ENOSPC' } },
  { name: 'a failed write (EIO)', operation: 'write', kind: { kind: 'error', code: 'EIO' } },
  { name: 'a short write', operation: 'write', kind: { kind: 'short-write', bytes: 17 } },
  {
    name: 'a write that reached the file but reported EIO',
    operation: 'write',
    kind: { kind: 'error', code: 'EIO', afterEffect: true },
  },
] as const) {
  test(`${fault.name} poisons the session; reopening repairs and loses nothing acknowledged`, async () => {
    const { memory, fileSystem } = setup();
    const session = await Session.create(PATH, sessionMeta(), { fileSystem });
    const acknowledged: RecordBody[] = [];
    for (let index = 0; index < 5; index++) {
      const body = textMessage('user', `kept ${index}`);
      await session.appendDurable(body);
      acknowledged.push(body);
    }
    fileSystem.addRule({
      operation: fault.operation,
      path: PATH,
      nth: 1,
      repeat: 'forever',
      fault: fault.kind,
    });
    const failing = session.appendDurable(textMessage('user', 'never acknowledged'));
    await assert.rejects(failing, expectSessionError('poisoned'));
    assert.equal(fileSystem.fired.length > 0, true, 'the fault fired');
    assert.equal(session.poisoned, true);
    assert.throws(
      () => session.append(textMessage('user', 'refused')),
      expectSessionError('poisoned'),
    );
    assert.throws(() => session.barrier(), expectSessionError('poisoned'));
    const writesBefore = fileSystem.count('write', PATH);
    await session.close();
    assert.equal(fileSystem.count('write', PATH), writesBefore, 'close writes nothing more');
    assert.equal(memory.openDescriptors(), 0);

    fileSystem.clearRules();
    const reopened = await Session.open(PATH, { fileSystem });
    await reopened.appendDurable(textMessage('user', 'after reopening'));
    await reopened.close();
    const records = await readAll(PATH, memory);
    const messages = records.filter((record) => record.type === 'message');
    for (const [index, body] of acknowledged.entries()) {
      assert.deepEqual(
        (messages[index] as { content: unknown }).content,
        (body as { content: unknown }).content,
      );
    }
    assert.ok(
      JSON.stringify(messages.at(-1)).includes('after reopening'),
      'the reopened session appends',
    );
    records.forEach((record, index) => {
      assert.equal(record.seq, index);
    });
  });
}

test('new files are 0600 and new folders 0700 (real files); a repair sidecar too', async () => {
  const folder = await makeTempFolder();
  try {
    const path = join(folder, 'a', 'b', 'run.jsonl');
    const session = await Session.create(path, sessionMeta());
    assert.equal((await stat(`${path}.owner`)).mode & 0o777, 0o600);
    await session.close();
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    assert.equal((await stat(join(folder, 'a'))).mode & 0o777, 0o700);
    assert.equal((await stat(join(folder, 'a', 'b'))).mode & 0o777, 0o700);
    await writeFile(path, '{"v":1,"seq":1,"ty', { flag: 'a' });
    await (await Session.open(path)).close();
    const sidecar = (await stat(join(folder, 'a', 'b', `run.jsonl.torn-${await sizeBefore(path)}`)))
      .mode;
    assert.equal(sidecar & 0o777, 0o600);
  } finally {
    await removeFolder(folder);
  }
});

async function sizeBefore(path: string): Promise<number> {
  const records = await readAll(
    path,
    (await import('../../src/transcript/file-system.ts')).nodeFileSystem,
  );
  const checkpoint = records.find((record) => record.tailRepair !== undefined);
  return checkpoint?.tailRepair?.validBytes ?? -1;
}

test('create syncs the file, then its folder, and every folder it made', async () => {
  const { fileSystem } = setup();
  const session = await Session.create('/deep/er/runs/run.jsonl', sessionMeta(), { fileSystem });
  await session.close();
  const order = fileSystem.calls
    .filter((call) => call.operation === 'sync' || call.operation === 'syncFolder')
    .map((call) => `${call.operation} ${call.path}`);
  assert.deepEqual(order, [
    'syncFolder /',
    'syncFolder /deep',
    'syncFolder /deep/er',
    'sync /deep/er/runs/run.jsonl',
    'syncFolder /deep/er/runs',
  ]);
  const modes = ['/deep', '/deep/er', '/deep/er/runs'].map((folder) =>
    (fileSystem.base as MemoryFileSystem).modeOf(folder),
  );
  assert.deepEqual(modes, [0o700, 0o700, 0o700]);
});

test('create refuses an existing transcript; a closed session refuses appends', async () => {
  const { memory } = setup();
  const session = await Session.create(PATH, sessionMeta(), { fileSystem: memory });
  await session.close();
  await session.close();
  assert.throws(() => session.append(textMessage('user', 'late')), expectSessionError('closed'));
  await assert.rejects(
    Session.create(PATH, sessionMeta(), { fileSystem: memory }),
    expectSessionError('exists'),
  );
  assert.equal(memory.openDescriptors(), 0);
  // The failed create released the lock.
  await (await Session.open(PATH, { fileSystem: memory })).close();
});

test('a record a reader would refuse is not appended: a TypeError, nothing written, its seq not used', async () => {
  const { memory } = setup();
  const session = await Session.create(PATH, sessionMeta(), { fileSystem: memory });
  await session.appendDurable(textMessage('user', 'first'));
  const before = await memory.readFile(PATH);
  const refused: RecordBody[] = [
    // Each would make the transcript unreadable from that line on.
    {
      type: 'tool-dispatched',
      callId: 'call_1',
      toolName: 'deploy',
      inputDigest: 'sha256:00',
      idempotency: 'unsafe',
    } as unknown as RecordBody,
    { type: 'message', role: 'user', content: 'not a list' } as unknown as RecordBody,
    { type: 'tool-settled', callId: 'call_1', status: 'maybe' } as unknown as RecordBody,
  ];
  for (const body of refused) {
    assert.throws(
      () => session.append(body),
      (error: unknown) =>
        error instanceof TypeError &&
        error.message.startsWith(
          `${PATH}: not appended, a reader would refuse this ${body.type} record: `,
        ),
    );
  }
  assert.deepEqual(await memory.readFile(PATH), before, 'nothing was written');
  const next = await session.appendDurable(textMessage('user', 'second'));
  assert.equal(next.seq, 2, 'no seq was used by a refused record');
  // A record of a type this version does not know is kept by readers, so it is written.
  await session.appendDurable({ type: 'future-kind', detail: 1 } as unknown as RecordBody);
  await session.close();
  const decoded = lines(await memory.readFile(PATH)).map((line) => decodeLine(line));
  assert.ok(decoded.every((line) => line.ok));
});

test('a failed repair leaves the file as it was, releases the lock and leaks nothing', async () => {
  for (const operation of ['write', 'sync', 'rename', 'syncFolder', 'truncate'] as const) {
    const { memory, fileSystem } = setup();
    memory.writeFile(PATH, `${await createdBytes()}{"v":1,"seq":1,"type":"mess`);
    const before = memory.readFile(PATH);
    // The nametag is left alone: failing to write it costs only the holder's name.
    const path = (file: string) => !file.includes('.owner');
    fileSystem.addRule({ operation, path, fault: { kind: 'error', code: 'EIO' } });
    await assert.rejects(Session.open(PATH, { fileSystem }), expectSessionError('io'));
    assert.equal(fileSystem.fired.length, 1, `${operation}: the fault fired`);
    if (operation !== 'truncate') assert.ok(memory.readFile(PATH).equals(before), operation);
    assert.equal(memory.openDescriptors(), 0, `${operation}: a descriptor leaked`);
    fileSystem.clearRules();
    const session = await Session.open(PATH, { fileSystem });
    await session.close();
    const records = await readAll(PATH, memory);
    assert.equal(records.length, 2, operation);
    assert.equal(records[1]?.tailRepair?.validBytes, (await createdBytes()).length);
  }
});

async function createdBytes(): Promise<string> {
  const memory = new MemoryFileSystem();
  await (
    await Session.create(PATH, sessionMeta(), { fileSystem: memory, clock: steppingClock() })
  ).close();
  return memory.readFile(PATH).toString();
}

test('a repair whose own record is torn is repaired again without losing the first sidecar', async () => {
  const { memory, fileSystem } = setup();
  const created = await createdBytes();
  memory.writeFile(PATH, `${created}first torn bytes`);
  // The checkpoint naming the repair is itself torn: its write stops after 20 bytes.
  fileSystem.addRule({ operation: 'write', path: PATH, fault: { kind: 'short-write', bytes: 20 } });
  await assert.rejects(Session.open(PATH, { fileSystem }), expectSessionError('poisoned'));
  assert.equal(fileSystem.fired.length, 1);
  assert.equal(memory.openDescriptors(), 0);
  const first = `/runs/run.jsonl.torn-${created.length}`;
  assert.equal(memory.readFile(first).toString(), 'first torn bytes');

  const session = await Session.open(PATH, { fileSystem });
  await session.close();
  assert.equal(memory.readFile(first).toString(), 'first torn bytes', 'the first sidecar is kept');
  const second = `${first}-2`;
  assert.equal(memory.readFile(second).length, 20);
  const records = await readAll(PATH, memory);
  assert.equal(records[1]?.tailRepair?.sidecar, `run.jsonl.torn-${created.length}-2`);
});

test('a repair interrupted after its sidecar was written reuses that sidecar', async () => {
  const { memory, fileSystem } = setup();
  const created = await createdBytes();
  memory.writeFile(PATH, `${created}torn`);
  fileSystem.addRule({ operation: 'truncate', path: PATH, fault: { kind: 'error', code: 'EIO' } });
  await assert.rejects(Session.open(PATH, { fileSystem }), expectSessionError('io'));
  assert.equal(fileSystem.fired.length, 1);
  await (await Session.open(PATH, { fileSystem })).close();
  const sidecars = memory.listFiles().filter((file) => file.includes('.torn-'));
  assert.deepEqual(sidecars, [`/runs/run.jsonl.torn-${created.length}`]);
});

test('checkpoints carry the folded state every checkpointBytes', async () => {
  const memory = new MemoryFileSystem();
  const session = await Session.create(PATH, sessionMeta(), {
    fileSystem: memory,
    checkpointBytes: 2000,
  });
  for (let index = 0; index < 40; index++) {
    await session.append(textMessage('user', `${index} ${'c'.repeat(200)}`));
  }
  await session.close();
  const records = await readAll(PATH, memory);
  const checkpoints = records.filter((record) => record.type === 'checkpoint');
  assert.ok(checkpoints.length >= 3, `${checkpoints.length} checkpoints`);
  for (const checkpoint of checkpoints) {
    const state = (checkpoint as unknown as { state: { lastSeq: number; records: number } }).state;
    assert.equal(state.lastSeq, checkpoint.seq - 1, 'the state is of everything before it');
    assert.equal(state.records, checkpoint.seq);
  }
});
