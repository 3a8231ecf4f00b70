import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { nodeFileSystem } from '../../src/transcript/file-system.ts';
import type { RecordBody } from '../../src/transcript/records.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';
import {
  checkCut,
  expectCut,
  largeLineTranscript,
  sweepRange,
} from '../support/truncation-sweep.ts';
import {
  type BuiltTranscript,
  buildTranscript,
  makeTempFolder,
  removeFolder,
  sampleBodies,
} from '../support/transcripts.ts';

/*
 * Cut a transcript at every byte offset of its last three records (a crash can stop a write
 * anywhere): opening it for append must keep exactly the records before the cut one, byte for
 * byte, move exactly the torn bytes to the sidecar, and go on appending. The sweep runs on the
 * in-memory FileSystem for speed; a sample of cuts runs on real files too. The fixture with a
 * 100 KiB line is swept in truncation-sweep-large-line.test.ts (a file of its own, so that the
 * runner can give it a core).
 */

const fixtures: { name: string; built: BuiltTranscript }[] = [
  { name: 'tiny lines', built: buildTranscript(sampleBodies(9, 1, 't')) },
  { name: '~2 KiB lines', built: buildTranscript(sampleBodies(5, 2048, 'k').filter(isLong)) },
  { name: 'a 100 KiB line', built: largeLineTranscript() },
];

/** Keep the session-meta and the messages (about 2 KiB each), drop the small envelopes. */
function isLong(body: RecordBody): boolean {
  return body.type === 'session-meta' || body.type === 'message';
}

for (const { name, built } of fixtures.slice(0, 2)) {
  test(`truncation sweep, ${name}: every cut in the last 3 records repairs to an exact prefix`, async () => {
    const { from, to } = sweepRange(built);
    let repaired = 0;
    let clean = 0;
    for (let cut = from; cut <= to; cut++) {
      const fileSystem = new MemoryFileSystem();
      await checkCut(built, cut, {
        fileSystem,
        path: '/runs/run.jsonl',
        sidecarPath: (sidecar) => `/runs/${sidecar}`,
        readFile: (path) => fileSystem.readFile(path),
        place: (bytes) => fileSystem.writeFile('/runs/run.jsonl', bytes),
      });
      assert.equal(fileSystem.openDescriptors(), 0, `cut ${cut}: a descriptor leaked`);
      assert.ok(!fileSystem.listFiles().some((file) => file.endsWith('.tmp')), `cut ${cut}`);
      if (expectCut(built, cut).torn.length > 0) repaired += 1;
      else clean += 1;
    }
    // Every offset was exercised: the boundaries are the 4 clean cuts, the rest were repairs.
    assert.equal(clean, 4);
    assert.equal(repaired + clean, to - from + 1);
  });
}

test('truncation sweep on real files: a sample of cuts behaves as in memory', async () => {
  const folder = await makeTempFolder();
  try {
    for (const { built } of fixtures) {
      const { from, to } = sweepRange(built);
      const cuts = new Set<number>([from, from + 1, to - 1, to]);
      for (let step = 0; step < 12; step++) cuts.add(from + Math.floor(((to - from) * step) / 12));
      for (const cut of cuts) {
        const sub = join(folder, `cut-${built.bytes.length}-${cut}`);
        const path = join(sub, 'run.jsonl');
        await nodeFileSystem.makeFolder(sub);
        await checkCut(built, cut, {
          fileSystem: nodeFileSystem,
          path,
          sidecarPath: (sidecar) => join(sub, sidecar),
          readFile: (file) => readFile(file),
          place: (bytes) => writeFile(path, bytes, { mode: 0o600 }),
        });
      }
    }
  } finally {
    await removeFolder(folder);
  }
});
