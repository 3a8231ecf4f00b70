import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Loop } from '../../src/loop/loop.ts';
import type { LoopMessage } from '../../src/loop/types.ts';
import { adoptChildren } from '../../src/subagents/adopt-children.ts';
import type { AgentRegistry } from '../../src/subagents/agent-definition.ts';
import { agentIdForSpawn } from '../../src/subagents/agent-id.ts';
import { BACKGROUND_FRAME } from '../../src/subagents/background-frame.ts';
import { childTranscriptPath } from '../../src/subagents/child-layout.ts';
import { Composer } from '../../src/subagents/composer.ts';
import { Family } from '../../src/subagents/family.ts';
import { outcomeFromTranscript } from '../../src/subagents/outcome-from-transcript.ts';
import { filePlaces } from '../../src/subagents/run-places.ts';
import type { Message, RecordBody } from '../../src/transcript/records.ts';
import { Session } from '../../src/transcript/session.ts';
import { latch } from '../support/latch.ts';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';
import { policyModel, resultsOf, taskOf } from './support/policy-model.ts';
import { messagesOf } from './support/tree.ts';

const instant = { sleep: async () => undefined, backoff: () => 0 };

let folder: string;
before(async () => {
  folder = await makeTempFolder('subagents-pending-');
});
after(async () => {
  await removeFolder(folder);
});

function text(role: 'user' | 'assistant', body: string): Message {
  return { role, content: [{ type: 'text', text: body }] };
}

/** Write a transcript from bodies (the first is its meta); returns the conversation with seqs. */
async function writeTranscript(
  path: string,
  meta: { agentId: string; agentType: string; parent?: { transcript: string; callId: string } },
  messages: (Message | RecordBody)[],
): Promise<LoopMessage[]> {
  const session = await Session.create(path, {
    agentId: meta.agentId,
    agentType: meta.agentType,
    label: meta.agentId,
    model: 'policy:test',
    ...(meta.parent === undefined ? {} : { parent: meta.parent }),
  });
  const conversation: LoopMessage[] = [];
  for (const item of messages) {
    const body: RecordBody = 'type' in item ? item : { type: 'message', ...item };
    const record = await session.appendDurable(body);
    if (record.type === 'message')
      conversation.push({ role: record.role, content: record.content, seq: record.seq });
  }
  await session.close();
  return conversation;
}

describe('a revived parent’s pending join', () => {
  it('resolves from each child: finished → its answer, revived → when it ends, not revivable → the reason, missing → unknown', async () => {
    const parentPath = join(folder, 'join', 'main.jsonl');
    const ids = ['done', 'revived', 'capped', 'stalled', 'missing'];
    const joinCall = {
      type: 'tool-call' as const,
      callId: 'wait-1',
      toolName: 'task_wait',
      input: { agentIds: ids },
    };
    const parentMessages = await writeTranscript(
      parentPath,
      { agentId: 'main', agentType: 'main' },
      [
        text('user', 'coordinate'),
        { role: 'assistant', content: [joinCall] },
        {
          type: 'tool-dispatched',
          callId: 'wait-1',
          toolName: 'task_wait',
          inputDigest: 'sha256:0',
          idempotency: 'read-only',
          joins: ids,
        },
      ],
    );
    const child = (agentId: string) => ({
      agentId,
      agentType: 'worker',
      parent: { transcript: '../main.jsonl', callId: `spawn-${agentId}` },
    });
    await writeTranscript(childTranscriptPath(parentPath, 'done'), child('done'), [
      text('user', 'a'),
      text('assistant', 'the answer of done'),
    ]);
    await writeTranscript(childTranscriptPath(parentPath, 'capped'), child('capped'), [
      text('user', 'c'),
    ]);
    await writeTranscript(childTranscriptPath(parentPath, 'stalled'), child('stalled'), [
      text('user', 'd'),
    ]);
    const revivedPath = childTranscriptPath(parentPath, 'revived');
    const revivedMessages = await writeTranscript(revivedPath, child('revived'), [
      text('user', 'the revived task'),
    ]);

    const { promise: gate, release } = latch();
    const registry: AgentRegistry = {
      main: {
        description: 'coordinates',
        system: 'main',
        model: policyModel('main', (turns) => ({
          text: JSON.stringify(resultsOf(turns, 'task_wait')),
        })),
      },
      worker: {
        description: 'works',
        system: 'work',
        canSpawn: false,
        model: policyModel(
          'worker',
          (turns) => ({ text: `answer to ${taskOf(turns)}` }),
          () => gate,
        ),
      },
    };
    const composer = new Composer({ registry, loopDefaults: instant });

    // Children first: one taken back under its original id, one past its cap.
    const childSession = await Session.open(revivedPath);
    const childRun = new Loop(await composer.loopOptionsFor(childSession)).run(revivedMessages);
    composer.reviveChild({
      agentId: 'revived',
      agentType: 'worker',
      label: 'revived',
      callId: 'spawn-revived',
      run: childRun,
      sessionPath: revivedPath,
    });
    // A finished child reported as not revivable (it needs no revival) still gives its answer.
    composer.reportUnrevivable({
      sessionPath: childTranscriptPath(parentPath, 'done'),
      reason: 'finished',
      detail: 'it has finished',
    });
    composer.reportUnrevivable({
      sessionPath: childTranscriptPath(parentPath, 'capped'),
      reason: 'revival-cap',
      detail: 'revived 2 times of 2 allowed',
    });

    const parentSession = await Session.open(parentPath);
    const { run } = await composer.resume({ session: parentSession, messages: parentMessages });
    for await (const event of run) {
      // The join is waiting for the revived child, which is still held: now let it end.
      if (event.type === 'join-wait-start') release();
    }
    const result = await run;
    await childRun;
    await childSession.close();
    await composer.idle();

    assert.equal(result.status, 'finished', result.error);
    const [waited] = JSON.parse(result.text) as {
      output: {
        results: {
          agentId: string;
          status: string;
          answer?: string;
          reason?: string;
          detail?: string;
        }[];
      };
    }[];
    const byId = new Map(waited?.output.results.map((item) => [item.agentId, item]));
    assert.deepEqual(byId.get('done'), {
      agentId: 'done',
      status: 'finished',
      answer: 'the answer of done',
    });
    assert.deepEqual(byId.get('revived'), {
      agentId: 'revived',
      status: 'finished',
      answer: 'answer to the revived task',
    });
    assert.equal(byId.get('capped')?.reason, 'revival-cap');
    assert.match(
      byId.get('capped')?.detail ?? '',
      /^child capped could not be revived: revived 2 times/,
    );
    assert.equal(byId.get('stalled')?.reason, 'not-revived');
    assert.match(
      byId.get('stalled')?.detail ?? '',
      /child stalled did not finish and was not revived/,
    );
    assert.equal(byId.get('missing')?.reason, 'missing');
    assert.match(byId.get('missing')?.detail ?? '', /no child of this run has the id missing/);
    const parent = await messagesOf(parentPath);
    const answers = parent
      .flatMap((message) => message.content)
      .filter((part) => part.type === 'tool-result' && part.callId === 'wait-1');
    assert.equal(answers.length, 1, 'the join is answered exactly once');
    assert.deepEqual(
      parent.filter((message) => message.extras?.injected === 'background'),
      [],
      'an awaited child is not delivered too',
    );
  });

  it('tells a revived parent about children whose spawn result the crash lost, and delivers ends it never heard', async () => {
    const parentPath = join(folder, 'adopt', 'main.jsonl');
    const spawn = (callId: string, task: string) => ({
      type: 'tool-call' as const,
      callId,
      toolName: 'spawn_agent',
      input: { agentType: 'worker', task, label: task },
    });
    const idOf = (callId: string) =>
      agentIdForSpawn({ agentType: 'worker', callId, parentAgentId: 'main' });
    const spawnResult = (callId: string, isError = false) => ({
      type: 'tool-result' as const,
      callId,
      toolName: 'spawn_agent',
      output: isError
        ? 'The previous session ended while this tool call was in flight'
        : { agentId: idOf(callId), status: 'running' },
      isError,
    });
    const messages: Message[] = [
      text('user', 'go'),
      {
        role: 'assistant',
        content: ['lost', 'finished', 'heard', 'never', 'joined', 'lost-ended'].map((name) =>
          spawn(name, name),
        ),
      },
      {
        role: 'tool',
        content: [
          spawnResult('lost', true),
          spawnResult('finished'),
          spawnResult('heard'),
          spawnResult('never', true),
          spawnResult('joined'),
          spawnResult('lost-ended', true),
        ],
      },
      {
        role: 'assistant',
        content: [
          {
            type: 'tool-call',
            callId: 'w1',
            toolName: 'task_wait',
            input: { agentIds: [idOf('heard')] },
          },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            callId: 'w1',
            toolName: 'task_wait',
            output: { results: [{ agentId: idOf('heard'), status: 'finished', answer: 'x' }] },
            isError: false,
          },
        ],
      },
    ];
    const family = new Family(parentPath);
    let finishLost: () => void = () => undefined;
    family.track(
      {
        agentId: idOf('lost'),
        agentType: 'worker',
        label: 'lost',
        callId: 'lost',
        sessionPath: childTranscriptPath(parentPath, idOf('lost')),
      },
      new Promise((resolve) => {
        finishLost = () => resolve({ status: 'finished', answer: 'lost answer' });
      }),
    );
    const outcomes = new Map([
      [idOf('finished'), { status: 'finished' as const, answer: 'finished answer' }],
      [idOf('lost-ended'), { status: 'failed' as const, reason: 'revival-cap', detail: 'capped' }],
    ]);
    const asked: string[] = [];
    await adoptChildren({
      family,
      parentAgentId: 'main',
      messages,
      pendingJoins: [idOf('joined')],
      childOf: (agentId) => childTranscriptPath(parentPath, agentId),
      ids: agentIdForSpawn,
      outcomeOf: async (agentId) => {
        asked.push(agentId);
        return (
          outcomes.get(agentId) ?? {
            status: 'failed',
            reason: 'missing',
            detail: 'no such child',
          }
        );
      },
    });
    const delivered = family.takeDeliveries();
    const texts = delivered.map((message) =>
      message.content[0]?.type === 'text' ? message.content[0].text : '',
    );
    assert.equal(delivered.length, 3, texts.join('\n'));
    assert.ok(texts.every((line) => line.startsWith(BACKGROUND_FRAME)));
    assert.match(
      texts[0] ?? '',
      new RegExp(`call lost did start a child before the interruption: agent ${idOf('lost')} `),
    );
    assert.match(texts[1] ?? '', /has finished\. Its final answer:\n\nfinished answer$/);
    assert.match(texts[2] ?? '', /ended without a final answer \(revival-cap\): capped/);
    assert.deepEqual(
      delivered.map((message) => message.extras?.injected),
      ['background', 'background', 'background'],
    );
    assert.deepEqual(asked.sort(), [idOf('finished'), idOf('lost-ended'), idOf('never')].sort());
    // The child whose id was lost still delivers its end when it comes.
    finishLost();
    await new Promise((resolve) => setImmediate(resolve));
    const later = family.takeDeliveries();
    assert.equal(later.length, 1);
    assert.equal(later[0]?.extras?.agentId, idOf('lost'));
  });
});

describe('outcomeFromTranscript', () => {
  it('never throws, whatever the file holds', async () => {
    const seed = Number(process.env.SEED ?? Date.now());
    console.log('seed', seed);
    let state = seed >>> 0;
    const random = () => {
      state = (state * 1664525 + 1013904223) >>> 0;
      return state / 2 ** 32;
    };
    const path = join(folder, 'fuzz.jsonl');
    const samples = [
      '',
      '\n',
      '{}',
      '{"v":1,"seq":0,"type":"message"}\n',
      '\u0000\u0000',
      'not json at all\n{"v":99}\n',
    ];
    for (let index = 0; index < 200; index += 1) {
      const bytes =
        index < samples.length
          ? Buffer.from(samples[index] ?? '')
          : Buffer.from(
              Array.from({ length: Math.floor(random() * 300) }, () => Math.floor(random() * 256)),
            );
      await writeFile(path, bytes);
      const outcome = await outcomeFromTranscript(filePlaces({}), 'fuzz', path);
      assert.ok(outcome.status === 'finished' || outcome.status === 'failed');
    }
    const missing = await outcomeFromTranscript(
      filePlaces({}),
      'gone',
      join(folder, 'no', 'such.jsonl'),
    );
    assert.equal(missing.status === 'failed' && missing.reason, 'missing');
  });
});
