import assert from 'node:assert/strict';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { describe, test } from 'node:test';
import {
  BACKGROUND_FRAME,
  INTERRUPTED_MESSAGE,
  RESUME_NOTICE,
  Revival,
} from '../../src/revival/index.ts';
import type { Revived } from '../../src/revival/revive.ts';
import { nodeFileSystem } from '../../src/transcript/file-system.ts';
import { pairingViolations } from '../../src/transcript/pairing-violations.ts';
import type { ForeignRecord, TranscriptRecord } from '../../src/transcript/records.ts';
import { Session } from '../../src/transcript/session.ts';
import { FaultyFileSystem } from '../../src/testing/index.ts';
import { freshPaths, tempFolder } from './support/temp-folder.ts';
import {
  assistant,
  call,
  dispatch,
  fixedClock,
  inFlightCall,
  META,
  ofType,
  parallelBatch,
  recordsOf,
  result,
  settle,
  user,
  writeTranscript,
} from './support/transcripts.ts';

const folder = await tempFolder();
const fresh = freshPaths(folder);

async function reviveOk(path: string, maxRevivals = 3): Promise<Revived> {
  const revived = await Revival.revive({
    path,
    agentId: META.agentId,
    maxRevivals,
    clock: fixedClock(),
  });
  assert.ok(
    revived.ok,
    `revive refused: ${revived.ok ? '' : `${revived.reason}: ${revived.detail}`}`,
  );
  return revived;
}

async function reviveAndClose(path: string, maxRevivals = 3): Promise<Revived> {
  const revived = await reviveOk(path, maxRevivals);
  await revived.session.close();
  return revived;
}

/** The records revive appended to a transcript that had `before` records. */
async function appendedBy(
  path: string,
  before: number,
): Promise<(TranscriptRecord | ForeignRecord)[]> {
  return (await recordsOf(path)).slice(before);
}

const inFlight = inFlightCall();

/** Revive appended no tool message for c1, only its outcome-unknown settle with `reason`. */
function assertSettledWithoutMessage(
  appended: (TranscriptRecord | ForeignRecord)[],
  reason: 'completed-unpersisted' | 'orphaned',
): void {
  assert.equal(ofType(appended, 'message').filter((message) => message.role === 'tool').length, 0);
  assert.deepEqual(
    ofType(appended, 'tool-settled').map(({ callId, status, reason }) => ({
      callId,
      status,
      reason,
    })),
    [{ callId: 'c1', status: 'outcome-unknown', reason }],
  );
}

describe('A tool call that was in flight', () => {
  test('tool-dispatched with no tool-settled is answered as a failure, in the conversation, with a message that says what happened', async () => {
    const path = fresh();
    await writeTranscript(path, inFlight);
    const revived = await reviveAndClose(path);
    const answers = (await appendedBy(path, 4)).filter(
      (record) => record.type === 'message' && record.role === 'tool',
    );
    assert.deepEqual(
      answers.map((record) => (record as TranscriptRecord & { type: 'message' }).content),
      [
        [
          {
            type: 'tool-result',
            callId: 'c1',
            toolName: 'write_file',
            output: INTERRUPTED_MESSAGE,
            isError: true,
          },
        ],
      ],
    );
    assert.deepEqual(revived.interrupted, ['c1']);
    const answer = revived.messages.find((message) => message.role === 'tool');
    assert.equal(answer?.extras?.injected, 'revival');
  });

  test('The operation itself settles failed with reason interrupted', async () => {
    const path = fresh();
    await writeTranscript(path, inFlight);
    await reviveAndClose(path);
    const settles = ofType(await recordsOf(path), 'tool-settled');
    assert.deepEqual(
      settles.map(({ callId, status, reason }) => ({ callId, status, reason })),
      [{ callId: 'c1', status: 'failed', reason: 'interrupted' }],
    );
  });

  test('It is never replayed, and the idempotency the dispatch envelope records does not change that', async () => {
    const path = fresh();
    const readOnly = { ...dispatch('c1', 'read_file'), idempotency: 'read-only' as const };
    await writeTranscript(path, [
      user('Read a.txt'),
      assistant('', [call('c1', 'read_file')]),
      readOnly,
    ]);
    const revived = await reviveAndClose(path);
    const records = await recordsOf(path);
    assert.equal(ofType(records, 'tool-dispatched').length, 1, 'no second dispatch');
    assert.deepEqual(revived.interrupted, ['c1']);
    assert.equal(ofType(records, 'tool-settled')[0]?.reason, 'interrupted');
  });

  test('one tool message per interrupted call, carrying INTERRUPTED-MESSAGE and is-error => True', async () => {
    const path = fresh();
    await writeTranscript(path, [
      user('Write two files'),
      assistant('', [call('a'), call('b')]),
      dispatch('a'),
      dispatch('b'),
    ]);
    await reviveAndClose(path);
    const answers = ofType(await appendedBy(path, 5), 'message').filter(
      (message) => message.role === 'tool',
    );
    assert.equal(answers.length, 2);
    for (const [index, callId] of ['a', 'b'].entries()) {
      const part = answers[index]?.content[0];
      assert.deepEqual(part, {
        type: 'tool-result',
        callId,
        toolName: 'write_file',
        output: INTERRUPTED_MESSAGE,
        isError: true,
      });
      assert.equal(answers[index]?.extras?.injected, 'revival');
    }
  });

  test('Two other shapes settle without a message: completed-unpersisted, because the tool message is written before the settle', async () => {
    const path = fresh();
    await writeTranscript(path, [...inFlight, result('c1', 'write_file', 'wrote a.txt')]);
    const revived = await reviveAndClose(path);
    const appended = await appendedBy(path, 5);
    assertSettledWithoutMessage(appended, 'completed-unpersisted');
    assert.deepEqual(revived.revival.completedUnpersisted, ['c1']);
    const answer = revived.messages.find((message) => message.role === 'tool');
    assert.equal(
      answer?.content[0]?.type === 'tool-result' && answer.content[0].output,
      'wrote a.txt',
    );
  });

  test('Two other shapes settle without a message: orphaned, a compaction having spliced the turn away since', async () => {
    const path = fresh();
    // seq: 0 meta, 1 user, 2 assistant, 3 dispatch, 4 compaction of 1..2, 5 user
    await writeTranscript(path, [
      ...inFlight,
      { type: 'compaction', fromSeq: 1, toSeq: 2, summary: 'The user asked for a.txt.' },
      user('Go on'),
    ]);
    const revived = await reviveAndClose(path);
    const appended = await appendedBy(path, 6);
    assertSettledWithoutMessage(appended, 'orphaned');
    assert.deepEqual(revived.revival.orphaned, ['c1']);
  });

  test('the interrupted answer is durable before the settle that points at it', async () => {
    const path = fresh();
    await writeTranscript(path, inFlight);
    const fileSystem = new FaultyFileSystem(nodeFileSystem, { keepBytes: true });
    const revived = await Revival.revive({
      path,
      agentId: META.agentId,
      maxRevivals: 1,
      fileSystem,
    });
    assert.ok(revived.ok);
    const steps = () =>
      fileSystem.calls
        .filter(
          (entry) =>
            entry.path === path && (entry.operation === 'write' || entry.operation === 'sync'),
        )
        .map((entry) =>
          entry.operation === 'sync'
            ? 'sync'
            : (JSON.parse(entry.bytes?.toString() ?? '{}') as { type: string }).type,
        );
    // Revive's own writes, before the session is handed on.
    assert.deepEqual(steps(), [
      'message',
      'sync',
      'tool-settled',
      'message',
      'run-revived',
      'sync',
    ]);
    await revived.session.close();
    // Closing adds the closing checkpoint, made durable.
    assert.deepEqual(steps().slice(6), ['checkpoint', 'sync']);
  });

  test('a result that revival itself wrote is recognised and settles as interrupted', async () => {
    const path = fresh();
    const written = {
      ...result('c1', 'write_file', INTERRUPTED_MESSAGE),
      extras: { injected: 'revival' as const },
    };
    (written.content[0] as { isError: boolean }).isError = true;
    await writeTranscript(path, [...inFlight, written]);
    const revived = await reviveAndClose(path);
    const appended = await appendedBy(path, 5);
    assert.equal(
      ofType(appended, 'message').filter((message) => message.role === 'tool').length,
      0,
    );
    assert.deepEqual(
      ofType(appended, 'tool-settled').map(({ status, reason }) => ({ status, reason })),
      [{ status: 'failed', reason: 'interrupted' }],
    );
    assert.deepEqual(revived.interrupted, ['c1']);
  });

  test('in a parallel batch where some calls completed and some were in flight, the completed results are kept, never replaced', async () => {
    const path = fresh();
    await writeTranscript(path, parallelBatch());
    const revived = await reviveAndClose(path);
    const results = revived.messages
      .filter((message) => message.role === 'tool')
      .flatMap((message) => message.content)
      .map((part) => (part.type === 'tool-result' ? [part.callId, part.output, part.isError] : []));
    assert.deepEqual(results, [
      ['done', 'wrote a.txt', false],
      ['unpersisted', 'wrote b.txt', false],
      ['inFlight', INTERRUPTED_MESSAGE, true],
    ]);
    assert.deepEqual(revived.interrupted, ['inFlight']);
    assert.deepEqual(revived.revival.completedUnpersisted, ['unpersisted']);
  });
});

describe('Calls never dispatched, and joins', () => {
  test('calls in the last assistant turn that were never dispatched are left alone: the Loop runs them', async () => {
    const path = fresh();
    await writeTranscript(path, parallelBatch());
    const revived = await reviveAndClose(path);
    assert.deepEqual(revived.neverDispatched, [{ callId: 'later', toolName: 'read_file' }]);
    const records = await recordsOf(path);
    assert.ok(!records.some((record) => 'callId' in record && record.callId === 'later'));
  });

  test('A parent that is still waiting: its task_wait calls stay pending rather than being settled as unknown', async () => {
    const path = fresh();
    await writeTranscript(path, parallelBatch());
    const revived = await reviveAndClose(path);
    assert.deepEqual(revived.pendingJoins, [{ callId: 'join', agentIds: ['child-1'] }]);
    const settled = ofType(await recordsOf(path), 'tool-settled').map((record) => record.callId);
    assert.ok(!settled.includes('join'));
    const found = await Revival.inspect({ path, maxRevivals: 3 });
    assert.deepEqual(found.pendingJoins, [{ callId: 'join', agentIds: ['child-1'] }]);
  });

  test('a join whose answer is already in the conversation is answered, not pending: it settles completed-unpersisted', async () => {
    const path = fresh();
    await writeTranscript(path, [
      user('Wait for the child'),
      assistant('', [call('join', 'task_wait')]),
      dispatch('join', 'task_wait', ['child-1']),
      result('join', 'task_wait', 'child-1 said: done'),
    ]);
    const revived = await reviveAndClose(path);
    assert.deepEqual(revived.pendingJoins, []);
    assert.deepEqual(revived.revival.completedUnpersisted, ['join']);
  });

  test('Nothing in here touches the parent', async () => {
    const parent = fresh();
    await writeTranscript(parent, parallelBatch());
    const parentBytes = await readFile(parent);
    const child = join(`${parent.slice(0, -'.jsonl'.length)}.agents`, 'child-1.jsonl');
    await writeTranscript(child, inFlight, {
      meta: {
        ...META,
        agentId: 'child-1',
        parent: { transcript: `../${basename(parent)}`, callId: 'spawn-1' },
      },
    });
    const revived = await Revival.revive({ path: child, agentId: 'child-1', maxRevivals: 1 });
    assert.ok(revived.ok);
    await revived.session.close();
    assert.deepEqual(await readFile(parent), parentBytes);
  });
});

describe('It deliberately does not scan a directory, ask a human, or build a loop', () => {
  test('revive touches the transcript it was given, its lock file, its torn-tail sidecar and its tree claim, nothing else', async () => {
    const path = fresh();
    await writeTranscript(path, parallelBatch());
    await writeFile(
      path,
      Buffer.concat([await readFile(path), Buffer.from('{"v":1,"seq":10,"ty')]),
    );
    await writeTranscript(
      join(`${path.slice(0, -'.jsonl'.length)}.agents`, 'child-1.jsonl'),
      inFlight,
      {
        meta: { ...META, agentId: 'child-1' },
      },
    );
    const fileSystem = new FaultyFileSystem(nodeFileSystem);
    const revived = await Revival.revive({
      path,
      agentId: META.agentId,
      maxRevivals: 1,
      fileSystem,
    });
    assert.ok(revived.ok);
    await revived.session.close();
    // A joined child's transcript is looked at (lstat: a regular file, or missing), never read.
    const children = `${path.slice(0, -'.jsonl'.length)}.agents/`;
    const looked = fileSystem.calls.filter((entry) => entry.path?.startsWith(children));
    assert.ok(looked.length > 0, 'the joined child was looked at');
    assert.deepEqual(new Set(looked.map((entry) => entry.operation)), new Set(['identityOf']));
    const touched = new Set(
      fileSystem.calls.filter((entry) => !looked.includes(entry)).map((entry) => entry.path),
    );
    // The transcript, its nametag (and the nametag's temporary name), its folder, a sidecar, the claim.
    const expected = [
      path,
      `${path}.owner`,
      `${path}.owner.`,
      folder,
      `${path}.torn-`,
      `${path}.claim`,
    ];
    for (const name of touched) {
      assert.ok(
        expected.some(
          (allowed) =>
            name === allowed || (/[-.]$/.test(allowed) && name?.startsWith(allowed) === true),
        ),
        `revive touched ${name}`,
      );
    }
    assert.ok(
      fileSystem.calls.some((entry) => entry.operation === 'tryLock' && entry.path === path),
      'the lock was taken, on the transcript itself',
    );
    assert.ok(touched.has(`${path}.claim`), 'the tree was claimed');
    await assert.rejects(stat(`${path}.claim`), { code: 'ENOENT' }, 'closing released the claim');
  });
});

describe('A run that does not know any of this', () => {
  test('Every revived run is told, in the conversation, immediately before it starts thinking again', async () => {
    const path = fresh();
    await writeTranscript(path, inFlight);
    const revived = await reviveAndClose(path);
    const last = revived.messages.at(-1);
    assert.deepEqual(last?.content, [{ type: 'text', text: RESUME_NOTICE }]);
    assert.equal(last?.role, 'user');
    assert.equal(last?.extras?.injected, 'revival');
  });

  test('It opens with the same marker and the same first sentence as BACKGROUND-FRAME, and the texts are exactly those of docs/revival.md', () => {
    assert.equal(
      BACKGROUND_FRAME,
      '[background event] Automated notification from the system, not the user speaking.',
    );
    assert.equal(
      RESUME_NOTICE,
      '[background event] Automated notification from the system, not the user speaking. The previous session ended while this run was working, and the run has been resumed: everything above is its own conversation, up to the moment it stopped. Work it had not finished is still unfinished.',
    );
    assert.equal(
      INTERRUPTED_MESSAGE,
      'The previous session ended while this tool call was in flight, so it was interrupted. Whether it took effect is unknown, and it has NOT been retried: check the state of anything it was changing — a file it was writing may have been left half-written — before assuming either way.',
    );
    assert.ok(RESUME_NOTICE.startsWith(BACKGROUND_FRAME));
  });

  test('a second pass over the file can tell a run that has already been told from one that has not: the notice is never doubled', async () => {
    const path = fresh();
    await writeTranscript(path, inFlight);
    await reviveAndClose(path);
    // The revived run died before writing anything; the next revive must not tell it twice.
    const second = await reviveAndClose(path);
    const notices = ofType(await recordsOf(path), 'message').filter(
      (message) => message.extras?.injected === 'revival' && message.role === 'user',
    );
    assert.equal(notices.length, 1);
    assert.equal(second.revival.ordinal, 2);
    assert.equal(
      second.messages.filter(
        (message) => message.role === 'user' && message.extras?.injected === 'revival',
      ).length,
      1,
    );
  });
});

describe('What counts as revivable', () => {
  test('A transcript whose last message is an assistant turn asking for no tools is a run that finished', async () => {
    const path = fresh();
    await writeTranscript(path, [user('Hi'), assistant('Hello!')]);
    const bytes = await readFile(path);
    const revived = await Revival.revive({ path, agentId: META.agentId, maxRevivals: 3 });
    assert.deepEqual(revived.ok ? 'ok' : revived.reason, 'finished');
    assert.deepEqual(await readFile(path), bytes, 'nothing written');
  });

  for (const [kind, bodies] of [
    ['a turn with tool calls nothing answered', inFlight, 'calls-unanswered'],
    [
      'a tail of tool results the model never got to read',
      [...inFlight, result('c1'), settle('c1')],
      'results-unread',
    ],
    ['a user turn that was still being thought about', [user('Hi')], 'user-turn'],
  ] as const) {
    test(`Everything else is a run that was interrupted mid-work, and is revivable: ${kind}`, async () => {
      const path = fresh();
      await writeTranscript(path, [...bodies]);
      const found = await Revival.inspect({ path, maxRevivals: 1 });
      assert.equal(found.revivable, true);
      assert.equal(
        found.tail,
        kind === 'a user turn that was still being thought about'
          ? 'user-turn'
          : bodies === inFlight
            ? 'calls-unanswered'
            : 'results-unread',
      );
      const revived = await reviveAndClose(path, 1);
      assert.equal(revived.messages.at(-1)?.extras?.injected, 'revival');
    });
  }

  test('empty: a transcript with no conversation to carry on (only its session-meta) is refused, nothing written', async () => {
    const path = fresh();
    await writeTranscript(path, [
      { type: 'message', role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
    ]);
    const bytes = await readFile(path);
    const revived = await Revival.revive({ path, agentId: META.agentId, maxRevivals: 1 });
    assert.equal(revived.ok ? 'ok' : revived.reason, 'empty');
    assert.deepEqual(await readFile(path), bytes);
  });
});

describe('The cap, and why it is a parameter', () => {
  test('max-revivals bounds how many times one transcript may be revived, and it is counted from the transcript itself', async () => {
    const path = fresh();
    await writeTranscript(path, inFlight);
    assert.equal((await reviveAndClose(path, 2)).revival.ordinal, 1);
    assert.equal((await reviveAndClose(path, 2)).revival.ordinal, 2);
    const found = await Revival.inspect({ path, maxRevivals: 2 });
    assert.equal(found.revivalsUsed, 2);
    assert.equal(found.reason, 'revival-cap');
    const envelopes = ofType(await recordsOf(path), 'run-revived');
    assert.deepEqual(
      envelopes.map((envelope) => envelope.ordinal),
      [1, 2],
    );
  });

  test("A revival past the cap is refused with reason => 'revival-cap' and nothing is written", async () => {
    const path = fresh();
    await writeTranscript(path, inFlight);
    await reviveAndClose(path, 1);
    const bytes = await readFile(path);
    const revived = await Revival.revive({ path, agentId: META.agentId, maxRevivals: 1 });
    assert.equal(revived.ok ? 'ok' : revived.reason, 'revival-cap');
    assert.deepEqual(await readFile(path), bytes);
  });

  test('max-revivals => 0 refuses every revival, which is how a host turns the whole mechanism off', async () => {
    const path = fresh();
    await writeTranscript(path, inFlight);
    const bytes = await readFile(path);
    const revived = await Revival.revive({ path, agentId: META.agentId, maxRevivals: 0 });
    assert.equal(revived.ok ? 'ok' : revived.reason, 'revival-cap');
    assert.deepEqual(await readFile(path), bytes);
    await assert.rejects(stat(`${path}.owner`), { code: 'ENOENT' }, 'not even the lock taken');
  });

  test('of two run-revived envelopes after the same record, only the first counts', async () => {
    const path = fresh();
    const envelope = {
      type: 'run-revived' as const,
      ordinal: 1,
      maxRevivals: 3,
      afterSeq: 3,
      interrupted: [],
      completedUnpersisted: [],
      orphaned: [],
    };
    await writeTranscript(path, [...inFlight, envelope, { ...envelope }, user('again')]);
    const found = await Revival.inspect({ path, maxRevivals: 3 });
    assert.equal(found.revivalsUsed, 1);
  });
});

describe('Nothing throws', () => {
  test('revive throws only for a caller that asked for something impossible (a path and a session at once, neither, or a negative cap)', async () => {
    const path = fresh();
    await writeTranscript(path, inFlight);
    const session = await Session.open(path);
    try {
      const both = { path, session, agentId: 'a', maxRevivals: 1 } as unknown as Parameters<
        typeof Revival.revive
      >[0];
      await assert.rejects(Revival.revive(both), TypeError);
      const neither = { agentId: 'a', maxRevivals: 1 } as unknown as Parameters<
        typeof Revival.revive
      >[0];
      await assert.rejects(Revival.revive(neither), TypeError);
      await assert.rejects(Revival.revive({ path, agentId: 'a', maxRevivals: -1 }), RangeError);
      await assert.rejects(Revival.revive({ path, agentId: 'a', maxRevivals: 1.5 }), RangeError);
      await assert.rejects(
        Revival.revive({ path, agentId: 'a', maxRevivals: Number.NaN }),
        RangeError,
      );
    } finally {
      await session.close();
    }
  });

  test("Everything about the transcript's own state — finished, capped, unreadable — comes back as ok => False with a reason", async () => {
    const missing = join(folder, 'missing.jsonl');
    const revivedMissing = await Revival.revive({ path: missing, agentId: 'a', maxRevivals: 1 });
    assert.deepEqual(revivedMissing.ok ? 'ok' : revivedMissing.reason, 'unreadable');
    await assert.rejects(stat(`${missing}.owner`), { code: 'ENOENT' });
    await assert.rejects(stat(missing), { code: 'ENOENT' }, 'nothing created');
    const revivedFolder = await Revival.revive({ path: folder, agentId: 'a', maxRevivals: 1 });
    assert.deepEqual(revivedFolder.ok ? 'ok' : revivedFolder.reason, 'unreadable');
    const damaged = fresh();
    await writeTranscript(damaged, inFlight);
    const lines = (await readFile(damaged, 'utf8')).split('\n');
    lines[1] = `${lines[1]?.slice(0, -3)}xx}`;
    await writeFile(damaged, lines.join('\n'));
    const revivedDamaged = await Revival.revive({
      path: damaged,
      agentId: META.agentId,
      maxRevivals: 1,
    });
    assert.ok(!revivedDamaged.ok);
    assert.equal(revivedDamaged.reason, 'unreadable');
    assert.match(revivedDamaged.detail, new RegExp(`${damaged.replaceAll('.', '\\.')}:2: `));
  });

  test("damage before the last checkpoint, which inspect's tail read cannot see, is found by revive's full read: unreadable, nothing appended", async () => {
    const path = fresh();
    const padding = Array.from({ length: 400 }, (_, index) =>
      user(`turn ${index} ${'p'.repeat(900)}`),
    );
    await writeTranscript(path, [...padding, ...inFlight], { checkpointBytes: 64 * 1024 });
    const text = await readFile(path, 'utf8');
    const damaged = text.replace('"turn 3 ', '"turn 3!');
    await writeFile(path, damaged);
    assert.equal(
      (await Revival.inspect({ path, maxRevivals: 1 })).revivable,
      true,
      'the tail looks fine',
    );
    const revived = await Revival.revive({ path, agentId: META.agentId, maxRevivals: 1 });
    assert.ok(!revived.ok);
    assert.equal(revived.reason, 'unreadable');
    assert.match(revived.detail, /:5: /);
    assert.equal(await readFile(path, 'utf8'), damaged);
  });

  test('a transcript whose session-meta names another agent is refused, nothing written', async () => {
    const path = fresh();
    await writeTranscript(path, inFlight);
    const bytes = await readFile(path);
    const revived = await Revival.revive({ path, agentId: 'someone-else', maxRevivals: 1 });
    assert.ok(!revived.ok);
    assert.equal(revived.reason, 'unreadable');
    assert.match(revived.detail, /names agent 'researcher-1', not 'someone-else'/);
    assert.deepEqual(await readFile(path), bytes);
  });
});

describe('SYNOPSIS: hand back everything needed to start it again as ITSELF', () => {
  test('ok, session, messages, agent-id, agent-type, label and path come back; the session holds the writer lock', async () => {
    const path = fresh();
    await writeTranscript(path, inFlight);
    const revived = await reviveOk(path);
    try {
      assert.equal(revived.agentId, META.agentId);
      assert.equal(revived.agentType, META.agentType);
      assert.equal(revived.label, META.label);
      assert.equal(revived.path, path);
      assert.equal(revived.session.path, path);
      assert.deepEqual(
        revived.messages.map((message) => message.role),
        ['user', 'assistant', 'tool', 'user'],
      );
      const again = await Revival.revive({ path, agentId: META.agentId, maxRevivals: 3 });
      assert.equal(again.ok ? 'ok' : again.reason, 'running');
      assert.equal((await Revival.inspect({ path, maxRevivals: 3 })).reason, 'running');
    } finally {
      await revived.session.close();
    }
  });

  test('a session the caller already holds can be revived in place', async () => {
    const path = fresh();
    await writeTranscript(path, inFlight);
    const session = await Session.open(path, { durability: 'none' });
    try {
      const revived = await Revival.revive({ session, agentId: META.agentId, maxRevivals: 1 });
      assert.ok(revived.ok);
      assert.equal(revived.session, session);
      assert.equal(ofType(await recordsOf(path), 'run-revived').length, 1);
    } finally {
      await session.close();
    }
  });

  test("a refusal leaves the caller's session open and untouched", async () => {
    const path = fresh();
    await writeTranscript(path, [user('Hi'), assistant('Hello!')]);
    const session = await Session.open(path);
    try {
      const before = session.lastSeq;
      const revived = await Revival.revive({ session, agentId: META.agentId, maxRevivals: 1 });
      assert.equal(revived.ok ? 'ok' : revived.reason, 'finished');
      assert.equal(session.lastSeq, before);
      await session.append(user('still usable'));
    } finally {
      await session.close();
    }
  });

  test('the returned messages have zero pairing violations under all three provider rule sets', async () => {
    for (const bodies of [
      inFlight,
      [...inFlight, result('c1')],
      parallelBatch()
        .slice(0, -1)
        .concat([settle('unpersisted')]),
    ]) {
      const path = fresh();
      await writeTranscript(
        path,
        bodies.filter((body) => !(body.type === 'tool-settled' && body.callId === 'unpersisted')),
      );
      const revived = await reviveAndClose(path);
      const pending = new Set([
        ...revived.pendingJoins.map((join) => join.callId),
        ...revived.neverDispatched.map((call) => call.callId),
      ]);
      for (const rules of ['anthropic', 'openai-chat', 'openai-responses'] as const) {
        const violations = pairingViolations(revived.messages, rules);
        // Only the calls left for the Loop are unanswered yet; everything revival answered pairs.
        assert.deepEqual(
          violations.filter(
            (violation) =>
              !(violation.code === 'unanswered-call' && pending.has(violation.callId ?? '')),
          ),
          [],
          rules,
        );
      }
    }
  });

  test('once the Loop answers the calls left to it, the conversation pairs under all three rule sets', async () => {
    const path = fresh();
    await writeTranscript(path, parallelBatch());
    const revived = await reviveOk(path);
    try {
      await revived.session.append(result('later', 'read_file', 'contents'));
      await revived.session.append(result('join', 'task_wait', 'child-1 finished'));
      await revived.session.barrier();
      const { conversationView } = await import('../../src/transcript/conversation-view.ts');
      const view = conversationView(await recordsOf(path));
      assert.deepEqual(pairingViolations(view, 'all'), []);
      assert.equal(
        view.at(-1)?.extras?.injected,
        'revival',
        'the notice still stands right before the model thinks',
      );
    } finally {
      await revived.session.close();
    }
  });
});
