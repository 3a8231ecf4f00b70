import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecordingFileSystem } from '../../crashtest/recording-file-system.ts';
import { encodeLine } from '../../src/transcript/line-codec.ts';
import { peek } from '../../src/transcript/peek.ts';
import type { RecordBody } from '../../src/transcript/records.ts';
import { Session } from '../../src/transcript/session.ts';

/*
 * A crash image the crashtest found refused as damage: two appends between barriers, the
 * power cut landing the first all but its newline while the file's size already covered the
 * second (size before content: its bytes are zeros). Nothing in it was acknowledged and
 * nothing was lost in the middle — the tail is the next record without its newline, then
 * zeros — so it is a torn tail, to be repaired, not damage.
 */

const bodies: RecordBody[] = [
  { type: 'session-meta', agentId: 'main', agentType: 'main', label: 'main', model: 'test:model' },
  { type: 'message', role: 'user', content: [{ type: 'text', text: 'hello' }] },
  { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'hi' }] },
];
const lines = bodies.map(
  (body, seq) => encodeLine({ v: 1, seq, at: '2026-01-01T00:00:00.000Z' }, body).bytes,
);

describe('a torn tail of a record that lost its newline, then zeros', () => {
  for (const zeros of [0, 1, 2, 253]) {
    it(`is repaired (newline byte lost, ${zeros} more zero bytes)`, async () => {
      const acknowledged = Buffer.concat([lines[0] as Buffer, lines[1] as Buffer]);
      const next = (lines[2] as Buffer).subarray(0, -1);
      const image = Buffer.concat([acknowledged, next, Buffer.alloc(1 + zeros)]);
      const fileSystem = RecordingFileSystem.fromFiles(new Map([['/t.jsonl', image]]));
      const read = await peek('/t.jsonl', { fileSystem });
      assert.ok(read.ok, read.ok ? '' : read.detail);
      assert.equal(read.state, 'torn-tail');
      assert.equal(read.validBytes, acknowledged.length);
      const session = await Session.open('/t.jsonl', { fileSystem });
      await session.close();
      assert.deepEqual(
        fileSystem.fileBytes('/t.jsonl')?.subarray(0, acknowledged.length),
        acknowledged,
      );
    });
  }
});
