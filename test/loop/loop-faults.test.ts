import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { Loop } from '../../src/loop/loop.ts';
import type { ToolDefinition } from '../../src/loop/types.ts';
import { Revival } from '../../src/revival/index.ts';
import { INTERRUPTED_MESSAGE, RESUME_NOTICE } from '../../src/revival/texts.ts';
import { nodeFileSystem } from '../../src/transcript/file-system.ts';
import type { FileSystemOperation } from '../../src/testing/faulty-file-system.ts';
import { FaultyFileSystem } from '../../src/testing/index.ts';
import { latch } from '../support/latch.ts';
import {
  assertWriteOrder,
  echoTool,
  freshSession,
  type LogEntry,
  RecordingFileSystem,
  recordsOf,
  shapeOf,
} from './support/harness.ts';
import { ScriptedModel } from '../../src/testing/index.ts';

const script = () =>
  new ScriptedModel([
    {
      calls: [
        { id: 'a', name: 'echo', input: { text: '1' } },
        { id: 'b', name: 'echo', input: { text: '2' } },
      ],
    },
    { calls: [{ id: 'c', name: 'echo', input: { text: '3' } }] },
    { text: 'Done.' },
  ]);

/**
 * Run the scripted conversation with the transcript's `nth` call of `operation` (after the
 * session exists) failing with EIO. Returns what the run and the file system did.
 */
async function runWithFault(operation: FileSystemOperation | null, nth: number) {
  const log: LogEntry[] = [];
  const faulty = new FaultyFileSystem(nodeFileSystem);
  const fixture = await freshSession(new RecordingFileSystem(log, faulty));
  const before = {
    write: faulty.count('write', fixture.path),
    sync: faulty.count('sync', fixture.path),
  };
  try {
    if (operation !== null) {
      faulty.addRule({
        operation,
        path: fixture.path,
        nth,
        fault: { kind: 'error', code: 'EIO' },
      });
    }
    const loop = new Loop({
      backends: [script().model],
      writer: fixture.session,
      tools: [echoTool(log)],
    });
    const result = await loop.start('Echo 1, 2, then 3');
    /** Calls made after the session was created (the ones a rule counts). */
    const count = (name: 'write' | 'sync') => faulty.count(name, fixture.path) - before[name];
    const byRun = { write: count('write'), sync: count('sync') };
    await fixture.session.close();
    const inspection = await Revival.inspect({ path: fixture.path, maxRevivals: 5 });
    return {
      result,
      log,
      fired: faulty.fired.length,
      count,
      /** Of those, the ones the run made (its host's close of the session comes after). */
      countByRun: (name: 'write' | 'sync') => byRun[name],
      inspection,
    };
  } finally {
    await fixture.close();
  }
}

test('an I/O failure at any write or sync: the run ends failed (never rejects), no tool ever started without a synced dispatch, the file stays revivable', async () => {
  const clean = await runWithFault(null, 0);
  assert.equal(clean.result.status, 'finished');
  const writes = clean.countByRun('write');
  const syncs = clean.countByRun('sync');
  assert.ok(writes >= 10 && syncs >= 5, `writes ${writes}, syncs ${syncs}`);
  let checked = 0;
  for (const operation of ['write', 'sync'] as const) {
    const total = operation === 'write' ? writes : syncs;
    for (let nth = 1; nth <= total; nth += 1) {
      const run = await runWithFault(operation, nth);
      assert.equal(run.fired, 1, `${operation} #${nth}: the fault fired`);
      assert.equal(run.result.status, 'failed', `${operation} #${nth}`);
      assert.match(run.result.error ?? '', /could not be (written|synced)|EIO/);
      // Every side effect that happened had its dispatch written and synced first.
      assertWriteOrder(run.log);
      assert.notEqual(run.inspection.reason, 'unreadable', `${operation} #${nth}`);
      checked += 1;
    }
  }
  assert.equal(checked, writes + syncs);
});

test('an I/O failure while closing a finished run: the run stays finished, close does not reject, nothing is lost', async () => {
  const clean = await runWithFault(null, 0);
  const closing = {
    write: clean.count('write') - clean.countByRun('write'),
    sync: clean.count('sync') - clean.countByRun('sync'),
  };
  // Closing a finished run writes its closing checkpoint and syncs it.
  assert.deepEqual(closing, { write: 1, sync: 1 });
  for (const operation of ['write', 'sync'] as const) {
    const run = await runWithFault(operation, clean.countByRun(operation) + 1);
    assert.equal(run.fired, 1, `${operation} at close: the fault fired`);
    assert.equal(run.result.status, 'finished', `${operation} at close`);
    assert.equal(run.inspection.reason, 'finished', `${operation} at close`);
    assert.equal(run.inspection.messages, clean.inspection.messages, `${operation} at close`);
  }
});

test('abort mid-tool, revive, run again: the interrupted call is answered honestly, never replayed, the run finishes', async () => {
  const fixture = await freshSession();
  let executions = 0;
  const { promise: running, release: started } = latch();
  const deploy: ToolDefinition<{ target: string }> = {
    name: 'deploy',
    description: 'Deploys',
    inputSchema: z.object({ target: z.string() }),
    idempotency: 'side-effect',
    execute: (_input, { signal }) =>
      new Promise((_resolve, reject) => {
        executions += 1;
        started();
        signal.addEventListener('abort', () => reject(signal.reason));
      }),
  };
  try {
    const first = new ScriptedModel([
      { calls: [{ id: 'd1', name: 'deploy', input: { target: 'prod' } }] },
    ]);
    const run = new Loop({
      backends: [first.model],
      writer: fixture.session,
      tools: [deploy],
    }).start('Deploy to prod');
    await running;
    run.abort();
    assert.equal((await run).status, 'aborted');
    await fixture.session.close();

    const revived = await Revival.revive({ path: fixture.path, agentId: 'main', maxRevivals: 2 });
    assert.ok(revived.ok, JSON.stringify(revived));
    try {
      const second = new ScriptedModel([{ text: 'I will check prod before deploying again.' }]);
      const result = await new Loop({
        backends: [second.model],
        writer: revived.session,
        tools: [deploy],
      }).run(revived.messages);
      assert.equal(result.status, 'finished', result.error);
      assert.equal(executions, 1, 'the interrupted deploy was not replayed');
      assert.deepEqual(second.violations, []);
      const prompt = second.prompts[0] ?? [];
      assert.deepEqual(
        prompt.map((message) => message.role),
        ['user', 'assistant', 'tool', 'user'],
      );
      const tool = prompt[2];
      assert.ok(tool?.role === 'tool');
      assert.deepEqual(tool.content[0]?.type === 'tool-result' && tool.content[0].output, {
        type: 'error-text',
        value: INTERRUPTED_MESSAGE,
      });
      const notice = prompt[3];
      assert.ok(notice?.role === 'user');
      assert.deepEqual(
        notice.content.map((part) => (part.type === 'text' ? part.text : part.type)),
        [RESUME_NOTICE],
      );
      const shape = shapeOf(await recordsOf(fixture.path));
      assert.equal(shape.filter((entry) => entry === 'tool-dispatched:d1').length, 1);
      assert.equal(shape.at(-1), 'assistant(text)');
    } finally {
      await revived.session.close();
    }
    const after = await Revival.inspect({ path: fixture.path, maxRevivals: 2 });
    assert.equal(after.reason, 'finished');
  } finally {
    await fixture.close();
  }
});
