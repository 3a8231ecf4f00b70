import assert from 'node:assert/strict';
import { mkdtemp, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Revival } from '../../src/revival/index.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { type FileSystem, nodeFileSystem } from '../../src/transcript/file-system.ts';
import { findSeqOffset } from '../../src/transcript/find-seq-offset.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';
import { seededRandom, testSeed } from '../support/seeded-random.ts';
import { writeCompactedRun } from './support/compacted-run.ts';
import { META, recordsOf } from './support/transcripts.ts';

/*
 * A run that compacted is revived from its last checkpoint and the records no compaction
 * removed, never the rest (docs/revival.md, "What revive reads"). The oracle is the full read:
 * the conversation revive hands back must be the view of every record of the file, as
 * `conversationView` defines it, whatever the compactions were.
 */

const PATH = '/runs/compacted.jsonl';

/** A file system that counts the bytes read through it. */
function countingReads(inner: FileSystem): { fileSystem: FileSystem; read: () => number } {
  let bytes = 0;
  return {
    fileSystem: {
      ...inner,
      read: async (fd, buffer, position) => {
        const got = await inner.read(fd, buffer, position);
        bytes += got;
        return got;
      },
    },
    read: () => bytes,
  };
}

describe('revive of a run that compacted', () => {
  test('the conversation handed back is the view of every record, for random compactions', async () => {
    const seed = testSeed('revive-compacted');
    const random = seededRandom(seed);
    let fromCheckpoint = 0;
    for (let round = 0; round < 40; round += 1) {
      const fileSystem = new MemoryFileSystem();
      fileSystem.makeFolderSync('/runs');
      await writeCompactedRun(fileSystem, PATH, random, 5 + Math.floor(random() * 60), {
        checkpointBytes: 256 + Math.floor(random() * 4096),
        padding: 400,
        oddRanges: round % 2 === 1,
      });
      const revived = await Revival.revive({
        path: PATH,
        agentId: META.agentId,
        maxRevivals: 2,
        fileSystem,
      });
      assert.ok(revived.ok, `seed ${seed} round ${round}: ${revived.ok ? '' : revived.detail}`);
      if (revived.session.openedFromCheckpoint !== null) fromCheckpoint += 1;
      await revived.session.close();
      // Closing adds a checkpoint, which is no part of the view.
      assert.deepEqual(
        revived.messages,
        conversationView(await recordsOf(PATH, fileSystem)),
        `seed ${seed} round ${round}: the view revive built is not the full read's`,
      );
      assert.deepEqual(revived.interrupted, ['last'], `seed ${seed} round ${round}`);
    }
    // Most rounds compact before their last checkpoint: the new path really ran.
    assert.ok(
      fromCheckpoint >= 10,
      `only ${fromCheckpoint} of 40 revives started from a checkpoint`,
    );
  });

  describe('on a real file', () => {
    test('revive reads a small part of a long compacted run; damage in what it skips is for the full check, damage in what the model sees refuses', async () => {
      const folder = await mkdtemp(join(tmpdir(), 'llm-agent-compacted-'));
      try {
        const path = join(folder, 'long.jsonl');
        await writeCompactedRun(nodeFileSystem, path, seededRandom(7), 1500, {
          checkpointBytes: 32 * 1024,
          padding: 4000,
          oddRanges: false,
        });
        const size = (await stat(path)).size;
        const text = await readFile(path, 'utf8');
        const lines = text.split('\n').slice(0, -1);
        // A compaction's range: a line well inside it, and the last compaction's line.
        const compactions = lines
          .map((line, index) => ({
            index,
            record: JSON.parse(line) as { type: string; toSeq?: number },
          }))
          .filter(({ record }) => record.type === 'compaction');
        assert.ok(compactions.length >= 3, 'the run compacted several times');
        const hidden = Math.floor((compactions.at(-1)?.record.toSeq as number) / 2);

        // Damage a byte inside the compacted range, keeping the length: its CRC no longer holds.
        const copy = join(folder, 'damaged-hidden.jsonl');
        await writeDamaged(path, copy, lines, hidden);
        const full = await Revival.inspect({ path: copy, maxRevivals: 2 });
        assert.equal(full.revivable, true, 'inspect reads the tail only');
        const counted = countingReads(nodeFileSystem);
        const revived = await Revival.revive({
          path: copy,
          agentId: META.agentId,
          maxRevivals: 2,
          fileSystem: counted.fileSystem,
        });
        assert.ok(revived.ok, revived.ok ? '' : revived.detail);
        assert.notEqual(revived.session.openedFromCheckpoint, null);
        await revived.session.close();
        // The fault is real: a full read refuses the copy at the damaged line.
        const fullRead = await Revival.inspect({ path: copy, maxRevivals: 2, verify: true });
        assert.equal(fullRead.reason, 'unreadable');
        assert.match(fullRead.detail ?? '', new RegExp(`:${hidden + 1}:`));
        assert.ok(size > 5_000_000, `the run is long (${size} bytes)`);
        assert.ok(
          counted.read() < 1024 * 1024,
          `revive read ${counted.read()} bytes of ${size}; it should read a small part`,
        );

        // Damage a line the model will see and inspect does not read (the first, the
        // session-meta): inspect says revivable; revive's own read refuses, naming the line.
        const seen = join(folder, 'damaged-seen.jsonl');
        await writeDamaged(path, seen, lines, 0);
        const inspected = await Revival.inspect({ path: seen, maxRevivals: 2 });
        assert.equal(inspected.revivable, true, 'the damage is outside what inspect reads');
        const before = await readFile(seen);
        const refused = await Revival.revive({ path: seen, agentId: META.agentId, maxRevivals: 2 });
        assert.equal(refused.ok, false);
        assert.equal(refused.ok ? '' : refused.reason, 'unreadable');
        assert.match(refused.ok ? '' : refused.detail, /damaged-seen\.jsonl:1: /);
        assert.ok((await readFile(seen)).equals(before), 'nothing written');
      } finally {
        await rm(folder, { recursive: true, force: true });
      }
    });
  });

  test('findSeqOffset finds the line of every seq, and null for a seq past the end', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'llm-agent-seq-offset-'));
    try {
      const path = join(folder, 'run.jsonl');
      await writeCompactedRun(nodeFileSystem, path, seededRandom(11), 300, {
        checkpointBytes: 8 * 1024,
        padding: 3000,
        oddRanges: true,
      });
      const bytes = await readFile(path);
      const offsets = [0];
      for (
        let at = bytes.indexOf(0x0a);
        at !== -1 && at + 1 < bytes.length;
        at = bytes.indexOf(0x0a, at + 1)
      ) {
        offsets.push(at + 1);
      }
      const handle = await open(path, 'r');
      const fd = await nodeFileSystem.open(path, 'read');
      try {
        for (const [seq, offset] of offsets.entries()) {
          assert.equal(
            await findSeqOffset(nodeFileSystem, fd, bytes.length, seq),
            offset,
            `seq ${seq}`,
          );
        }
        assert.equal(await findSeqOffset(nodeFileSystem, fd, bytes.length, offsets.length), null);
        assert.equal(await findSeqOffset(nodeFileSystem, fd, bytes.length, -1), null);
      } finally {
        await nodeFileSystem.close(fd);
        await handle.close();
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

/** Copy `lines` to `to` with one byte of line `index` changed (same length, CRC broken). */
async function writeDamaged(
  from: string,
  to: string,
  lines: string[],
  index: number,
): Promise<void> {
  const line = lines[index] as string;
  const at = line.indexOf('"type"') + 2;
  const changed = line.slice(0, at) + (line[at] === 'x' ? 'y' : 'x') + line.slice(at + 1);
  const copy = [...lines];
  copy[index] = changed;
  await writeFile(to, `${copy.join('\n')}\n`, { mode: 0o600 });
  assert.notEqual((await readFile(from, 'utf8')).split('\n')[index], changed, 'the damage is real');
}
