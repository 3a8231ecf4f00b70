import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readTailState } from '../../src/revival/read-tail-state.ts';
import { Session } from '../../src/transcript/session.ts';
import { MemoryFileSystem } from '../support/memory-file-system.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { assistant, fixedClock, META, user } from './support/transcripts.ts';

const seed = Number(process.env.SEED ?? Date.now());
console.log(`inspect-tail-damage: seed ${seed} (replay with SEED=${seed})`);

const PATH = '/runs/a.jsonl';
const WINDOW = 4096;

/** A transcript with a checkpoint every ~600 bytes, so the window holds lines before one. */
async function written(random: () => number): Promise<Buffer> {
  const fileSystem = new MemoryFileSystem();
  const session = await Session.create(PATH, META, {
    fileSystem,
    durability: 'none',
    clock: fixedClock(),
    checkpointBytes: 600,
  });
  const turns = 30 + Math.floor(random() * 30);
  for (let turn = 0; turn < turns; turn++) {
    const text = 'w'.repeat(20 + Math.floor(random() * 200));
    await session.append(turn % 2 === 0 ? user(text) : assistant(text));
  }
  await session.close();
  return fileSystem.readFile(PATH);
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
    const original = await written(random);
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
    const fileSystem = new MemoryFileSystem();
    fileSystem.writeFile(PATH, bytes);
    const full = await readTailState(PATH, { fileSystem, strategy: 'full' });
    const fast = await readTailState(PATH, { fileSystem, windowBytes: WINDOW });
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

test('an undamaged file is never called damaged by the window check', async () => {
  const random = seededRandom(seed + 1);
  for (let round = 0; round < 100; round++) {
    const fileSystem = new MemoryFileSystem();
    fileSystem.writeFile(PATH, await written(random));
    const windowBytes = 64 + Math.floor(random() * 6000);
    const full = await readTailState(PATH, { fileSystem, strategy: 'full' });
    const fast = await readTailState(PATH, { fileSystem, windowBytes });
    assert.ok(full.ok && fast.ok, `round ${round}, window ${windowBytes}`);
    assert.deepEqual(fast.state, full.state);
  }
});
