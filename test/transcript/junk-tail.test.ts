import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeLine } from '../../src/transcript/line-codec.ts';
import { peek } from '../../src/transcript/peek.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';
import { expectRepaired, expectUnreadable } from '../support/repair-checks.ts';
import { randomBytesFrom, seededRandom, testSeed } from '../support/seeded-random.ts';
import { buildTranscript, metaBody, textMessage } from '../support/transcripts.ts';

/*
 * What a crash can leave after the last newline — NULs (the file grew before its content
 * landed), random bytes, half a UTF-8 character, zeros over the last newline — is a torn tail:
 * repaired, the bytes in the sidecar. Bad bytes that end in a newline — random bytes with
 * newlines, a zeroed sector inside the last record — may be a durable record changed since:
 * damage, refused by default and cut off into the sidecar only by an explicit salvage. The
 * same zeroed sector inside a middle record is damage that is never salvaged.
 */

const SIZES = [1, 7, 511, 512, 4096, 16384];
const PATH = '/runs/run.jsonl';
const big = (tag: string) => `${tag} ${'ça va, 日本語 '.repeat(1500)}`.slice(0, 20000);
const original = buildTranscript([
  metaBody(),
  textMessage('user', big('first')),
  textMessage('assistant', big('middle')),
  textMessage('user', 'short'),
  textMessage('assistant', big('last')),
]);
const count = original.lines.length;

function check(damaged: Buffer) {
  const fileSystem = new MemoryFileSystem();
  fileSystem.writeFile(PATH, damaged);
  return fileSystem;
}

/** The start of the next record's line, cut so that it ends inside a 3-byte character. */
function halfCharacterTail(size: number): Buffer {
  const next = encodeLine(
    { v: 1, seq: count, at: '2026-01-02T00:00:00.000Z' },
    { type: 'message', role: 'user', content: [{ type: 'text', text: '日本語'.repeat(8000) }] },
  ).bytes;
  let end = Math.max(size, 2);
  while (((next[end - 1] ?? 0) & 0xc0) !== 0xc0 && end < next.length) end += 1;
  const tail = next.subarray(0, end);
  assert.equal((tail.at(-1) ?? 0) & 0xe0, 0xe0, 'the tail ends in a lead byte');
  return tail;
}

test('junk after the last record: without a newline a repaired torn tail, with one damage (salvageable)', async () => {
  const random = seededRandom(testSeed('junk-tail'));
  for (const size of SIZES) {
    const junk = randomBytesFrom(random, size);
    if (size >= 7) junk[Math.floor(size / 2)] = 0x0a;
    const tails: [string, Buffer][] = [
      ['NULs', Buffer.alloc(size)],
      ['random bytes', junk],
      ['half a UTF-8 character', halfCharacterTail(size)],
    ];
    for (const [kind, tail] of tails) {
      const label = `${kind}, ${size} bytes`;
      const damaged = Buffer.concat([original.bytes, tail]);
      const fileSystem = check(damaged);
      const seen = await peek(PATH, { fileSystem });
      if (tail.includes(0x0a)) {
        assert.ok(!seen.ok && seen.reason === 'damaged', `${label}: ${JSON.stringify(seen)}`);
        assert.equal(seen.line, count + 1, label);
        assert.equal(seen.salvage?.badBytes, tail.length, label);
        await expectUnreadable(fileSystem, PATH, damaged, count + 1, label);
        await expectRepaired(fileSystem, PATH, original, damaged, count, label, { salvage: true });
        continue;
      }
      assert.ok(seen.ok && seen.state === 'torn-tail', `${label}: ${JSON.stringify(seen)}`);
      assert.equal(seen.torn?.tornBytes, tail.length, label);
      assert.equal(seen.records.length, count, label);
      await expectRepaired(fileSystem, PATH, original, damaged, count, label);
    }
  }
});

test('a zeroed sector inside the last record is salvageable damage; inside a middle record, damage', async () => {
  const lastStart = original.offsets[count - 1] ?? 0;
  const middleStart = original.offsets[2] ?? 0;
  for (const size of SIZES) {
    for (const into of [37, 4096]) {
      const last = Buffer.from(original.bytes);
      last.fill(0, lastStart + into, lastStart + into + size);
      assert.ok(lastStart + into + size < last.length, 'the zeros stay inside the last record');
      const label = `${size} zero bytes at +${into} of the last record`;
      const seen = await peek(PATH, { fileSystem: check(last) });
      assert.ok(!seen.ok && seen.salvage !== undefined, `${label}: ${JSON.stringify(seen)}`);
      await expectUnreadable(check(last), PATH, last, count, label);
      await expectRepaired(check(last), PATH, original, last, count - 1, label, { salvage: true });

      const middle = Buffer.from(original.bytes);
      middle.fill(0, middleStart + into, middleStart + into + size);
      assert.ok(middleStart + into + size < (original.offsets[3] ?? 0), 'inside the middle record');
      const where = `${size} zero bytes at +${into} of record 2`;
      const refused = await peek(PATH, { fileSystem: check(middle) });
      assert.ok(!refused.ok && refused.reason === 'damaged' && refused.line === 3, where);
      assert.equal(refused.salvage, undefined, where);
      await expectUnreadable(check(middle), PATH, middle, 3, where);
    }
  }
});

test('a zeroed sector spanning the end of the file, over the last newline, is a torn tail', async () => {
  const lastStart = original.offsets[count - 1] ?? 0;
  for (const size of SIZES) {
    const start = Math.max(lastStart + 1, original.bytes.length - Math.ceil(size / 2));
    const damaged = Buffer.concat([original.bytes.subarray(0, start), Buffer.alloc(size)]);
    await expectRepaired(
      check(damaged),
      PATH,
      original,
      damaged,
      count - 1,
      `${size} zeros at the end`,
    );
  }
});
