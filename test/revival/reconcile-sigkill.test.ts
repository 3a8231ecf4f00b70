import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Loop } from '../../src/loop/loop.ts';
import type { ToolDefinition } from '../../src/loop/types.ts';
import { type Reconciliation, Revival, reconcileStoreRun } from '../../src/revival/index.ts';
import { reviveStoreRun } from '../../src/revival/revive-store-run.ts';
import {
  DID_NOT_HAPPEN_MESSAGE,
  INTERRUPTED_MESSAGE,
  RECOVERED_NOTE,
} from '../../src/revival/texts.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { ScriptedModel } from '../../src/testing/index.ts';
import { peek } from '../../src/transcript/peek.ts';
import type { ForeignRecord, TranscriptRecord } from '../../src/transcript/records.ts';
import { isKnownRecord } from '../../src/transcript/validate-record.ts';
import { type TestDatabase, testDatabase } from '../support/postgres.ts';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';
import { chargedText, chargeTool } from './support/ledger.ts';

/*
 * A real SIGKILL mid-tool, on files and on PostgreSQL: `call-a` charged the ledger (the world)
 * under its idempotency key, `call-b` never reached it. A `charge` tool whose reconcile looks the
 * key up turns both "outcome unknown" answers into the truth — call-a completed, with the output
 * it produced, call-b did not happen — without running either again; without a reconcile the
 * revival answers both as interrupted, exactly as before.
 */

const worker = fileURLToPath(new URL('./support/ledger-worker.ts', import.meta.url));

let database: TestDatabase;
before(async () => {
  database = await testDatabase();
});
after(async () => {
  await database?.stop();
});

/** Start the worker, wait for both calls to be in their tool, SIGKILL it; its exit signal. */
async function killMidTool(args: string[]): Promise<NodeJS.Signals | null> {
  const child = spawn(process.execPath, [worker, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<NodeJS.Signals | null>((done) =>
    child.on('exit', (_code, signal) => done(signal)),
  );
  const seen = new Set<string>();
  for await (const line of createInterface({ input: child.stdout })) {
    seen.add(line);
    if (seen.has('in-tool call-a') && seen.has('in-tool call-b')) break;
  }
  child.kill('SIGKILL');
  return exited;
}

/** The charge tool as a reviver has it: execute must never run; reconcile asks `lookup`. */
function reviverTools(lookup: (key: string) => Promise<{ cents: number } | undefined>): {
  tools: ToolDefinition<unknown>[];
  executions: () => number;
} {
  let executions = 0;
  const tool = chargeTool({
    execute: async () => {
      executions += 1;
    },
    lookup,
  });
  return { tools: [tool as ToolDefinition<unknown>], executions: () => executions };
}

function keysOf(records: (TranscriptRecord | ForeignRecord)[]): Map<string, string> {
  const keys = new Map<string, string>();
  for (const record of records.filter(isKnownRecord)) {
    if (record.type === 'tool-dispatched' && record.idempotencyKey !== undefined) {
      keys.set(record.callId, record.idempotencyKey);
    }
  }
  return keys;
}

function answersOf(records: (TranscriptRecord | ForeignRecord)[]): Map<string, unknown> {
  const answers = new Map<string, unknown>();
  for (const record of records.filter(isKnownRecord)) {
    if (record.type !== 'message' || record.extras?.injected !== 'revival') continue;
    for (const part of record.content) {
      if (part.type === 'tool-result') answers.set(part.callId, [part.output, part.isError]);
    }
  }
  return answers;
}

function settlesOf(records: (TranscriptRecord | ForeignRecord)[]): Map<string, string> {
  const settles = new Map<string, string>();
  for (const record of records.filter(isKnownRecord)) {
    if (record.type === 'tool-settled') {
      settles.set(record.callId, `${record.status}/${record.reason}`);
    }
  }
  return settles;
}

function expectedTruth(keys: Map<string, string>): Reconciliation[] {
  return [
    {
      callId: 'call-a',
      toolName: 'charge',
      idempotencyKey: keys.get('call-a') as string,
      answer: 'completed',
      output: chargedText(1200, keys.get('call-a') as string),
      isError: false,
    },
    {
      callId: 'call-b',
      toolName: 'charge',
      idempotencyKey: keys.get('call-b') as string,
      answer: 'did-not-happen',
    },
  ];
}

test('files: after a real SIGKILL, a reconcile that sees the ledger turns both unknown outcomes into the truth; without one nothing changes', async () => {
  const folder = await makeTempFolder();
  try {
    const path = join(folder, 'main.jsonl');
    const ledgerPath = join(folder, 'ledger.jsonl');
    assert.equal(await killMidTool(['file', path, ledgerPath]), 'SIGKILL');
    // The fault happened: both calls dispatched (with keys), one charge in the world.
    const ledger = async () =>
      (await readFile(ledgerPath, 'utf8'))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { key: string; cents: number });
    assert.equal((await ledger()).length, 1);
    const before = await peek(path);
    assert.ok(before.ok);
    const keys = keysOf(before.records);
    assert.equal(keys.size, 2);
    assert.equal((await ledger())[0]?.key, keys.get('call-a'));

    // Without a reconcile: the interrupted answer, exactly as before.
    const plainPath = join(folder, 'plain.jsonl');
    await copyFile(path, plainPath);
    const plainTools = reviverTools(async () => undefined);
    const noReconcile = plainTools.tools.map(({ reconcile: _r, ...tool }) => tool);
    assert.deepEqual(await Revival.reconcile({ path: plainPath, tools: noReconcile }), []);
    const plain = await Revival.revive({ path: plainPath, agentId: 'main', maxRevivals: 2 });
    assert.ok(plain.ok, JSON.stringify(plain));
    await plain.session.close();
    assert.deepEqual(plain.interrupted.sort(), ['call-a', 'call-b']);
    const plainRead = await peek(plainPath);
    assert.ok(plainRead.ok);
    assert.deepEqual(
      [...answersOf(plainRead.records).values()],
      [
        [INTERRUPTED_MESSAGE, true],
        [INTERRUPTED_MESSAGE, true],
      ],
    );

    // With one: the truth, asked before the revive and shown to whoever confirms it.
    const { tools, executions } = reviverTools(async (key) =>
      (await ledger()).find((line) => line.key === key),
    );
    const reconciled = await Revival.reconcile({ path, tools });
    assert.deepEqual(reconciled, expectedTruth(keys));
    const revived = await Revival.revive({ path, agentId: 'main', maxRevivals: 2, reconciled });
    assert.ok(revived.ok, JSON.stringify(revived));
    assert.deepEqual(revived.interrupted, []);
    assert.deepEqual(revived.reconciled, [
      { callId: 'call-a', answer: 'completed' },
      { callId: 'call-b', answer: 'did-not-happen' },
    ]);
    const model = new ScriptedModel([{ text: 'Order A is paid; I will charge B again.' }]);
    const result = await new Loop({ backends: [model.model], writer: revived.session, tools }).run(
      revived.messages,
    );
    await revived.session.close();
    assert.equal(result.status, 'finished', JSON.stringify(result));
    assert.deepEqual(model.violations, []);
    const prompt = JSON.stringify(model.prompts[0]);
    assert.ok(prompt.includes(RECOVERED_NOTE.slice(0, 60)));
    assert.ok(prompt.includes(chargedText(1200, keys.get('call-a') as string)));
    assert.ok(prompt.includes(DID_NOT_HAPPEN_MESSAGE.slice(0, 60)));
    assert.ok(!prompt.includes(INTERRUPTED_MESSAGE.slice(80, 140)));
    // Nothing ran again: no execution in the reviver, one charge in the world.
    assert.equal(executions(), 0);
    assert.equal((await ledger()).length, 1);
    const after = await peek(path);
    assert.ok(after.ok);
    assert.deepEqual(Object.fromEntries(settlesOf(after.records)), {
      'call-a': 'completed/reconciled',
      'call-b': 'failed/did-not-happen',
    });
  } finally {
    await removeFolder(folder);
  }
});

test('PostgreSQL: after a real SIGKILL, a reconcile that sees the ledger table turns both unknown outcomes into the truth; without one nothing changes', async () => {
  const schema = database.schema;
  await PostgresStore.migrate({ connectionString: database.url, schema });
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  const stores: PostgresStore[] = [];
  try {
    await admin.query(`CREATE TABLE "${schema}".ledger (key text primary key, cents int)`);
    const leaseMs = 1500;
    const signal = await killMidTool(['pg', database.url, schema, String(leaseMs)]);
    assert.equal(signal, 'SIGKILL');
    const rows = async () =>
      (await admin.query<{ key: string; cents: number }>(`SELECT * FROM "${schema}".ledger`)).rows;
    assert.equal((await rows()).length, 1);
    await new Promise((done) => setTimeout(done, leaseMs + 200));
    const store = await PostgresStore.connect({ connectionString: database.url, schema });
    stores.push(store);
    const read = await store.read('main');
    assert.ok(read.ok);
    const keys = keysOf(read.records);
    assert.equal(keys.size, 2);
    assert.equal((await rows())[0]?.key, keys.get('call-a'));

    // Without a reconcile there is nothing to ask.
    const plainTools = reviverTools(async () => undefined);
    const noReconcile = plainTools.tools.map(({ reconcile: _r, ...tool }) => tool);
    assert.deepEqual(await reconcileStoreRun({ store, run: 'main', tools: noReconcile }), []);

    const { tools, executions } = reviverTools(async (key) =>
      (await rows()).find((row) => row.key === key),
    );
    const reconciled = await reconcileStoreRun({ store, run: 'main', tools });
    assert.deepEqual(reconciled, expectedTruth(keys));
    const revived = await reviveStoreRun({ store, run: 'main', maxRevivals: 2, reconciled });
    assert.ok(revived.ok, JSON.stringify(revived));
    assert.deepEqual(revived.interrupted, []);
    const model = new ScriptedModel([{ text: 'Order A is paid.' }]);
    const result = await new Loop({ backends: [model.model], writer: revived.writer, tools }).run(
      revived.messages,
    );
    await revived.writer.close();
    assert.equal(result.status, 'finished', JSON.stringify(result));
    const prompt = JSON.stringify(model.prompts[0]);
    assert.ok(prompt.includes(chargedText(1200, keys.get('call-a') as string)));
    assert.ok(prompt.includes(DID_NOT_HAPPEN_MESSAGE.slice(0, 60)));
    assert.equal(executions(), 0);
    assert.equal((await rows()).length, 1);
    const after = await store.read('main');
    assert.ok(after.ok);
    assert.deepEqual(Object.fromEntries(settlesOf(after.records)), {
      'call-a': 'completed/reconciled',
      'call-b': 'failed/did-not-happen',
    });
  } finally {
    for (const store of stores) await store.close().catch(() => undefined);
    await admin.end();
  }
});
