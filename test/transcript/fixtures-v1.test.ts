import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { nodeFileSystem } from '../../src/transcript/file-system.ts';
import { peek } from '../../src/transcript/peek.ts';
import { readRecords } from '../../src/transcript/read-records.ts';
import { isAgentId } from '../../src/transcript/records.ts';
import { Session } from '../../src/transcript/session.ts';
import { TranscriptError } from '../../src/transcript/transcript-error.ts';
import { tailStateFromJson } from '../../src/transcript/tail-state.ts';
import { isKnownRecord, validateRecord } from '../../src/transcript/validate-record.ts';
import { readAll } from '../support/repair-checks.ts';
import { makeTempFolder, removeFolder, textMessage } from '../support/transcripts.ts';

/*
 * The frozen v1 fixtures (test/fixtures/v1/, see its README): transcripts written by this
 * version must read the same forever. Tests only read them — opening for append happens on a
 * copy — and their hashes are pinned here, so that regenerating them fails the suite.
 */

const FIXTURES = fileURLToPath(new URL('../fixtures/v1/', import.meta.url));
const fixture = (name: string) => join(FIXTURES, name);

const HASHES: Record<string, string> = {
  'bad-field.jsonl': '24f7e8bd45c41153514b237dcb05f9859923ace1548c2611890298ac20735245',
  'compacted.jsonl': 'ce86d5c78c4b4e1a91f5c8a40a66c97b24b4b06bb417164fcdacac9c688f6909',
  'damaged-mid-file.jsonl': 'c701a2b8fcbb6a162674e2b15e7615f6f98ab473d667684d498cee25028bb40c',
  'failed.jsonl': '810733d7f26ddca6d725b566db0ff63a5c758a7bb6d3f3303cf80da26c4807ad',
  'legacy-failed.jsonl': 'd943bc976c0501a71780b8b163be725c86d29ce42a790ea623bbff2672a20902',
  'stopped.jsonl': '1f7ee671072ca2ad199b59c56ab60ac0bc7721392bd8d066cf1e876b2d945099',
  'future-version.jsonl': '9b55f6d76f709f5a44037e5429a72cb1f5c951f1b0e9117e0b43f53ea48f2690',
  'normal.jsonl': 'f8c558b43bd0eb7dfe562c26f97f2e5fe73551805a8fcc2e47acc0ba2409c6c0',
  'normal.jsonl.torn-3439': '3b1c09c4d25f36f457ae3e6572b23b1b0b56520999dc80e559b338c6e1e27495',
  'not-a-transcript.jsonl': '3723e03975ea0a5b12fb29d658af5f5d49dfed060cee33c10fcffcb7cd030157',
  'parent.agents/researcher-1.jsonl':
    '2abc6c01356002b23b50b337a03baa9483747f6aabce6417ca2cf2d173d40ab5',
  'parent.jsonl': '474d0fe9ce89bf57f2c6afc25ff93ddb1a2df3d9573b44e6d4bfaa3f1af8fb48',
  'torn-tail.jsonl': '44e4a92fc3fdf20095c9307d9d8282d7db6d3a92a252bbc78967140fe5b1a983',
  'undeclared.jsonl': 'c9c6a321bdb96ef4a09a53f3856698582e6fac1fd747fa507ff40f97b5ed00cd',
};

test('the fixtures are the frozen bytes (nothing regenerated, nothing added unpinned)', async () => {
  const names = (await readdir(FIXTURES, { recursive: true }))
    .filter((name) => name.endsWith('.jsonl') || name.includes('.torn-'))
    .sort();
  assert.deepEqual(names, Object.keys(HASHES).sort());
  for (const [name, hash] of Object.entries(HASHES)) {
    const bytes = await readFile(fixture(name));
    assert.equal(createHash('sha256').update(bytes).digest('hex'), hash, name);
  }
});

test('normal.jsonl: every record type reads back, clean, with its repair and its unknown type', async () => {
  const records = await readAll(fixture('normal.jsonl'), nodeFileSystem);
  assert.equal(records.length, 22);
  records.forEach((record, index) => {
    assert.equal(record.seq, index);
    assert.equal(record.v, 1);
  });
  const types = new Set(records.map((record) => record.type));
  for (const type of [
    'session-meta',
    'message',
    'tool-dispatched',
    'tool-settled',
    'compaction',
    'run-revived',
    'checkpoint',
    'x-future-note',
  ]) {
    assert.ok(types.has(type), type);
  }
  const roles = new Set(records.flatMap((record) => ('role' in record ? [record.role] : [])));
  assert.deepEqual([...roles].sort(), ['assistant', 'system', 'tool', 'user']);
  const parts = new Set(
    records.flatMap((record) =>
      isKnownRecord(record) && record.type === 'message'
        ? record.content.map((part) => part.type)
        : [],
    ),
  );
  assert.deepEqual([...parts].sort(), ['reasoning', 'text', 'tool-call', 'tool-result']);
  const unknown = records.find((record) => record.type === 'x-future-note');
  assert.equal((unknown as { unknown?: boolean } | undefined)?.unknown, true);

  const repaired = records.find((record) => record.tailRepair !== undefined);
  assert.equal(repaired?.type, 'checkpoint');
  assert.deepEqual(repaired?.tailRepair, {
    validBytes: 3439,
    tornBytes: 54,
    sidecar: 'normal.jsonl.torn-3439',
  });
  const sidecar = await readFile(fixture('normal.jsonl.torn-3439'), 'utf8');
  assert.equal(sidecar.length, 54);
  assert.ok(sidecar.startsWith('{"v":1,"seq":99,'));
  for (const checkpoint of records.filter((record) => record.type === 'checkpoint')) {
    assert.ok(isKnownRecord(checkpoint) && checkpoint.type === 'checkpoint');
    const state = tailStateFromJson(checkpoint.state);
    assert.ok(state !== null, 'a checkpoint this version wrote reads back');
    assert.equal(state.lastSeq, checkpoint.seq - 1);
  }
  const seen = await peek(fixture('normal.jsonl'));
  assert.ok(seen.ok && seen.state === 'clean');
  assert.deepEqual(seen.records, records);
});

test('normal.jsonl (a copy) opens for append and goes on from seq 22', async () => {
  const folder = await makeTempFolder();
  try {
    const path = join(folder, 'normal.jsonl');
    await copyFile(fixture('normal.jsonl'), path);
    const session = await Session.open(path);
    assert.equal(session.lastSeq, 21);
    assert.equal(session.state.meta?.agentId, 'main');
    assert.equal(session.state.revivals, 1);
    const record = await session.appendDurable(textMessage('user', 'one more'));
    await session.close();
    assert.equal(record.seq, 22);
    const bytes = await readFile(path);
    const original = await readFile(fixture('normal.jsonl'));
    assert.ok(bytes.subarray(0, original.length).equals(original), 'only appended to');
  } finally {
    await removeFolder(folder);
  }
});

test('torn-tail.jsonl: read as 4 records and a torn tail; a copy is repaired on open', async () => {
  const seen = await peek(fixture('torn-tail.jsonl'));
  assert.ok(seen.ok);
  assert.equal(seen.state, 'torn-tail');
  assert.equal(seen.records.length, 4);
  assert.deepEqual(seen.torn, {
    validBytes: 585,
    tornBytes: 40,
    line: 5,
    reason: 'the line has no checksum',
    declaredType: 'message',
  });
  const streamed: unknown[] = [];
  for await (const record of readRecords(fixture('torn-tail.jsonl'))) streamed.push(record);
  assert.deepEqual(streamed, seen.records, 'readRecords ends quietly at a torn tail');

  const folder = await makeTempFolder();
  try {
    const path = join(folder, 'torn-tail.jsonl');
    await copyFile(fixture('torn-tail.jsonl'), path);
    await (await Session.open(path)).close();
    const original = await readFile(fixture('torn-tail.jsonl'));
    assert.ok((await readFile(`${path}.torn-585`)).equals(original.subarray(585)));
    const records = await readAll(path, nodeFileSystem);
    assert.equal(records.length, 5);
    assert.equal(records[4]?.tailRepair?.sidecar, 'torn-tail.jsonl.torn-585');
    // The torn bytes name their type, a message: they cannot have been a dispatch.
    assert.equal(records[4]?.tailRepair?.possiblyDispatched, undefined);
  } finally {
    await removeFolder(folder);
  }
});

async function refusal(name: string): Promise<TranscriptError> {
  const folder = await makeTempFolder();
  try {
    const path = join(folder, name);
    await copyFile(fixture(name), path);
    const before = await readFile(path);
    let caught: unknown;
    try {
      await (await Session.open(path)).close();
    } catch (error) {
      caught = error;
    }
    assert.ok(TranscriptError.isInstance(caught), `${name} opened`);
    assert.ok((await readFile(path)).equals(before), `${name} was changed`);
    // A refused open leaves no file behind: the lock is the transcript's own, its nametag removed.
    assert.deepEqual((await readdir(folder)).sort(), [name]);
    return caught;
  } finally {
    await removeFolder(folder);
  }
}

test('damaged-mid-file.jsonl: unreadable at line 3, never repaired', async () => {
  const seen = await peek(fixture('damaged-mid-file.jsonl'));
  assert.ok(!seen.ok);
  assert.equal(seen.reason, 'damaged');
  assert.equal(seen.line, 3);
  const error = await refusal('damaged-mid-file.jsonl');
  assert.equal(error.code, 'unreadable');
  assert.equal(error.line, 3);
  assert.match(
    error.message,
    /damaged-mid-file\.jsonl:3: the checksum does not match the line, yet a complete record follows it$/,
  );
});

test('future-version.jsonl: a format-1 reader refuses its v2 line by name; this format-2 reader reads it', async () => {
  // Made when 2 was the future: its line 4 is a plain user turn stamped v2.
  const lines = (await readFile(fixture('future-version.jsonl'), 'utf8')).split('\n');
  const line4 = JSON.parse(lines[3] as string) as Record<string, unknown>;
  const asVersion1 = validateRecord(line4, 1);
  assert.ok(!asVersion1.ok);
  assert.equal(asVersion1.problem.kind, 'newer-version');
  assert.equal(asVersion1.problem.message, "format version 2 is newer than this reader's 1");
  const seen = await peek(fixture('future-version.jsonl'));
  assert.ok(seen.ok, JSON.stringify(seen));
  assert.equal(seen.records.length, 4);
  // A line from beyond this reader's version is still refused by name (test/fixtures/v2/).
});

test('not-a-transcript.jsonl: not a transcript, and left alone', async () => {
  const seen = await peek(fixture('not-a-transcript.jsonl'));
  assert.ok(!seen.ok);
  assert.equal(seen.reason, 'not-a-transcript');
  const error = await refusal('not-a-transcript.jsonl');
  assert.equal(error.code, 'unreadable');
  assert.match(error.message, /not-a-transcript\.jsonl:1: not a transcript/);
});

test('bad-field.jsonl: the error names the file, the line and the field', async () => {
  const seen = await peek(fixture('bad-field.jsonl'));
  assert.ok(!seen.ok);
  assert.equal(seen.reason, 'damaged');
  const error = await refusal('bad-field.jsonl');
  assert.equal(error.line, 3);
  assert.match(
    error.message,
    /bad-field\.jsonl:3: field role must be one of system, user, assistant, tool$/,
  );
});

test('parent.jsonl and parent.agents/researcher-1.jsonl: the child names its parent', async () => {
  const parent = await readAll(fixture('parent.jsonl'), nodeFileSystem);
  const child = await readAll(fixture('parent.agents/researcher-1.jsonl'), nodeFileSystem);
  const meta = child[0];
  assert.ok(meta !== undefined && isKnownRecord(meta) && meta.type === 'session-meta');
  assert.ok(isAgentId(meta.agentId));
  assert.deepEqual(meta.parent, { transcript: '../parent.jsonl', callId: 'call-9' });
  const spawn = parent.find((record) => record.type === 'tool-dispatched');
  assert.equal((spawn as { callId?: string } | undefined)?.callId, meta.parent?.callId);
});
