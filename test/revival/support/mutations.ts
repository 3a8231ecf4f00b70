import type { FileSystem } from '../../../src/transcript/file-system.ts';
import { FaultyFileSystem } from '../../../src/testing/index.ts';
import { MemoryFileSystem } from '../../../src/testing/index.ts';
import {
  assistant,
  call,
  dispatch,
  parallelBatch,
  result,
  settle,
  user,
  writeTranscript,
} from './transcripts.ts';

/*
 * Seeded mutations of real transcripts, for the never-throws fuzz tests of inspect and revive.
 */

/** The FileSystem calls that can change a file. */
export const MUTATING = new Set([
  'write',
  'sync',
  'truncate',
  'rename',
  'syncFolder',
  'makeFolder',
  'tryLock',
]);

/** Fails any call that could change a file, and counts them. */
export function readOnlyGuard(base: FileSystem): FaultyFileSystem {
  return new FaultyFileSystem(base, {
    beforeCall: (entry) => {
      if (MUTATING.has(entry.operation) || (entry.operation === 'open' && entry.mode !== 'read')) {
        throw new Error(`inspect tried ${entry.operation} on ${entry.path}`);
      }
    },
  });
}

export async function baseTranscripts(): Promise<Buffer[]> {
  const fileSystem = new MemoryFileSystem();
  const scripts = [
    [user('Write a.txt'), assistant('', [call('c1')]), dispatch('c1')],
    parallelBatch(),
    [user('Hi'), assistant('Hello!')],
    [],
    [
      ...parallelBatch(),
      result('inFlight'),
      settle('inFlight'),
      ...Array.from({ length: 12 }, (_, index) => user(`padding ${index} ${'p'.repeat(120)}`)),
      { type: 'compaction' as const, fromSeq: 1, toSeq: 3, summary: 'earlier work' },
      {
        type: 'run-revived' as const,
        ordinal: 1,
        maxRevivals: 2,
        afterSeq: 5,
        interrupted: [],
        completedUnpersisted: [],
        orphaned: [],
      },
      user('go on'),
    ],
  ];
  const bases: Buffer[] = [];
  for (const [index, bodies] of scripts.entries()) {
    const path = `/base/${index}.jsonl`;
    await writeTranscript(path, bodies, { fileSystem, checkpointBytes: 400 });
    bases.push(fileSystem.readFile(path));
  }
  return bases;
}

export function mutate(input: Buffer, random: () => number): Buffer {
  let bytes = Buffer.from(input);
  const at = () => Math.floor(random() * (bytes.length + 1));
  const junk = (length: number) =>
    Buffer.from(Array.from({ length }, () => Math.floor(random() * 256)));
  const lines = () => bytes.toString('latin1').split('\n');
  const fromLines = (parts: string[]) => Buffer.from(parts.join('\n'), 'latin1');
  const rounds = 1 + Math.floor(random() * 3);
  for (let round = 0; round < rounds; round++) {
    switch (Math.floor(random() * 10)) {
      case 0: {
        const index = at();
        if (index < bytes.length)
          bytes[index] = (bytes[index] as number) ^ (1 << Math.floor(random() * 8));
        break;
      }
      case 1:
        bytes = bytes.subarray(0, at());
        break;
      case 2: {
        const index = at();
        bytes = Buffer.concat([
          bytes.subarray(0, index),
          junk(1 + Math.floor(random() * 20)),
          bytes.subarray(index),
        ]);
        break;
      }
      case 3: {
        const from = at();
        bytes = Buffer.concat([
          bytes.subarray(0, from),
          bytes.subarray(Math.min(bytes.length, from + Math.floor(random() * 80))),
        ]);
        break;
      }
      case 4: {
        const parts = lines();
        const index = Math.floor(random() * parts.length);
        parts.splice(index, 0, parts[index] ?? '');
        bytes = fromLines(parts);
        break;
      }
      case 5: {
        const parts = lines();
        const left = Math.floor(random() * parts.length);
        const right = Math.floor(random() * parts.length);
        [parts[left], parts[right]] = [parts[right] ?? '', parts[left] ?? ''];
        bytes = fromLines(parts);
        break;
      }
      case 6: {
        const parts = lines();
        parts[Math.floor(random() * parts.length)] = junk(Math.floor(random() * 60)).toString(
          'latin1',
        );
        bytes = fromLines(parts);
        break;
      }
      case 7:
        bytes = Buffer.concat([bytes, junk(1 + Math.floor(random() * 50))]);
        break;
      case 8: {
        const from = at();
        const to = Math.min(bytes.length, from + Math.floor(random() * 200));
        bytes.fill(0, from, to);
        break;
      }
      default:
        bytes = junk(Math.floor(random() * 300));
    }
  }
  return bytes;
}
