import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newWorld } from '../../crashtest/agents.ts';
import { acknowledgedPrefix, checkInvariants, noBreaches } from '../../crashtest/invariants.ts';
import { crashFiles, RecordingFileSystem } from '../../crashtest/recording-file-system.ts';
import { runTree } from '../../crashtest/revive-tree.ts';
import { peek } from '../../src/transcript/peek.ts';
import type { TranscriptRecord } from '../../src/transcript/records.ts';

/*
 * The checker and the crash VFS can fail: each invariant, fed a state that breaks it, reports
 * it; and the recording file system's images really lose, tear and zero unsynced writes.
 */

async function finishedTree() {
  const fileSystem = new RecordingFileSystem();
  const world = newWorld();
  await runTree('/runs/main.jsonl', 'tree', {
    fileSystem,
    world,
    durability: 'fsync',
    maxRevivals: 2,
  });
  const transcripts = [];
  for (const path of fileSystem.listFiles().filter((name) => name.endsWith('.jsonl'))) {
    const read = await peek(path, { fileSystem });
    assert.ok(read.ok);
    transcripts.push({ path, records: read.records, state: 'finished' });
  }
  const finalBytes = new Map(
    fileSystem.listFiles().map((path) => [path, fileSystem.fileBytes(path) as Buffer]),
  );
  return { fileSystem, world, transcripts, finalBytes };
}

describe('invariant checker', () => {
  it('passes a clean tree and reports each breach fed to it', async () => {
    const tree = await finishedTree();
    const input = {
      where: 'test',
      acknowledged: new Map([
        ['/runs/main.jsonl', tree.finalBytes.get('/runs/main.jsonl') as Buffer],
      ]),
      finalBytes: tree.finalBytes,
      transcripts: tree.transcripts,
      executions: tree.world.executions,
      maxRevivals: 2,
      allowUnreadable: false,
    };
    const clean = noBreaches();
    checkInvariants(input, clean);
    assert.deepEqual(clean, noBreaches());
    assert.equal(tree.world.executions.length, 2);

    const lost = noBreaches();
    const cut = new Map(tree.finalBytes);
    cut.set('/runs/main.jsonl', (cut.get('/runs/main.jsonl') as Buffer).subarray(0, 100));
    checkInvariants({ ...input, finalBytes: cut }, lost);
    assert.equal(lost.lost.length, 1);

    const doubled = noBreaches();
    checkInvariants(
      { ...input, executions: [...tree.world.executions, tree.world.executions[0] as never] },
      doubled,
    );
    assert.equal(doubled.doubled.length, 1);

    const capped = noBreaches();
    const withRevival = tree.transcripts.map((transcript) => ({
      ...transcript,
      records: [
        ...(transcript.records as TranscriptRecord[]),
        {
          type: 'run-revived',
          v: 1,
          seq: 999,
          at: '',
          ordinal: 3,
          maxRevivals: 2,
          afterSeq: 1,
          interrupted: [],
          completedUnpersisted: [],
          orphaned: [],
        } as TranscriptRecord,
      ],
    }));
    checkInvariants({ ...input, transcripts: withRevival, maxRevivals: 0 }, capped);
    assert.ok(capped.failed.some((line) => line.includes('run-revived')));

    const unsettled = noBreaches();
    const dropSettles = tree.transcripts.map((transcript) => ({
      ...transcript,
      records: (transcript.records as TranscriptRecord[]).filter(
        (record) => record.type !== 'tool-settled',
      ),
    }));
    checkInvariants({ ...input, transcripts: dropSettles }, unsettled);
    assert.ok(unsettled.failed.some((line) => line.includes('never settled')));
  });
});

describe('recording file system', () => {
  it('keeps, drops, tears and zero-fills unsynced writes; drops names never synced', async () => {
    const fileSystem = new RecordingFileSystem();
    await fileSystem.makeFolder('/a');
    await fileSystem.syncFolder('/');
    const fd = await fileSystem.open('/a/f', 'create');
    await fileSystem.write(fd, Buffer.from('one\n'));
    await fileSystem.sync(fd);
    await fileSystem.write(fd, Buffer.from('two\n'));
    const snapshot = fileSystem.snapshot();
    const kept = crashFiles(snapshot, () => ({ kind: 'kept' }), 'all-current');
    assert.equal(kept.get('/a/f')?.toString(), 'one\ntwo\n');
    assert.equal(crashFiles(snapshot, () => ({ kind: 'kept' }), 'durable-only').has('/a/f'), false);
    await fileSystem.syncFolder('/a');
    const after = fileSystem.snapshot();
    assert.equal(
      crashFiles(after, () => ({ kind: 'dropped' }), 'durable-only')
        .get('/a/f')
        ?.toString(),
      'one\n',
    );
    assert.equal(
      crashFiles(after, () => ({ kind: 'torn', at: 2 }), 'durable-only')
        .get('/a/f')
        ?.toString(),
      'one\ntw',
    );
    assert.deepEqual(
      [...(crashFiles(after, () => ({ kind: 'zeroed' }), 'durable-only').get('/a/f') ?? [])].slice(
        4,
      ),
      [0, 0, 0, 0],
    );
    assert.equal(acknowledgedPrefix(Buffer.from('junk\n')).length, 0);
  });
});
