import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { ToolDefinition } from '../../src/loop/types.ts';
import { Revival } from '../../src/revival/index.ts';
import { callsToReconcile } from '../../src/revival/reconcile-calls.ts';
import { nodeFileSystem } from '../../src/transcript/file-system.ts';
import { idempotencyKeyOf } from '../../src/transcript/idempotency-key.ts';
import { peek } from '../../src/transcript/peek.ts';
import type { ForeignRecord, TranscriptRecord } from '../../src/transcript/records.ts';
import { Session } from '../../src/transcript/session.ts';
import {
  emptyTailState,
  foldTailState,
  tailStateFromJson,
} from '../../src/transcript/tail-state.ts';
import { isKnownRecord, validateRecord } from '../../src/transcript/validate-record.ts';
import { readAll } from '../support/repair-checks.ts';
import { makeTempFolder, removeFolder, textMessage } from '../support/transcripts.ts';

/*
 * The frozen v2 fixtures (test/fixtures/v2/, see its README): what reconciling added to the
 * format. They read the same forever, a format-1 reader refuses them at their first v2 line by
 * name, and their hashes are pinned here, so that regenerating them fails the suite.
 */

const FIXTURES = fileURLToPath(new URL('../fixtures/v2/', import.meta.url));
const fixture = (name: string) => join(FIXTURES, name);

const HASHES: Record<string, string> = {
  'in-flight.jsonl': 'c6b50febbe359dfc5c3ff829a69d989b87c8dadfc17dd6592bac5a1224f36327',
  'reconciled.jsonl': '8e3db82fe6368617e478e0dd28cf0902ab190634b931b94b00695e038284322e',
};

type AnyRecord = TranscriptRecord | ForeignRecord;

test('the v2 fixtures are the frozen bytes (nothing regenerated, nothing added unpinned)', async () => {
  const names = (await readdir(FIXTURES)).filter((name) => name !== 'README.md').sort();
  assert.deepEqual(names, Object.keys(HASHES).sort());
  for (const [name, hash] of Object.entries(HASHES)) {
    const bytes = await readFile(fixture(name));
    assert.equal(createHash('sha256').update(bytes).digest('hex'), hash, name);
  }
});

/** Read as a format-1 reader would: the first line it refuses, and why. */
async function refusedByVersion1(name: string): Promise<{ line: number; message: string }> {
  const lines = (await readFile(fixture(name), 'utf8')).split('\n').filter((line) => line !== '');
  for (const [index, line] of lines.entries()) {
    const checked = validateRecord(JSON.parse(line), 1);
    if (!checked.ok) return { line: index + 1, message: checked.problem.message };
  }
  return { line: 0, message: 'read every line' };
}

for (const name of ['in-flight.jsonl', 'reconciled.jsonl']) {
  test(`${name}: a format-1 reader refuses it by name at its first v2 line; this reader reads it`, async () => {
    const records = await readAll(fixture(name), nodeFileSystem);
    const versions = new Set(records.map((record) => record.v));
    assert.deepEqual([...versions].sort(), [1, 2], 'v2 only where format 2 is needed');
    const firstV2 = records.findIndex((record) => record.v === 2);
    // The first v2 record is the first dispatch with a key, at line 5 in both.
    assert.equal(firstV2, 4);
    assert.equal(records[firstV2]?.type, 'tool-dispatched');
    assert.deepEqual(await refusedByVersion1(name), {
      line: firstV2 + 1,
      message: "format version 2 is newer than this reader's 1",
    });
    for (const record of records) {
      assert.equal(
        validateRecord(JSON.parse(JSON.stringify(record))).ok,
        true,
        `seq ${record.seq}`,
      );
    }
    const seen = await peek(fixture(name));
    assert.ok(seen.ok && seen.state === 'clean', JSON.stringify(seen).slice(0, 300));
    for (const checkpoint of records.filter((record) => record.type === 'checkpoint')) {
      assert.ok(isKnownRecord(checkpoint) && checkpoint.type === 'checkpoint');
      assert.ok(tailStateFromJson(checkpoint.state) !== null, `checkpoint ${checkpoint.seq}`);
    }
  });
}

function keysOf(records: AnyRecord[]): Map<string, string> {
  const keys = new Map<string, string>();
  for (const record of records.filter(isKnownRecord)) {
    if (record.type === 'tool-dispatched' && record.idempotencyKey !== undefined) {
      keys.set(record.callId, record.idempotencyKey);
    }
  }
  return keys;
}

function foldAll(records: AnyRecord[]) {
  let state = emptyTailState();
  for (const record of records) state = foldTailState(state, record, 0);
  return state;
}

test('in-flight.jsonl: three calls in flight, each with the key derived for it, all asked about', async () => {
  const records = await readAll(fixture('in-flight.jsonl'), nodeFileSystem);
  assert.equal(records.length, 18);
  const meta = records[0];
  assert.ok(meta !== undefined && isKnownRecord(meta) && meta.type === 'session-meta');
  const keys = keysOf(records);
  assert.deepEqual([...keys.keys()], ['look-1', 'call-a', 'call-b', 'call-c']);
  for (const [callId, key] of keys) {
    assert.match(key, /^ik-[0-9a-f]{32}$/);
    assert.equal(key, idempotencyKeyOf({ agentId: meta.agentId, createdAt: meta.at }, callId));
  }
  // The last record is a checkpoint whose open dispatches hold the keys.
  const last = records.at(-1);
  assert.ok(last !== undefined && isKnownRecord(last) && last.type === 'checkpoint');
  assert.equal(last.v, 2);
  const state = tailStateFromJson(last.state);
  assert.deepEqual(
    state?.open.map((open) => [open.callId, open.idempotencyKey]),
    ['call-a', 'call-b', 'call-c'].map((callId) => [callId, keys.get(callId)]),
  );

  const inspection = await Revival.inspect({ path: fixture('in-flight.jsonl'), maxRevivals: 3 });
  assert.ok(inspection.revivable, JSON.stringify(inspection));
  assert.deepEqual(
    inspection.openDispatches.map((open) => [open.callId, open.idempotencyKey]),
    ['call-a', 'call-b', 'call-c'].map((callId) => [callId, keys.get(callId)]),
  );
  const requests = callsToReconcile(records, foldAll(records));
  assert.deepEqual(requests, [
    {
      callId: 'call-a',
      toolName: 'charge',
      idempotencyKey: keys.get('call-a'),
      input: { order: 'A', cents: 1200 },
    },
    {
      callId: 'call-b',
      toolName: 'charge',
      idempotencyKey: keys.get('call-b'),
      input: { order: 'B', cents: 3400 },
    },
    {
      callId: 'call-c',
      toolName: 'charge',
      idempotencyKey: keys.get('call-c'),
      input: { order: 'C', cents: 560 },
    },
  ]);
  // Reconciling reads the file (streaming) and finds the same calls, under the same keys.
  const asked: string[] = [];
  const charge: ToolDefinition<{ order: string; cents: number }> = {
    name: 'charge',
    description: 'Charges an order',
    inputSchema: z.object({ order: z.string(), cents: z.number().int() }),
    idempotency: 'side-effect',
    execute: async () => assert.fail('a reconcile never runs the call'),
    reconcile: async (_input, { idempotencyKey }) => {
      asked.push(idempotencyKey);
      return { outcome: 'did-not-happen' };
    },
  };
  const answers = await Revival.reconcile({
    path: fixture('in-flight.jsonl'),
    tools: [charge as ToolDefinition<unknown>],
  });
  assert.deepEqual(
    answers.map((answer) => answer.answer),
    ['did-not-happen', 'did-not-happen', 'did-not-happen'],
  );
  assert.deepEqual(asked.sort(), ['call-a', 'call-b', 'call-c'].map((id) => keys.get(id)).sort());
});

test('reconciled.jsonl: what each reconcile answered, as recorded, and nothing left to ask', async () => {
  const records = await readAll(fixture('reconciled.jsonl'), nodeFileSystem);
  const known = records.filter(isKnownRecord);
  const envelope = known.find((record) => record.type === 'run-revived');
  assert.ok(envelope !== undefined && envelope.type === 'run-revived');
  assert.equal(envelope.v, 2);
  assert.deepEqual(envelope.interrupted, ['call-c']);
  assert.deepEqual(envelope.reconciled, [
    { callId: 'call-a', answer: 'completed' },
    { callId: 'call-b', answer: 'did-not-happen' },
    { callId: 'call-c', answer: 'unknown', detail: 'reconcile threw: the provider did not answer' },
  ]);
  const answers = known.filter(
    (record) => record.type === 'message' && record.role === 'tool' && record.seq > 17,
  );
  assert.deepEqual(
    answers.map((record) =>
      record.type === 'message' ? [record.v, record.extras?.reconcile?.answer] : [],
    ),
    [
      [2, 'completed'],
      [2, 'did-not-happen'],
      [2, 'unknown'],
    ],
  );
  const recovered = answers[0];
  assert.ok(recovered?.type === 'message');
  const part = recovered.content[0];
  assert.ok(part?.type === 'tool-result' && part.isError === false);
  assert.deepEqual((part.output as { output?: unknown }).output, { chargeId: 'ch_A', cents: 1200 });
  assert.deepEqual(
    known.flatMap((record) =>
      record.type === 'tool-settled' && record.seq > 17
        ? [[record.callId, record.status, record.reason]]
        : [],
    ),
    [
      ['call-a', 'completed', 'reconciled'],
      ['call-b', 'failed', 'did-not-happen'],
      ['call-c', 'failed', 'interrupted'],
    ],
  );
  const state = foldAll(records);
  assert.deepEqual(state.open, []);
  assert.equal(state.revivals, 1);
  assert.deepEqual(callsToReconcile(records, state), []);
  const inspection = await Revival.inspect({ path: fixture('reconciled.jsonl'), maxRevivals: 3 });
  assert.ok(inspection.revivable, JSON.stringify(inspection));
  assert.equal(inspection.revivalsUsed, 1);
  assert.deepEqual(inspection.openDispatches, []);
});

test('reconciled.jsonl (a copy) opens for append and goes on after its closing checkpoint', async () => {
  const folder = await makeTempFolder();
  try {
    const path = join(folder, 'reconciled.jsonl');
    await copyFile(fixture('reconciled.jsonl'), path);
    const original = await readFile(path);
    const session = await Session.open(path);
    const lastSeq = session.lastSeq;
    const record = await session.appendDurable(textMessage('user', 'one more'));
    await session.close();
    assert.equal(record.seq, lastSeq + 1);
    assert.equal(record.v, 1, 'a record without format-2 members is still written v1');
    assert.ok(
      (await readFile(path)).subarray(0, original.length).equals(original),
      'only appended to',
    );
  } finally {
    await removeFolder(folder);
  }
});
