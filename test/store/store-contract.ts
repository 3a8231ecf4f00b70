import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { z } from 'zod';
import { Loop } from '../../src/loop/loop.ts';
import { reviveStoreRun } from '../../src/revival/revive-store-run.ts';
import { INTERRUPTED_MESSAGE } from '../../src/revival/texts.ts';
import type { StoreRead, TranscriptStore } from '../../src/store/transcript-store.ts';
import { ScriptedModel } from '../../src/testing/index.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { peek } from '../../src/transcript/peek.ts';
import type { RecordBody, TranscriptRecord } from '../../src/transcript/records.ts';
import { TranscriptError } from '../../src/transcript/transcript-error.ts';
import { isKnownRecord } from '../../src/transcript/validate-record.ts';
import { inFlightCall } from '../revival/support/transcripts.ts';
import { makeTempFolder, removeFolder, sessionMeta } from '../support/transcripts.ts';

/*
 * The contract every TranscriptStore keeps, as one suite run against each implementation (the
 * file store and the PostgreSQL store): what is appended before a barrier is there, in order,
 * checksummed; one writer at a time; a writer taken over never writes again; damage is named;
 * a Loop runs on any store's writer; an export is the v1 lines byte for byte.
 */

/** What the suite needs from one implementation. */
export interface StoreHarness {
  name: string;
  /** A fresh, empty store (each call a new one). */
  make(): Promise<TranscriptStore>;
  /** Another handle on the same store `store` uses, as another process or worker would hold. */
  other(store: TranscriptStore): Promise<TranscriptStore>;
  /**
   * Take `run` over from under its current writer, the way that can happen to this store (a
   * file replaced at its path; a lease expired and claimed by another worker), returning the
   * new writer — and proving the takeover happened.
   */
  takeOver(
    store: TranscriptStore,
    run: string,
  ): Promise<Awaited<ReturnType<TranscriptStore['open']>>>;
  /** Change one byte of record `seq` of `run` as stored (bit rot, an editor, an attacker). */
  corrupt(store: TranscriptStore, run: string, seq: number): Promise<void>;
  /** Release everything the harness made. */
  cleanup(): Promise<void>;
}

const user = (text: string): RecordBody => ({
  type: 'message',
  role: 'user',
  content: [{ type: 'text', text }],
});

function records(found: StoreRead): TranscriptRecord[] {
  assert.ok(found.ok, found.ok ? '' : found.detail);
  return found.records.filter(isKnownRecord);
}

/** The TranscriptError `operation` throws or rejects with (a writer may refuse either way). */
async function refusal(operation: () => Promise<unknown>): Promise<TranscriptError> {
  try {
    await operation();
  } catch (error) {
    assert.ok(TranscriptError.isInstance(error), String(error));
    return error;
  }
  assert.fail('expected a TranscriptError');
}

/** Register the contract's tests for one store. */
export function storeContract(harness: StoreHarness): void {
  const named = (title: string) => `${harness.name}: ${title}`;

  test(
    named('what was appended before a barrier reads back whole, in order, checksummed'),
    async () => {
      const store = await harness.make();
      const writer = await store.create('main', sessionMeta('main'));
      await writer.append(user('one'));
      await writer.append(user('two'));
      await writer.barrier();
      await writer.appendDurable(user('three'));
      assert.equal(writer.lastSeq, 3);
      await writer.close();
      const found = records(await store.read('main'));
      assert.deepEqual(
        found
          .filter((record) => record.type !== 'checkpoint')
          .map((record) => [record.seq, record.type]),
        [
          [0, 'session-meta'],
          [1, 'message'],
          [2, 'message'],
          [3, 'message'],
        ],
      );
      assert.deepEqual(
        found.map((record) => record.seq),
        found.map((_, index) => index),
        'seqs are gapless from 0',
      );
      assert.equal(found.at(-1)?.type, 'checkpoint', 'a clean close ends with the whole state');
      assert.deepEqual(await store.list(), ['main']);
    },
  );

  test(named('a record a reader would refuse is not appended, and the run reads on'), async () => {
    const store = await harness.make();
    const writer = await store.create('main', sessionMeta('main'));
    await writer.appendDurable(user('one'));
    const bad = {
      type: 'tool-dispatched',
      callId: 'call_1',
      toolName: 'deploy',
      inputDigest: 'sha256:00',
      idempotency: 'unsafe',
    } as unknown as RecordBody;
    let thrown: unknown;
    try {
      await writer.append(bad);
    } catch (error) {
      thrown = error;
    }
    assert.ok(thrown instanceof TypeError, String(thrown));
    assert.match(thrown.message, /not appended, a reader would refuse this tool-dispatched record/);
    assert.ok(
      thrown.message.startsWith(`${writer.path}: not appended`),
      `the refusal names the writer's path: ${thrown.message}`,
    );
    await writer.appendDurable(user('two'));
    await writer.close();
    const found = records(await store.read('main'));
    assert.deepEqual(
      found.filter((record) => record.type === 'message').map((record) => record.seq),
      [1, 2],
      'the refused record used no seq',
    );
    assert.equal(
      found.some((record) => record.type === 'tool-dispatched'),
      false,
    );
  });

  test(
    named('create refuses a run that exists; open and read of a missing run say so'),
    async () => {
      const store = await harness.make();
      const writer = await store.create('main', sessionMeta('main'));
      await writer.close();
      assert.equal((await refusal(() => store.create('main', sessionMeta('main')))).code, 'exists');
      const missing = await store.read('nobody');
      assert.ok(!missing.ok);
      assert.equal(missing.reason, 'missing');
      await refusal(() => store.open('nobody'));
    },
  );

  test(
    named('held says whether a live writer holds a run, as another handle sees it'),
    async () => {
      const store = await harness.make();
      const other = await harness.other(store);
      assert.equal(await other.held('main'), false, 'a run that does not exist is not held');
      const writer = await store.create('main', sessionMeta('main'));
      assert.equal(await other.held('main'), true, 'held while its writer is open');
      await writer.close();
      assert.equal(await other.held('main'), false, 'let go once its writer closed');
      const reopened = await other.open('main');
      assert.equal(await store.held('main'), true, 'held by the writer that opened it');
      await reopened.close();
      await other.close();
    },
  );

  test(
    named('a child run is named <parent>.agents/<agent id>: created, read and listed like any run'),
    async () => {
      const store = await harness.make();
      const parent = await store.create('main', sessionMeta('main'));
      const child = await store.create('main.agents/worker-1', {
        ...sessionMeta('worker-1'),
        parent: { transcript: '../main.jsonl', callId: 'call_1' },
      });
      await child.appendDurable(user('part A'));
      await child.close();
      await parent.close();
      const found = records(await store.read('main.agents/worker-1'));
      assert.deepEqual(
        found.map((record) => record.type),
        ['session-meta', 'message', 'checkpoint'],
      );
      assert.deepEqual(await store.list(), ['main', 'main.agents/worker-1']);
      // A child-shaped name whose parent the store does not hold is still a run of its own.
      const orphan = await store.create('gone.agents/worker-2', {
        ...sessionMeta('worker-2'),
        parent: { transcript: '../gone.jsonl', callId: 'call_2' },
      });
      await orphan.close();
      assert.ok((await store.read('gone.agents/worker-2')).ok);
    },
  );

  test(
    named(
      'one writer at a time: open is refused while a writer holds the run, then goes on from its state',
    ),
    async () => {
      const store = await harness.make();
      const second = await harness.other(store);
      const writer = await store.create('main', sessionMeta('main'));
      await writer.append({
        type: 'message',
        role: 'assistant',
        content: [{ type: 'tool-call', callId: 'c1', toolName: 'write', input: {} }],
      });
      await writer.appendDurable({
        type: 'tool-dispatched',
        callId: 'c1',
        toolName: 'write',
        inputDigest: `sha256:${'0'.repeat(64)}`,
        idempotency: 'side-effect',
      });
      assert.equal((await refusal(() => second.open('main'))).code, 'locked');
      await writer.close();
      const again = await second.open('main');
      assert.deepEqual(
        again.state.open.map((dispatch) => dispatch.callId),
        ['c1'],
        'the open dispatch is in the state the new writer folded',
      );
      const next = await again.append(user('carry on'));
      assert.equal(next.seq, writer.lastSeq + 1);
      await again.close();
      assert.equal(records(await store.read('main')).filter((r) => r.type === 'message').length, 2);
    },
  );

  test(
    named('appendDurable with a close asked in the same tick: durable, never refused'),
    async () => {
      const store = await harness.make();
      const writer = await store.create('main', sessionMeta('main'));
      // The close is asked while appendDurable's append has been accepted: its barrier must
      // still run (the record is committed with it), not be refused as `closed`.
      const durable = writer.appendDurable(user('last words'));
      const closed = writer.close();
      const record = await durable;
      await closed;
      assert.equal(record.seq, 1);
      const found = records(await store.read('main'));
      assert.deepEqual(
        found.filter((line) => line.type === 'message').map((line) => line.seq),
        [1],
      );
      await assert.rejects(writer.appendDurable(user('after')), (error: unknown) => {
        assert.ok(TranscriptError.isInstance(error));
        assert.equal(error.code, 'closed');
        return true;
      });
    },
  );

  test(named('of writers racing to open one run, exactly one wins'), async () => {
    const store = await harness.make();
    const writer = await store.create('main', sessionMeta('main'));
    await writer.close();
    const handles = await Promise.all(Array.from({ length: 6 }, () => harness.other(store)));
    const outcomes = await Promise.allSettled(handles.map((handle) => handle.open('main')));
    const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    assert.equal(won.length, 1, 'one winner');
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') {
        assert.ok(TranscriptError.isInstance(outcome.reason));
        assert.equal(outcome.reason.code, 'locked');
      }
    }
    await (
      won[0] as PromiseFulfilledResult<Awaited<ReturnType<TranscriptStore['open']>>>
    ).value.close();
  });

  test(
    named(
      'a writer taken over never writes again: its barrier fails ownership-lost and nothing of it lands',
    ),
    async () => {
      const store = await harness.make();
      const writer = await store.create('main', sessionMeta('main'));
      await writer.appendDurable(user('before'));
      const successor = await harness.takeOver(store, 'main');
      // The zombie tries to write: a record, then a barrier.
      let appended = true;
      try {
        await writer.append(user('from the zombie'));
      } catch (error) {
        appended = false;
        assert.ok(TranscriptError.isInstance(error));
      }
      const lost = await refusal(() => writer.barrier());
      assert.equal(lost.code, 'ownership-lost');
      assert.equal(writer.poisoned, true);
      assert.equal((await refusal(() => writer.append(user('again')))).code, 'ownership-lost');
      await successor.appendDurable(user('after'));
      await successor.close();
      await writer.close();
      const texts = records(await store.read('main')).flatMap((record) =>
        record.type === 'message' && record.content[0]?.type === 'text'
          ? [record.content[0].text]
          : [],
      );
      assert.deepEqual(
        texts,
        ['before', 'after'],
        `the zombie's record never landed (appended: ${appended})`,
      );
    },
  );

  test(
    named('the revive pipeline on this store: a call in flight answered once, counted, capped'),
    async () => {
      const store = await harness.make();
      const writer = await store.create('main', sessionMeta('main'));
      for (const body of inFlightCall()) await writer.append(body);
      await writer.barrier();
      // The run's process dies here: its writer is never closed, only dropped — a file's lock
      // goes with a closed descriptor; a lease must be taken over.
      const dead = await harness.takeOver(store, 'main');
      await dead.close();
      const revived = await reviveStoreRun({ store, run: 'main', maxRevivals: 1, agentId: 'main' });
      assert.ok(revived.ok, revived.ok ? '' : `${revived.reason}: ${revived.detail}`);
      assert.deepEqual(revived.interrupted, ['c1']);
      assert.equal(revived.revival.type, 'run-revived');
      const answer = revived.messages.find((message) => message.role === 'tool');
      assert.equal(answer?.extras?.injected, 'revival');
      await revived.writer.close();
      const found = records(await store.read('main'));
      const answers = found.filter((record) => record.type === 'message' && record.role === 'tool');
      assert.equal(answers.length, 1, 'answered once');
      assert.match(JSON.stringify(answers[0]), new RegExp(INTERRUPTED_MESSAGE.slice(0, 20)));
      assert.equal(found.filter((record) => record.type === 'tool-dispatched').length, 1);
      // Another agent named, or the cap reached: refused as data, nothing written.
      const other = await reviveStoreRun({ store, run: 'main', maxRevivals: 5, agentId: 'other' });
      assert.ok(!other.ok);
      assert.equal(other.reason, 'unreadable');
      assert.match(other.detail, /names agent 'main', not 'other'/);
      const capped = await reviveStoreRun({ store, run: 'main', maxRevivals: 1 });
      assert.ok(!capped.ok);
      assert.equal(capped.reason, 'revival-cap', capped.detail);
      assert.equal(
        records(await store.read('main')).length,
        found.length,
        'a refusal writes nothing',
      );
    },
  );

  test(named('damage is found and named: the run and the record'), async () => {
    const store = await harness.make();
    const writer = await store.create('main', sessionMeta('main'));
    await writer.append(user('one'));
    await writer.append(user('two'));
    await writer.close();
    await harness.corrupt(store, 'main', 1);
    const found = await store.read('main');
    assert.ok(!found.ok);
    assert.equal(found.reason, 'unreadable');
    assert.match(found.detail, /main/);
    assert.match(found.detail, /record 1|:2:|line 2/);
    await refusal(async () => (await harness.other(store)).open('main'));
  });

  test(
    named("a Loop runs on the store's writer, and what it wrote is the conversation the model saw"),
    async () => {
      const store = await harness.make();
      const model = new ScriptedModel([
        { calls: [{ id: 'call-1', name: 'add', input: { a: 2, b: 3 } }] },
        { text: 'It is 5.' },
      ]);
      const writer = await store.create('main', sessionMeta('main'));
      const result = await new Loop({
        backends: [model.model],
        writer: writer,
        tools: [
          {
            name: 'add',
            description: 'Adds',
            inputSchema: z.object({ a: z.number(), b: z.number() }),
            idempotency: 'read-only',
            execute: async ({ a, b }) => a + b,
          },
        ],
      }).start('What is 2 + 3?');
      await writer.close();
      assert.equal(result.status, 'finished', JSON.stringify(result));
      assert.equal(result.text, 'It is 5.');
      const found = records(await store.read('main'));
      assert.deepEqual(
        found.map((record) => record.type).filter((type) => type !== 'checkpoint'),
        [
          'session-meta',
          'message',
          'message',
          'tool-dispatched',
          'message',
          'tool-settled',
          'message',
        ],
        'the write order: dispatch before the result, the result before its settle',
      );
      assert.deepEqual(
        conversationView(found).map((message) => message.role),
        ['user', 'assistant', 'tool', 'assistant'],
      );
      assert.deepEqual(model.violations, []);
    },
  );

  test(
    named('an export is the v1 lines byte for byte: as a file it reads back the same records'),
    async () => {
      const store = await harness.make();
      const writer = await store.create('main', sessionMeta('main'));
      await writer.append(user('ünïcödé 日本語 and "quotes"'));
      await writer.close();
      const bytes = await store.exportBytes('main');
      const folder = await makeTempFolder();
      try {
        const path = join(folder, 'export.jsonl');
        await writeFile(path, bytes);
        const read = await peek(path);
        assert.ok(read.ok && read.state === 'clean');
        assert.deepEqual(read.records, records(await store.read('main')));
      } finally {
        await removeFolder(folder);
      }
    },
  );
}
