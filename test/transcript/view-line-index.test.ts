import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { encodeLine } from '../../src/transcript/line-codec.ts';
import type { ForeignRecord, RecordBody, TranscriptRecord } from '../../src/transcript/records.ts';
import { scanTranscript } from '../../src/transcript/scan-transcript.ts';
import { ViewLineIndex } from '../../src/transcript/view-line-index.ts';
import { FaultyFileSystem } from '../../src/testing/index.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';
import { recordsOf, step } from './record-sequences.ts';

const seed = Number(process.env.SEED ?? Date.now());
console.log('seed', seed);

type AnyRecord = TranscriptRecord | ForeignRecord;
const PATH = '/runs/a.jsonl';

/**
 * Write records as a transcript file (known records only, compactions kept inside what the
 * validator accepts: a range of records before the compaction).
 */
function writeFile(fileSystem: MemoryFileSystem, records: readonly AnyRecord[]): void {
  const lines: Buffer[] = [];
  records.forEach((record, seq) => {
    let body: RecordBody;
    if ('unknown' in record || (record.type === 'compaction' && record.fromSeq >= seq)) {
      body = { type: 'tool-settled', callId: 'c0', status: 'completed' };
    } else if (record.type === 'compaction') {
      body = { ...record, toSeq: Math.max(record.fromSeq, Math.min(record.toSeq, seq - 1)) };
    } else {
      body = record;
    }
    const { v: _v, seq: _seq, at: _at, ...rest } = body as AnyRecord;
    lines.push(encodeLine({ v: 1, seq, at: '2026-12-02T08:00:00.000Z' }, rest as RecordBody).bytes);
  });
  fileSystem.writeFile(PATH, Buffer.concat(lines));
}

/** Scan the file into an index; returns the index and every record the scan decoded. */
async function indexOf(fileSystem: MemoryFileSystem | FaultyFileSystem) {
  const index = new ViewLineIndex();
  const all: AnyRecord[] = [];
  const scan = await scanTranscript(PATH, {
    fileSystem,
    onRecord: (record, info) => {
      index.add(record, info);
      all.push(record);
    },
  });
  assert.ok(scan.ok, scan.ok ? '' : scan.detail);
  return { index, all };
}

test('the lines read back give the view of the whole transcript, and only survivors are read', async () => {
  let fewer = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(step, { maxLength: 60 }), async (steps) => {
      const fileSystem = new MemoryFileSystem();
      writeFile(fileSystem, recordsOf(steps));
      const { index, all } = await indexOf(fileSystem);
      const read = await index.read(PATH, fileSystem);
      assert.ok(read.ok, read.ok ? '' : read.detail);
      assert.deepEqual(conversationView(read.records), conversationView(all));
      // What is read back is what survives: the messages and summaries the view is made of.
      const shown = new Set(conversationView(all).map((message) => message.seq));
      assert.equal(read.records.length, index.held);
      for (const record of read.records) {
        if (record.type === 'compaction') assert.ok(shown.has(record.seq), `summary ${record.seq}`);
      }
      if (read.records.length < all.filter((record) => record.type === 'message').length) {
        fewer += 1;
      }
    }),
    { seed, numRuns: 200 },
  );
  assert.ok(fewer > 20, `only ${fewer} transcripts where compaction removed something`);
});

async function compactedFile(): Promise<MemoryFileSystem> {
  const fileSystem = new MemoryFileSystem();
  const records = recordsOf([
    { kind: 'user' },
    { kind: 'assistant', calls: 1 },
    { kind: 'tool', picks: [0] },
    { kind: 'compaction', back: 3, span: 2 },
    { kind: 'user' },
    { kind: 'assistant', calls: 0 },
  ]);
  writeFile(fileSystem, records);
  return fileSystem;
}

test('a line changed since it was indexed is reported, naming where it lies', async () => {
  const fileSystem = await compactedFile();
  const { index } = await indexOf(fileSystem);
  const bytes = fileSystem.readFile(PATH);
  const lastLine = bytes.lastIndexOf(0x0a, bytes.length - 2) + 1;
  const changed = Buffer.from(bytes);
  changed[lastLine + 30] = 0x41;
  fileSystem.writeFile(PATH, changed);
  const read = await index.read(PATH, fileSystem);
  assert.equal(read.ok, false);
  assert.ok(!read.ok && read.reason === 'changed');
  assert.match(read.ok ? '' : read.detail, new RegExp(`line at byte ${lastLine} `));
});

test('a failed read is an io-error, not an exception', async () => {
  const base = await compactedFile();
  const fileSystem = new FaultyFileSystem(base, {
    rules: [{ operation: 'read', path: PATH, fault: { kind: 'error', code: 'EIO' } }],
  });
  const { index } = await indexOf(base);
  assert.equal((await index.read(PATH, base)).ok, true);
  const read = await index.read(PATH, fileSystem);
  assert.equal(fileSystem.fired.length, 1, 'the fault fired');
  assert.equal(read.ok ? 'ok' : read.reason, 'io-error');
  assert.match(read.ok ? '' : read.detail, /EIO/);
});
