import assert from 'node:assert/strict';
import { test } from 'node:test';
import { STREAM_AFTER_BYTES } from '../../src/transcript/line-scanner.ts';
import { type ScanResult, scanTranscript } from '../../src/transcript/scan-transcript.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';
import { seededRandom, testSeed } from '../support/seeded-random.ts';
import { buildTranscript, sampleBodies } from '../support/transcripts.ts';

/*
 * The scanner's classification beyond the torn-tail sweeps: reads in tiny chunks give the same
 * answers as whole-file reads, and whole lines that were changed after they were written are
 * damage, never a torn tail.
 */

const PATH = '/t.jsonl';

async function scan(bytes: Buffer, chunkBytes?: number): Promise<ScanResult> {
  const fileSystem = new MemoryFileSystem();
  fileSystem.writeFile(PATH, bytes);
  return scanTranscript(
    PATH,
    chunkBytes === undefined ? { fileSystem } : { fileSystem, chunkBytes },
  );
}

test('reading in chunks of 1, 7, 64 and 4096 bytes classifies exactly as whole reads', async () => {
  const random = seededRandom(testSeed('scan-chunks'));
  const built = buildTranscript(sampleBodies(12, 700, 'c'));
  for (let round = 0; round < 60; round++) {
    let bytes = built.bytes.subarray(0, Math.floor(random() * (built.bytes.length + 1)));
    if (round % 3 === 1) {
      bytes = Buffer.from(bytes);
      const at = Math.floor(random() * bytes.length);
      bytes[at] = (bytes[at] ?? 0) ^ 0x10;
    }
    const whole = await scan(bytes);
    for (const chunkBytes of [1, 7, 64, 4096]) {
      assert.deepEqual(
        await scan(bytes, chunkBytes),
        whole,
        `round ${round}, chunks of ${chunkBytes}`,
      );
    }
  }
});

test('a record out of seq, a repeated last line or a whole old record without its newline is damage', async () => {
  const built = buildTranscript(sampleBodies(5, 20));
  const lastLine = built.lines[4] ?? Buffer.alloc(0);
  const repeated = await scan(Buffer.concat([built.bytes, lastLine]));
  assert.ok(!repeated.ok && repeated.reason === 'damaged' && repeated.line === 6);
  assert.match(repeated.detail, /:6: seq 4 where 5 was expected$/);

  const gap = await scan(Buffer.concat([...built.lines.slice(0, 3), ...built.lines.slice(4)]));
  assert.ok(!gap.ok && gap.line === 4);
  assert.match(gap.detail, /seq 4 where 3 was expected/);

  const unterminated = await scan(Buffer.concat([built.bytes, lastLine.subarray(0, -1)]));
  assert.ok(
    !unterminated.ok && unterminated.reason === 'damaged',
    'a whole old record is not torn',
  );
});

test('whole lines changed after they were written are damage, not a torn tail; only bytes after the last newline are', async () => {
  const built = buildTranscript(sampleBodies(6, 30));
  const edited = Buffer.concat([
    built.lines[0] ?? Buffer.alloc(0),
    Buffer.from(built.lines.slice(1).join('').replaceAll('"at":"2026', '"at":"2025')),
  ]);
  const result = await scan(edited);
  assert.ok(!result.ok, JSON.stringify(result));
  assert.equal(result.reason, 'damaged');
  assert.equal(result.line, 2);
  assert.match(result.detail, /5 lines end in one/);
  assert.deepEqual(result.salvage, {
    validBytes: built.offsets[1],
    badBytes: edited.length - (built.offsets[1] ?? 0),
    lines: 5,
  });
  // One garbled last line that ends in its newline may be a durable record: damage too.
  const last = Buffer.from(built.bytes);
  const at = (built.offsets[5] ?? 0) + 40;
  last[at] = (last[at] ?? 0) ^ 1;
  const flipped = await scan(last);
  assert.ok(!flipped.ok && flipped.reason === 'damaged' && flipped.line === 6);
  assert.match(flipped.detail, /it may be a durable record.*--salvage/);
  assert.equal(flipped.salvage?.lines, 1);
  // Without its newline it is what a crash leaves: a torn tail.
  const torn = await scan(last.subarray(0, -1));
  assert.ok(torn.ok && torn.state === 'torn-tail' && torn.records === 5);
  // Damage followed by a good record is never salvageable.
  const middle = Buffer.from(built.bytes);
  const inMiddle = (built.offsets[3] ?? 0) + 40;
  middle[inMiddle] = (middle[inMiddle] ?? 0) ^ 1;
  const refused = await scan(middle);
  assert.ok(!refused.ok && refused.line === 4 && refused.salvage === undefined);
});

test('a record longer than the scan buffers is streamed, then read again and decoded; as a torn or damaged last line it is classified without being held', async () => {
  const huge = 'x'.repeat(STREAM_AFTER_BYTES + 1024);
  const built = buildTranscript([
    ...sampleBodies(3, 20),
    { type: 'message', role: 'user', content: [{ type: 'text', text: huge }] },
    ...sampleBodies(2, 20, 'after'),
  ]);
  const whole = await scan(built.bytes);
  assert.ok(whole.ok && whole.state === 'clean' && whole.records === 6, JSON.stringify(whole));
  const fileSystem = new MemoryFileSystem();
  fileSystem.writeFile(PATH, built.bytes);
  const seen: number[] = [];
  await scanTranscript(PATH, { fileSystem, onRecord: (record) => seen.push(record.seq) });
  assert.deepEqual(seen, [0, 1, 2, 3, 4, 5]);
  // The huge record last: without its newline it is the next record that lost it (torn);
  // with a flipped bit and its newline, damage that names it.
  const last = built.offsets[4] ?? 0;
  const upToHuge = built.bytes.subarray(0, last);
  const torn = await scan(upToHuge.subarray(0, -1));
  assert.ok(torn.ok && torn.state === 'torn-tail' && torn.records === 3, JSON.stringify(torn));
  assert.equal(torn.torn?.reason, 'the last line has no newline');
  const flipped = Buffer.from(upToHuge);
  const at = (built.offsets[3] ?? 0) + 5000;
  flipped[at] = (flipped[at] ?? 0) ^ 1;
  const damaged = await scan(flipped);
  assert.ok(!damaged.ok && damaged.line === 4 && damaged.salvage?.lines === 1);
  assert.match(damaged.detail, /the checksum does not match the line/);
});
