import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { Loop } from '../../src/loop/loop.ts';
import type { ToolDefinition } from '../../src/loop/types.ts';
import { Revival } from '../../src/revival/index.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { readRecords } from '../../src/transcript/read-records.ts';
import type { RecordBody, TranscriptRecord } from '../../src/transcript/records.ts';
import { Session } from '../../src/transcript/session.ts';
import { TranscriptError } from '../../src/transcript/transcript-error.ts';
import { ScriptedModel } from '../../src/testing/index.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';
import { randomBytesFrom, seededRandom, testSeed } from '../support/seeded-random.ts';
import { assistant, call, dispatch, META, user, writeTranscript } from './support/transcripts.ts';

/*
 * The invariant of "damage never replays": a transcript whose last line is the durable
 * dispatch of a side-effect tool — the tool ran, or may have — is mutated in that line in any
 * way (a flipped bit, the newline included; a cut; overwritten, zeroed, inserted or deleted
 * bytes; junk after it; the line replaced), then handed to everything that could run the
 * call again: revive (plain and with salvage) and the Loop after it, a reopen after that, and
 * a Loop on a salvaged session without revive. The tool's executions are counted: never one.
 * Deleting the whole line (with its newline) is the one mutation left out: it leaves a clean
 * transcript that never held the dispatch, which no reader can tell from one.
 */

const PATH = '/runs/run.jsonl';
const ROUNDS = 400;

/** The conversation: the side-effect call `pay` was dispatched (and ran); `later` never was. */
const BODIES: RecordBody[] = [
  user('Pay the invoice, then log it'),
  assistant('', [call('pay', 'charge', {}), call('later', 'charge', {})]),
  dispatch('pay', 'charge'),
];

function chargeTool(executions: string[]): ToolDefinition<unknown> {
  const tool: ToolDefinition<Record<string, never>> = {
    name: 'charge',
    description: 'Charge a card (a side effect)',
    inputSchema: z.object({}),
    idempotency: 'side-effect',
    async execute(_input, { callId }) {
      executions.push(callId);
      return 'charged';
    },
  };
  return tool as ToolDefinition<unknown>;
}

type Mutation = (line: Buffer, random: () => number) => Buffer;

const pick = (random: () => number, below: number) => Math.floor(random() * below);

const MUTATIONS: Record<string, Mutation> = {
  'flip a bit': (line, random) => {
    const copy = Buffer.from(line);
    const at = pick(random, copy.length);
    copy[at] = (copy[at] ?? 0) ^ (1 << pick(random, 8));
    return copy;
  },
  'cut it short': (line, random) => line.subarray(0, 1 + pick(random, line.length - 1)),
  'overwrite bytes': (line, random) => {
    const copy = Buffer.from(line);
    const count = 1 + pick(random, 4);
    for (let index = 0; index < count; index++) copy[pick(random, copy.length)] = pick(random, 256);
    return copy;
  },
  'zero a range': (line, random) => {
    const copy = Buffer.from(line);
    const start = pick(random, copy.length);
    copy.fill(0, start, Math.min(copy.length, start + 1 + pick(random, 600)));
    return copy;
  },
  'insert bytes': (line, random) => {
    const at = pick(random, line.length + 1);
    const bytes = randomBytesFrom(random, 1 + pick(random, 20));
    return Buffer.concat([line.subarray(0, at), bytes, line.subarray(at)]);
  },
  'delete a range': (line, random) => {
    const start = pick(random, line.length);
    const end = Math.min(line.length, start + 1 + pick(random, 40));
    return Buffer.concat([line.subarray(0, start), line.subarray(end)]);
  },
  'junk after it': (line, random) =>
    Buffer.concat([line, randomBytesFrom(random, 1 + pick(random, 200))]),
  'replace it': (_line, random) => {
    const junk = randomBytesFrom(random, 1 + pick(random, 300));
    return random() < 0.5 ? Buffer.concat([junk, Buffer.from('\n')]) : junk;
  },
};

async function originalBytes(): Promise<{ bytes: Buffer; lastStart: number }> {
  const fileSystem = new MemoryFileSystem();
  await writeTranscript(PATH, BODIES, { fileSystem });
  const bytes = fileSystem.readFile(PATH);
  const lastStart = bytes.lastIndexOf(0x0a, bytes.length - 2) + 1;
  assert.match(bytes.subarray(lastStart).toString(), /"type":"tool-dispatched".*"callId":"pay"/);
  return { bytes, lastStart };
}

async function records(fileSystem: MemoryFileSystem): Promise<TranscriptRecord[]> {
  const list: TranscriptRecord[] = [];
  for await (const record of readRecords(PATH, { fileSystem })) {
    list.push(record as TranscriptRecord);
  }
  return list;
}

/** Revive (with or without salvage), run the revived run, then reopen and run it again. */
async function reviveAndRun(
  fileSystem: MemoryFileSystem,
  salvage: boolean,
  executions: string[],
): Promise<string> {
  const revived = await Revival.revive({
    path: PATH,
    agentId: META.agentId,
    maxRevivals: 3,
    fileSystem,
    ...(salvage ? { salvageDamagedTail: true } : {}),
  });
  if (!revived.ok) return `refused (${revived.reason})`;
  const tools = [chargeTool(executions)];
  try {
    const model = new ScriptedModel([{ text: 'Done.' }]);
    await new Loop({ backends: [model.model], writer: revived.session, tools }).run(
      revived.messages,
    );
  } finally {
    await revived.session.close();
  }
  // A later reopen still knows: nothing left to run.
  const session = await Session.open(PATH, { fileSystem });
  try {
    const model = new ScriptedModel([{ text: 'Still done.' }]);
    await new Loop({ backends: [model.model], writer: session, tools }).run(
      conversationView(await records(fileSystem)),
    );
  } finally {
    await session.close();
  }
  return 'revived';
}

/** A library user's path: open with salvage and run the Loop, without revive. */
async function salvageAndRun(fileSystem: MemoryFileSystem, executions: string[]): Promise<string> {
  let session: Session;
  try {
    session = await Session.open(PATH, { fileSystem, salvageDamagedTail: true });
  } catch (error) {
    // Only one refusal is expected: damage that is not at the end (unreadable). Any other
    // error is a defect, not an outcome.
    if (TranscriptError.isInstance(error) && error.code === 'unreadable')
      return 'refused: unreadable';
    throw error;
  }
  try {
    const model = new ScriptedModel([{ text: 'Done.' }]);
    const view = conversationView(await records(fileSystem));
    const loop = new Loop({
      backends: [model.model],
      writer: session,
      tools: [chargeTool(executions)],
    });
    const result = await loop.run(view);
    // The salvage marked the turn's calls dispatched; a Loop never runs such calls: it refuses
    // the transcript until a revival answers them. That refusal is the outcome this path owes.
    if (
      result.status === 'failed' &&
      /was dispatched and never settled: revive the transcript before running it/.test(
        result.error ?? '',
      )
    ) {
      return 'loop refused: calls in flight';
    }
    return `loop ${result.status}: ${result.error ?? result.text}`;
  } finally {
    await session.close();
  }
}

test('a durable side-effect dispatch as the last line, mutated in any way, never runs again', async () => {
  const seed = testSeed('damage-never-replays');
  const random = seededRandom(seed);
  const { bytes, lastStart } = await originalBytes();
  const prefix = bytes.subarray(0, lastStart);
  const line = bytes.subarray(lastStart);
  const names = Object.keys(MUTATIONS);
  const outcomes = new Map<string, number>();
  let tried = 0;
  for (let round = 0; tried < ROUNDS; round++) {
    const name = names[round % names.length] as string;
    const mutated = (MUTATIONS[name] as Mutation)(line, random);
    // Unchanged, or the whole line deleted: nothing a reader could see.
    if (mutated.equals(line) || mutated.length === 0) continue;
    tried += 1;
    const label = `seed ${seed}, round ${round} (${name}): ${JSON.stringify(mutated.toString('latin1'))}`;
    const file = Buffer.concat([prefix, mutated]);
    for (const path of ['revive', 'revive --salvage', 'open with salvage, then Loop']) {
      const fileSystem = new MemoryFileSystem();
      fileSystem.writeFile(PATH, file);
      const executions: string[] = [];
      const outcome =
        path === 'open with salvage, then Loop'
          ? await salvageAndRun(fileSystem, executions)
          : await reviveAndRun(fileSystem, path === 'revive --salvage', executions);
      assert.ok(!executions.includes('pay'), `${label}: ${path} ran the dispatched call again`);
      // The call of the same turn that was never dispatched is not run either: the damaged
      // bytes could have been its dispatch.
      assert.deepEqual(executions, [], `${label}: ${path} ran ${executions.join(', ')}`);
      const key = `${path}: ${outcome}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    }
  }
  console.log(`seed ${seed}: ${tried} mutations`, Object.fromEntries(outcomes));
  // The test means something only if the system really revived and ran mutated transcripts.
  assert.ok((outcomes.get('revive --salvage: revived') ?? 0) > ROUNDS / 2, 'salvage revived');
  assert.ok((outcomes.get('revive: revived') ?? 0) > 0, 'torn tails revived');
  // The third path really opened, salvaged and ran a Loop, which refused the calls in flight;
  // nothing else happened on it.
  const salvaged = [...outcomes].filter(([key]) =>
    key.startsWith('open with salvage, then Loop: '),
  );
  assert.ok(
    (outcomes.get('open with salvage, then Loop: loop refused: calls in flight') ?? 0) > ROUNDS / 2,
  );
  for (const [key] of salvaged) {
    assert.match(key, /: (loop refused: calls in flight|refused: unreadable)$/, key);
  }
});

test('the unmutated transcript: the dispatched call is answered as interrupted, the other one runs', async () => {
  // The counter is live: the call that never started does run (it is not a retry).
  const { bytes } = await originalBytes();
  const fileSystem = new MemoryFileSystem();
  fileSystem.writeFile(PATH, bytes);
  const executions: string[] = [];
  assert.equal(await reviveAndRun(fileSystem, false, executions), 'revived');
  assert.deepEqual(executions, ['later']);
});
