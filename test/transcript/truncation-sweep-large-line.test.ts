import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryFileSystem } from '../../src/testing/index.ts';
import {
  checkCut,
  expectCut,
  largeLineTranscript,
  sweepRange,
} from '../support/truncation-sweep.ts';

/*
 * The truncation sweep (see truncation-sweep.test.ts) over a transcript with a 100 KiB line:
 * every cut in the three records after it, each opened for append (repair), appended to ten
 * times and read back whole — so every kept prefix holds the long line, byte for byte.
 *
 * Tearing the long line itself is swept too, at every one of its offsets (10^5 opens, each
 * repaired, appended to and read back: 1–3 minutes — the suite's costliest file, kept
 * because a 100 KiB record is where a crash is likeliest to land mid-write). `SWEEP_STEP=61`
 * samples every 61st offset for a quick local run; the offsets within 3 bytes of its edges, of
 * its multi-byte characters near 4 KiB / 64 KiB and of read-size boundaries are always cut.
 */

function check(built: ReturnType<typeof largeLineTranscript>, cut: number) {
  const fileSystem = new MemoryFileSystem();
  return checkCut(built, cut, {
    fileSystem,
    path: '/runs/run.jsonl',
    sidecarPath: (sidecar) => `/runs/${sidecar}`,
    readFile: (path) => fileSystem.readFile(path),
    place: (bytes) => fileSystem.writeFile('/runs/run.jsonl', bytes),
  }).then(() => fileSystem);
}

test('truncation sweep after a 100 KiB line: every cut in the last 3 records repairs to an exact prefix', async () => {
  const built = largeLineTranscript();
  const count = built.lines.length;
  const bigLength = (built.offsets[3] ?? 0) - (built.offsets[2] ?? 0);
  assert.ok(bigLength > 100 * 1024, 'the long line is over 100 KiB');
  assert.equal(built.offsets[count - 3], built.offsets[3], 'the long line comes just before');
  const { from, to } = sweepRange(built);
  let repaired = 0;
  for (let cut = from; cut <= to; cut++) {
    const fileSystem = await check(built, cut);
    assert.equal(fileSystem.openDescriptors(), 0, `cut ${cut}: a descriptor leaked`);
    if (expectCut(built, cut).torn.length > 0) repaired += 1;
  }
  assert.equal(repaired, to - from + 1 - 4);
});

test('tearing the 100 KiB line itself: every offset repairs to an exact prefix', async () => {
  const built = largeLineTranscript();
  const start = built.offsets[2] ?? 0;
  const end = built.offsets[3] ?? 0;
  const cuts = new Set<number>();
  const step = Number(process.env.SWEEP_STEP ?? 1);
  assert.ok(Number.isInteger(step) && step >= 1, 'SWEEP_STEP is a whole number');
  for (let cut = start; cut <= end; cut += step) cuts.add(cut);
  const near = [start, end - 1, end, start + 4096, start + 65536, 4096, 65536, 131072];
  for (const point of near) {
    for (let delta = -3; delta <= 3; delta++) {
      const cut = point + delta;
      if (cut >= start && cut <= end) cuts.add(cut);
    }
  }
  for (const cut of cuts) await check(built, cut);
  assert.ok(cuts.size >= Math.floor((end - start) / step), `${cuts.size} cuts`);
});
