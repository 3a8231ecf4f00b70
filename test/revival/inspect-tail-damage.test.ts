import assert from 'node:assert/strict';
import { test } from 'node:test';
import { crc32 } from 'node:zlib';
import { readTailState } from '../../src/transcript/read-tail-state.ts';
import { Session } from '../../src/transcript/session.ts';
import { abandonSession } from '../support/abandon-session.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { assistant, fixedClock, META, user } from './support/transcripts.ts';

const seed = Number(process.env.SEED ?? Date.now());
console.log(`inspect-tail-damage: seed ${seed} (replay with SEED=${seed})`);

const PATH = '/runs/a.jsonl';
const WINDOW = 4096;

/**
 * A transcript with a checkpoint every `checkpointBytes` (600 unless said), so the window holds
 * lines before one.
 * `close` ends it with the closing checkpoint; `die` leaves records after the last checkpoint,
 * which the tail read folds.
 */
async function written(
  random: () => number,
  ending: 'close' | 'die' = 'close',
  checkpointBytes = 600,
): Promise<Buffer> {
  const fileSystem = new MemoryFileSystem();
  const session = await Session.create(PATH, META, {
    fileSystem,
    durability: 'none',
    clock: fixedClock(),
    checkpointBytes,
  });
  const turns = 30 + Math.floor(random() * 30);
  for (let turn = 0; turn < turns; turn++) {
    const text = 'w'.repeat(20 + Math.floor(random() * 200));
    await session.append(turn % 2 === 0 ? user(text) : assistant(text));
  }
  if (ending === 'close') await session.close();
  else await abandonSession(session, fileSystem);
  return fileSystem.readFile(PATH);
}

/** A line with a checksum that matches it, whatever its JSON: as a writer that is not ours. */
function checksummed(json: string): Buffer {
  const crc = crc32(Buffer.from(json)).toString(16).padStart(8, '0');
  return Buffer.from(`${json.slice(0, -1)},"crc":"${crc}"}\n`);
}

/** `bytes` read by a full scan and by the tail read (a {@link WINDOW}-byte window). */
async function readBothWays(bytes: Buffer) {
  const fileSystem = new MemoryFileSystem();
  fileSystem.writeFile(PATH, bytes);
  return {
    full: await readTailState(PATH, { fileSystem, strategy: 'full' }),
    fast: await readTailState(PATH, { fileSystem, windowBytes: WINDOW }),
  };
}

/** Line starts of `bytes` (every line ends with a newline). */
function lineStarts(bytes: Buffer): number[] {
  const starts: number[] = [];
  for (let at = 0; at < bytes.length; at = bytes.indexOf(0x0a, at) + 1) starts.push(at);
  return starts;
}

type Mutation = 'flip' | 'delete' | 'junk' | 'duplicate';

function mutate(bytes: Buffer, kind: Mutation, start: number, end: number, random: () => number) {
  const line = bytes.subarray(start, end);
  switch (kind) {
    case 'flip': {
      const copy = Buffer.from(bytes);
      const at = start + Math.floor(random() * (end - start - 1));
      const flipped = (copy[at] as number) ^ (1 << Math.floor(random() * 7));
      copy[at] = flipped === 0x0a ? (copy[at] as number) ^ 0x40 : flipped;
      return copy;
    }
    case 'delete':
      return Buffer.concat([bytes.subarray(0, start), bytes.subarray(end)]);
    case 'junk':
      return Buffer.concat([
        bytes.subarray(0, start),
        Buffer.from('junk\n'),
        bytes.subarray(start),
      ]);
    case 'duplicate':
      return Buffer.concat([bytes.subarray(0, end), line, bytes.subarray(end)]);
  }
}

test('damage in the window before the last checkpoint is seen, and named as a full scan names it', async () => {
  const random = seededRandom(seed);
  const kinds: Mutation[] = ['flip', 'delete', 'junk', 'duplicate'];
  let damagedSeen = 0;
  for (let round = 0; round < 300; round++) {
    const original = await written(random, round % 3 === 0 ? 'die' : 'close');
    const starts = lineStarts(original);
    const windowStart = original.length - WINDOW;
    const lastCheckpoint = original.lastIndexOf('"type":"checkpoint"');
    const checkpointLine = starts.filter((at) => at < lastCheckpoint).at(-1) as number;
    // A line before the last checkpoint whose previous line is whole inside the window too
    // (with room for the bytes a mutation adds, which move the window): a full scan names a
    // bad line from the seq of the line before it.
    const candidates = starts
      .map((at, index) => ({
        at,
        end: starts[index + 1] ?? original.length,
        previous: starts[index - 1] ?? -1,
      }))
      .filter(({ at, previous }) => previous > windowStart + 400 && at < checkpointLine);
    if (candidates.length === 0) continue;
    const target = candidates[Math.floor(random() * candidates.length)] as (typeof candidates)[0];
    const kind = kinds[round % kinds.length] as Mutation;
    const bytes = mutate(original, kind, target.at, target.end, random);
    const { full, fast } = await readBothWays(bytes);
    // The fault happened: a full scan refuses the file.
    assert.ok(
      !full.ok && full.reason === 'damaged',
      `round ${round} ${kind}: ${JSON.stringify(full)}`,
    );
    assert.ok(!fast.ok, `round ${round} ${kind}: the tail read missed the damage`);
    assert.equal(fast.reason, 'damaged');
    assert.equal(fast.detail, full.detail, `round ${round} ${kind}`);
    assert.equal(fast.line, full.line);
    damagedSeen += 1;
  }
  assert.ok(damagedSeen > 200, `${damagedSeen} rounds damaged a line in the window`);
});

test('damage after the last checkpoint, in what the tail read folds, is named as a full scan names it', async () => {
  const random = seededRandom(seed + 2);
  const kinds: Mutation[] = ['flip', 'delete', 'junk', 'duplicate'];
  let damagedSeen = 0;
  for (let round = 0; round < 200; round++) {
    // Checkpoints far enough apart that several records follow the last one.
    const original = await written(random, 'die', 2000 + Math.floor(random() * 2000));
    const starts = lineStarts(original);
    const lastCheckpoint = original.lastIndexOf('"type":"checkpoint"');
    // A whole line after the checkpoint's, not the last one (a bad last line is a torn tail).
    const after = starts
      .map((at, index) => ({ at, end: starts[index + 1] ?? original.length }))
      .filter(({ at, end }) => at > lastCheckpoint && end < original.length);
    if (after.length === 0) continue;
    const target = after[Math.floor(random() * after.length)] as (typeof after)[0];
    const kind = kinds[round % kinds.length] as Mutation;
    const bytes = mutate(original, kind, target.at, target.end, random);
    const { full, fast } = await readBothWays(bytes);
    assert.ok(!full.ok, `round ${round} ${kind}: the fault did not damage the file`);
    assert.ok(!fast.ok, `round ${round} ${kind}: the tail read missed the damage`);
    assert.equal(fast.reason, full.reason, `round ${round} ${kind}`);
    assert.equal(fast.detail, full.detail, `round ${round} ${kind}`);
    assert.equal(fast.line, full.line, `round ${round} ${kind}`);
    damagedSeen += 1;
  }
  assert.ok(damagedSeen > 100, `${damagedSeen} rounds damaged a line after the checkpoint`);
});

test('a line before the checkpoint that another writer checksummed: its seq is read, or it is named as a full scan names it', async () => {
  const random = seededRandom(seed + 3);
  const original = await written(random, 'close');
  const starts = lineStarts(original);
  const lastCheckpoint = original.lastIndexOf('"type":"checkpoint"');
  const index = starts.filter((at) => at < lastCheckpoint).length - 3;
  const at = starts[index] as number;
  const end = starts[index + 1] as number;
  const record = JSON.parse(original.subarray(at, end).toString()) as Record<string, unknown>;
  const { crc: _crc, ...fields } = record;
  const reordered = JSON.stringify({ type: fields.type, ...fields });
  const cases = [
    { name: 'the same record, keys in another order', line: checksummed(reordered), ok: true },
    { name: 'not a record at all', line: checksummed('{"hello":"world"}'), ok: false },
  ];
  for (const { name, line, ok } of cases) {
    const { full, fast } = await readBothWays(
      Buffer.concat([original.subarray(0, at), line, original.subarray(end)]),
    );
    assert.equal(full.ok, ok, `${name}: ${JSON.stringify(full)}`);
    assert.equal(fast.ok, ok, `${name}: ${JSON.stringify(fast)}`);
    if (full.ok && fast.ok) assert.deepEqual(fast.state, full.state, name);
    if (!full.ok && !fast.ok) {
      assert.equal(fast.line, full.line, name);
      assert.equal(fast.reason, full.reason, name);
    }
  }
});

test('an undamaged file is never called damaged by the window check', async () => {
  const random = seededRandom(seed + 1);
  for (let round = 0; round < 100; round++) {
    const fileSystem = new MemoryFileSystem();
    fileSystem.writeFile(PATH, await written(random, round % 2 === 0 ? 'close' : 'die'));
    const windowBytes = 64 + Math.floor(random() * 6000);
    const full = await readTailState(PATH, { fileSystem, strategy: 'full' });
    const fast = await readTailState(PATH, { fileSystem, windowBytes });
    assert.ok(full.ok && fast.ok, `round ${round}, window ${windowBytes}`);
    assert.deepEqual(fast.state, full.state);
  }
});
