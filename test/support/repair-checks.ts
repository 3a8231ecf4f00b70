import assert from 'node:assert/strict';
import { mayHoldDispatch } from '../../src/transcript/classify-tail.ts';
import type { FileSystem } from '../../src/transcript/file-system.ts';
import { readRecords } from '../../src/transcript/read-records.ts';
import type { ForeignRecord, TranscriptRecord } from '../../src/transcript/records.ts';
import { Session } from '../../src/transcript/session.ts';
import { TranscriptError } from '../../src/transcript/transcript-error.ts';
import type { MemoryFileSystem } from '../../src/testing/index.ts';
import type { BuiltTranscript } from './transcripts.ts';
import { textMessage } from './transcripts.ts';

/** Read every record of a transcript (throws as readRecords does). */
export async function readAll(
  path: string,
  fileSystem: FileSystem,
): Promise<(TranscriptRecord | ForeignRecord)[]> {
  const records: (TranscriptRecord | ForeignRecord)[] = [];
  for await (const record of readRecords(path, { fileSystem })) records.push(record);
  return records;
}

/**
 * Open `path` (on a MemoryFileSystem holding `damaged`) for append and check that the repair
 * kept exactly the first `kept` records of `original`, moved exactly the bytes after them to the
 * sidecar, named the repair in the next record, and that appending then works.
 */
export async function expectRepaired(
  fileSystem: MemoryFileSystem,
  path: string,
  original: BuiltTranscript,
  damaged: Buffer,
  kept: number,
  label: string,
  options: { salvage?: boolean } = {},
): Promise<void> {
  const validBytes = original.offsets[kept] ?? 0;
  const sidecar = `${path.split('/').at(-1)}.torn-${validBytes}`;
  const session = await Session.open(path, {
    fileSystem,
    salvageDamagedTail: options.salvage === true,
  });
  try {
    await session.append(textMessage('user', 'after the repair'));
  } finally {
    await session.close();
  }
  const folder = path.slice(0, path.lastIndexOf('/'));
  assert.ok(
    fileSystem.readFile(`${folder}/${sidecar}`).equals(damaged.subarray(validBytes)),
    `${label}: the sidecar does not hold exactly the torn bytes`,
  );
  const records = await readAll(path, fileSystem);
  assert.deepEqual(records.slice(0, kept), original.records.slice(0, kept), label);
  // The repair's checkpoint, the record appended, the closing checkpoint.
  assert.equal(records.length, kept + 3, `${label}: records after the repair`);
  assert.equal(records[kept + 2]?.type, 'checkpoint', `${label}: the closing checkpoint`);
  assert.equal(records[kept]?.type, 'checkpoint', label);
  const cut = damaged.subarray(validBytes);
  const wholeLines = cut.filter((byte) => byte === 0x0a).length;
  assert.deepEqual(
    records[kept]?.tailRepair,
    {
      validBytes,
      tornBytes: cut.length,
      sidecar,
      // A salvage always; a torn tail unless it begins as the next record of a type that is
      // not a dispatch.
      ...(options.salvage === true || mayHoldDispatch(cut, kept)
        ? { possiblyDispatched: true }
        : {}),
      ...(wholeLines > 0 ? { wholeLines } : {}),
    },
    label,
  );
  assert.equal(records[kept + 1]?.seq, kept + 1, label);
  assert.ok(
    fileSystem
      .readFile(path)
      .subarray(0, validBytes)
      .equals(original.bytes.subarray(0, validBytes)),
    `${label}: the kept prefix changed`,
  );
}

/**
 * Open `path` for append and expect it refused as unreadable at `line`, with nothing written:
 * the file keeps its bytes and no sidecar or other file appears (the lock file aside).
 */
export async function expectUnreadable(
  fileSystem: MemoryFileSystem,
  path: string,
  damaged: Buffer,
  line: number,
  label: string,
): Promise<TranscriptError> {
  const before = fileSystem.listFiles();
  let caught: unknown;
  try {
    const session = await Session.open(path, { fileSystem });
    await session.close();
  } catch (error) {
    caught = error;
  }
  assert.ok(TranscriptError.isInstance(caught), `${label}: opened a damaged transcript`);
  assert.equal(caught.code, 'unreadable', `${label}: ${caught.message}`);
  assert.equal(caught.line, line, `${label}: ${caught.message}`);
  assert.ok(caught.message.startsWith(`${path}:${line}: `), `${label}: ${caught.message}`);
  assert.ok(fileSystem.readFile(path).equals(damaged), `${label}: the file was changed`);
  const isNametag = (file: string) => file.startsWith(`${path}.owner`);
  const after = fileSystem.listFiles().filter((file) => !isNametag(file));
  assert.deepEqual(
    after,
    before.filter((file) => !isNametag(file)),
    `${label}: files appeared`,
  );
  assert.equal(fileSystem.openDescriptors(), 0, `${label}: a descriptor leaked`);
  return caught;
}
