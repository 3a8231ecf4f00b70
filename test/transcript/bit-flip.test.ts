import assert from 'node:assert/strict';
import { test } from 'node:test';
import { peek } from '../../src/transcript/peek.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';
import { expectRepaired, expectUnreadable } from '../support/repair-checks.ts';
import { buildTranscript, sampleBodies } from '../support/transcripts.ts';

/*
 * Flip every bit of a small transcript, one at a time. Only bytes after the last newline can be
 * a crash's torn tail: a flip of the last newline leaves the last record without one, which is
 * repaired (its bytes to the sidecar, the repair named next, marked as possibly a dispatch). A
 * flip anywhere else is damage: unreadable, with the line — in the last line too, which may be
 * a durable record; an explicit salvage then cuts it off as a repair would. Never a silently
 * different transcript: whatever is read is the original's records, or all of them but the last.
 */

test('a flip of any bit: the last newline repaired, damage elsewhere (the last line salvageable), never different', async () => {
  const original = buildTranscript(sampleBodies(4, 12, 'f'));
  const count = original.lines.length;
  const lastStart = original.offsets[count - 1] ?? 0;
  const path = '/runs/run.jsonl';
  let repaired = 0;
  let refused = 0;
  let salvaged = 0;
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

      if (offset === original.bytes.length - 1) {
        assert.ok(seen.ok, `${label}: ${seen.ok ? '' : seen.detail}`);
        await expectRepaired(fileSystem, path, original, damaged, count - 1, label);
        repaired += 1;
      } else if (offset >= lastStart) {
        assert.ok(!seen.ok && seen.salvage !== undefined, label);
        await expectUnreadable(fileSystem, path, damaged, count, label);
        await expectRepaired(fileSystem, path, original, damaged, count - 1, label, {
          salvage: true,
        });
        salvaged += 1;
      } else {
        assert.ok(!seen.ok, label);
        await expectUnreadable(fileSystem, path, damaged, record + 1, label);
        refused += 1;
      }
    }
  }
  assert.equal(repaired, 8);
  assert.equal(salvaged, (original.bytes.length - 1 - lastStart) * 8);
  assert.equal(refused, lastStart * 8);
});
