import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RecordBody } from '../../src/transcript/records.ts';
import { Session } from '../../src/transcript/session.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';
import { readAll } from '../support/repair-checks.ts';
import { buildTranscript, metaBody, textMessage } from '../support/transcripts.ts';

/*
 * What a repair records about the bytes it cut, and what the fold makes of it: bytes that may
 * hold a dispatch (`possiblyDispatched`) turn every call of the last turn with neither a
 * dispatch nor a result into an open dispatch — in the session that repaired, and for every
 * later reader and reopen; bytes that begin as the next record naming another type do not.
 * A repair interrupted after its truncation (the sidecar exists, its record does not) is
 * finished by the next open, with the mark decided from the sidecar.
 */

const PATH = '/runs/run.jsonl';
const BODIES: RecordBody[] = [
  metaBody(),
  textMessage('user', 'Pay, then log'),
  {
    type: 'message',
    role: 'assistant',
    content: [
      { type: 'tool-call', callId: 'pay', toolName: 'charge', input: {} },
      { type: 'tool-call', callId: 'log', toolName: 'note', input: {} },
    ],
  },
];
const built = buildTranscript(BODIES);

async function openState(fileSystem: MemoryFileSystem) {
  const session = await Session.open(PATH, { fileSystem });
  const state = session.state;
  await session.close();
  return state;
}

for (const [name, torn, marked] of [
  ['a dispatch cut short', '{"v":1,"seq":3,"type":"tool-disp', true],
  ['a line cut before its type', '{"v":1,"seq":3,"ty', true],
  ['zeros', '\0\0\0\0\0\0', true],
  ['a message cut short', '{"v":1,"seq":3,"type":"message","at":"2026', false],
] as const) {
  test(`a torn tail that is ${name}: ${marked ? 'the calls of the last turn count as dispatched' : 'the calls are left to run'}`, async () => {
    const fileSystem = new MemoryFileSystem();
    fileSystem.writeFile(PATH, Buffer.concat([built.bytes, Buffer.from(torn)]));
    const state = await openState(fileSystem);
    const open = state.open.map((dispatch) => [dispatch.callId, dispatch.possiblyDispatched]);
    assert.deepEqual(
      open,
      marked
        ? [
            ['pay', true],
            ['log', true],
          ]
        : [],
    );
    const records = await readAll(PATH, fileSystem);
    const repair = records.find((record) => record.tailRepair !== undefined)?.tailRepair;
    assert.equal(repair?.possiblyDispatched, marked ? true : undefined);
    // A reopen folds the same state from the file (the mark is in the transcript).
    assert.deepEqual((await openState(fileSystem)).open, state.open);
  });
}

test('a repair interrupted after its truncation is finished by the next open, mark included', async () => {
  for (const [head, marked] of [
    ['{"v":1,"seq":3,"type":"tool-dispatched","at"', true],
    ['{"v":1,"seq":3,"type":"message","at"', false],
  ] as const) {
    const fileSystem = new MemoryFileSystem();
    // What the interrupted repair left: the sidecar written, the file truncated, no record.
    fileSystem.writeFile(PATH, built.bytes);
    fileSystem.writeFile(`${PATH}.torn-${built.bytes.length}`, Buffer.from(head));
    const state = await openState(fileSystem);
    assert.equal(state.open.length, marked ? 2 : 0, head);
    const records = await readAll(PATH, fileSystem);
    const repair = records.find((record) => record.tailRepair !== undefined)?.tailRepair;
    assert.deepEqual(repair, {
      validBytes: built.bytes.length,
      tornBytes: head.length,
      sidecar: `run.jsonl.torn-${built.bytes.length}`,
      ...(marked ? { possiblyDispatched: true } : {}),
    });
  }
});
