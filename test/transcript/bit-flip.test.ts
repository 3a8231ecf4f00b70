import assert from 'node:assert/strict';
import { test } from 'node:test';
import { peek } from '../../src/transcript/peek.ts';
import { MemoryFileSystem } from '../support/memory-file-system.ts';
import { expectRepaired, expectUnreadable } from '../support/repair-checks.ts';
import { buildTranscript, sampleBodies } from '../support/transcripts.ts';

/*
 * Flip every bit of a small transcript, one at a time. A flip in the last record is a crash's
 * torn tail: repaired (the record's bytes to the sidecar, the repair named next) and reported.
 * A flip anywhere else is damage: unreadable, with the line. Never a silently different
 * transcript: whatever is read is the original's records, or all of them but the last.
 */

test('a flip of any bit: repaired in the last record, unreadable elsewhere, never different', async () => {
  const original = buildTranscript(sampleBodies(4, 12, 'f'));
  const count = original.lines.length;
  const lastStart = original.offsets[count - 1] ?? 0;
  const path = '/runs/run.jsonl';
  let repaired = 0;
  let refused = 0;
  for (let offset = 0; offset < original.bytes.length; offset++) {
    const record = original.offsets.findLastIndex((start) => start <= offset);
    for (let bit = 0; bit < 8; bit++) {
      const label = `byte ${offset} (record ${record}) bit ${bit}`;
      const damaged = Buffer.from(original.bytes);
      damaged[offset] = (damaged[offset] ?? 0) ^ (1 << bit);
      const fileSystem = new MemoryFileSystem();
      fileSystem.writeFile(path, damaged);

      const seen = await peek(path, { fileSystem });
      if (seen.ok) {
        // Only ever the original without its last record, reported as a torn tail.
        assert.equal(seen.state, 'torn-tail', label);
        assert.deepEqual(seen.records, original.records.slice(0, count - 1), label);
      } else {
        assert.equal(seen.reason, 'damaged', `${label}: ${seen.detail}`);
      }

      if (offset >= lastStart) {
        assert.ok(seen.ok, `${label}: ${seen.ok ? '' : seen.detail}`);
        await expectRepaired(fileSystem, path, original, damaged, count - 1, label);
        repaired += 1;
      } else {
        assert.ok(!seen.ok, label);
        await expectUnreadable(fileSystem, path, damaged, record + 1, label);
        refused += 1;
      }
    }
  }
  assert.equal(repaired, (original.bytes.length - lastStart) * 8);
  assert.equal(refused, lastStart * 8);
});
