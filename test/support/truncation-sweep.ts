import assert from 'node:assert/strict';
import { mayHoldDispatch } from '../../src/transcript/classify-tail.ts';
import { readRecords } from '../../src/transcript/read-records.ts';
import type { FileSystem } from '../../src/transcript/file-system.ts';
import type { ForeignRecord, TranscriptRecord } from '../../src/transcript/records.ts';
import { Session } from '../../src/transcript/session.ts';
import {
  type BuiltTranscript,
  buildTranscript,
  metaBody,
  steppingClock,
  textMessage,
} from './transcripts.ts';

/** The byte range a sweep cuts in: from the start of the third-last record to the end. */
export function sweepRange(built: BuiltTranscript): { from: number; to: number } {
  const count = built.lines.length;
  return { from: built.offsets[count - 3] ?? 0, to: built.offsets[count] ?? 0 };
}

/**
 * A transcript with a 100 KiB line (non-ASCII text) followed by three small records: its sweep
 * reads the long line in every prefix it keeps.
 */
export function largeLineTranscript(): BuiltTranscript {
  return buildTranscript([
    metaBody(),
    textMessage('user', 'before the big one'),
    textMessage('assistant', `big ${'ünïcödé '.repeat(10 * 1024)}`.slice(0, 100 * 1024)),
    textMessage('user', 'after the big one'),
    textMessage('assistant', 'and a reply'),
    textMessage('user', 'the end'),
  ]);
}

/** What one cut should become after open-for-append. */
export interface CutExpectation {
  /** Records that survive: those wholly before the cut record. */
  kept: number;
  validBytes: number;
  /** The bytes the repair must move to the sidecar (empty: the cut fell on a line boundary). */
  torn: Buffer;
}

/** The expected outcome of cutting `built` at byte `cut`. */
export function expectCut(built: BuiltTranscript, cut: number): CutExpectation {
  let kept = 0;
  while (kept < built.lines.length && (built.offsets[kept + 1] ?? Infinity) <= cut) kept += 1;
  const validBytes = built.offsets[kept] ?? 0;
  return { kept, validBytes, torn: built.bytes.subarray(validBytes, cut) };
}

async function collect(path: string, fileSystem: FileSystem) {
  const records: (TranscriptRecord | ForeignRecord)[] = [];
  for await (const record of readRecords(path, { fileSystem })) records.push(record);
  return records;
}

/**
 * Cut a copy of `built` at `cut` (written by `place`), open it for appending, check that the
 * repair gave the exact prefix with the torn bytes in the sidecar, append 10 records, close and
 * read everything back. Throws an assertion error naming the cut on any difference.
 */
export async function checkCut(
  built: BuiltTranscript,
  cut: number,
  setup: {
    fileSystem: FileSystem;
    path: string;
    sidecarPath: (name: string) => string;
    readFile: (path: string) => Buffer | Promise<Buffer>;
    place: (bytes: Buffer) => void | Promise<void>;
  },
): Promise<void> {
  const { fileSystem, path } = setup;
  const expected = expectCut(built, cut);
  await setup.place(built.bytes.subarray(0, cut));
  const session = await Session.open(path, {
    fileSystem,
    clock: steppingClock(Date.UTC(2027, 0, 1)),
  });
  const repaired = expected.torn.length > 0;
  try {
    const afterOpen = await setup.readFile(path);
    assert.ok(
      afterOpen
        .subarray(0, expected.validBytes)
        .equals(built.bytes.subarray(0, expected.validBytes)),
      `cut ${cut}: the kept prefix differs`,
    );
    if (repaired) {
      const sidecar = `${path.split('/').at(-1)}.torn-${expected.validBytes}`;
      const saved = await setup.readFile(setup.sidecarPath(sidecar));
      assert.ok(
        saved.equals(expected.torn),
        `cut ${cut}: the sidecar does not hold the torn bytes`,
      );
    } else {
      assert.equal(afterOpen.length, cut, `cut ${cut}: a clean file was changed by open`);
    }
    for (let index = 0; index < 10; index++) {
      await session.append(textMessage('user', `after cut ${cut} #${index}`));
    }
  } finally {
    await session.close();
  }
  const records = await collect(path, fileSystem);
  const extra = repaired ? 1 : 0;
  // The kept prefix, the repair's checkpoint, the 10 appended and the closing checkpoint.
  assert.equal(records.length, expected.kept + extra + 10 + 1, `cut ${cut}: record count`);
  assert.deepEqual(
    records.slice(0, expected.kept),
    built.records.slice(0, expected.kept),
    `cut ${cut}`,
  );
  if (repaired) {
    const checkpoint = records[expected.kept];
    assert.equal(checkpoint?.type, 'checkpoint', `cut ${cut}: the repair is not named next`);
    assert.deepEqual(checkpoint?.tailRepair, {
      validBytes: expected.validBytes,
      tornBytes: expected.torn.length,
      sidecar: `${path.split('/').at(-1)}.torn-${expected.validBytes}`,
      ...(mayHoldDispatch(expected.torn, expected.kept) ? { possiblyDispatched: true } : {}),
    });
  }
  records.forEach((record, index) => {
    assert.equal(record.seq, index, `cut ${cut}: seq of record ${index}`);
  });
  const last = records.at(-2);
  assert.ok(
    last?.type === 'message' && JSON.stringify(last.content).includes(`after cut ${cut} #9`),
  );
  assert.equal(records.at(-1)?.type, 'checkpoint', `cut ${cut}: the closing checkpoint`);
}
