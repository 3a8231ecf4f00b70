import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeLine } from '../../src/transcript/line-codec.ts';
import type { RecordBody } from '../../src/transcript/records.ts';
import { Session } from '../../src/transcript/session.ts';
import {
  buildTranscript,
  metaBody,
  sessionMeta,
  steppingClock,
  textMessage,
} from './transcripts.ts';

/*
 * Made test/fixtures/v1/ once. The fixtures are frozen: tests only read them (and check their
 * hashes), and this script is kept only as a record of how they were made. It refuses to run
 * over existing fixtures; a format change gets a new folder (v2/), never new v1 bytes.
 *
 *   node test/support/generate-v1-fixtures.ts <empty-folder>
 */

const target = process.argv[2];
if (target === undefined) throw new Error('usage: generate-v1-fixtures.ts <empty-folder>');
if (existsSync(join(target, 'normal.jsonl'))) throw new Error(`${target} already has fixtures`);
mkdirSync(target, { recursive: true });

const digest = `sha256:${'ab'.repeat(32)}`;

/** normal.jsonl: every record type, a regular checkpoint, a repaired torn tail, an unknown type. */
async function normal(): Promise<void> {
  const path = join(target as string, 'normal.jsonl');
  const clock = steppingClock(Date.UTC(2026, 0, 1, 9));
  const options = { clock, checkpointBytes: 1800 };
  const session = await Session.create(path, sessionMeta('main'), options);
  const bodies: RecordBody[] = [
    textMessage('system', 'You are a careful assistant.'),
    textMessage('user', 'Read notes.txt and tell me how many lines it has. Ünïcödé: 日本語.'),
    {
      type: 'message',
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'I should read the file.', provider: { signature: 'c2ln' } },
        { type: 'text', text: 'Reading it.' },
        {
          type: 'tool-call',
          callId: 'call-1',
          toolName: 'read_file',
          input: { path: 'notes.txt' },
        },
        { type: 'tool-call', callId: 'call-2', toolName: 'spawn_agent', input: { task: 'count' } },
      ],
    },
    {
      type: 'tool-dispatched',
      callId: 'call-1',
      toolName: 'read_file',
      inputDigest: digest,
      idempotency: 'read-only',
    },
    {
      type: 'message',
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          callId: 'call-1',
          toolName: 'read_file',
          output: { lines: 3 },
          isError: false,
        },
      ],
    },
    { type: 'tool-settled', callId: 'call-1', status: 'completed' },
    {
      type: 'tool-dispatched',
      callId: 'call-2',
      toolName: 'spawn_agent',
      inputDigest: digest,
      idempotency: 'side-effect',
    },
    {
      type: 'message',
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          callId: 'call-2',
          toolName: 'spawn_agent',
          output: 'no such agent type',
          isError: true,
        },
      ],
    },
    { type: 'tool-settled', callId: 'call-2', status: 'failed', reason: 'no such agent type' },
    {
      type: 'message',
      role: 'assistant',
      content: [
        {
          type: 'tool-call',
          callId: 'call-3',
          toolName: 'task_wait',
          input: { agents: ['helper-1'] },
        },
      ],
    },
    {
      type: 'tool-dispatched',
      callId: 'call-3',
      toolName: 'task_wait',
      inputDigest: digest,
      idempotency: 'read-only',
      joins: ['helper-1'],
    },
  ];
  for (const body of bodies) await session.append(body);
  await session.close();
  // The process died in the middle of writing the next line: a torn tail.
  appendFileSync(path, '{"v":1,"seq":99,"type":"message","at":"2026-01-01T09:0');
  const revived = await Session.open(path, options);
  const after: RecordBody[] = [
    {
      type: 'message',
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          callId: 'call-3',
          toolName: 'task_wait',
          output: 'interrupted',
          isError: true,
        },
      ],
      extras: { injected: 'revival' },
    },
    { type: 'tool-settled', callId: 'call-3', status: 'outcome-unknown', reason: 'interrupted' },
    {
      type: 'run-revived',
      ordinal: 1,
      maxRevivals: 3,
      afterSeq: 13,
      interrupted: ['call-3'],
      completedUnpersisted: [],
      orphaned: [],
    },
    {
      type: 'message',
      role: 'user',
      content: [{ type: 'text', text: 'This run was interrupted and resumed.' }],
      extras: { injected: 'revival', note: 'any JSON' },
    },
    {
      type: 'compaction',
      fromSeq: 2,
      toSeq: 7,
      summary: 'The user asked for a line count; notes.txt has 3 lines.',
    },
    {
      type: 'x-future-note',
      text: 'a record type this version does not know',
    } as unknown as RecordBody,
    textMessage('assistant', 'notes.txt has 3 lines.'),
  ];
  for (const body of after) await revived.append(body);
  await revived.close();
}

/** A transcript of `count` records, for the damaged fixtures. */
function plain(count: number) {
  return buildTranscript(
    [
      metaBody(),
      textMessage('user', 'hello'),
      textMessage('assistant', 'hi'),
      textMessage('user', 'how are you?'),
      textMessage('assistant', 'well, thank you'),
    ].slice(0, count),
    { clock: steppingClock(Date.UTC(2026, 0, 2)) },
  );
}

function write(name: string, bytes: Buffer | string): void {
  writeFileSync(join(target as string, name), bytes, { mode: 0o600 });
}

await normal();

const torn = plain(4);
write(
  'torn-tail.jsonl',
  Buffer.concat([torn.bytes, plain(5).lines[4]?.subarray(0, 40) ?? Buffer.alloc(0)]),
);

const damaged = plain(5);
const middle = Buffer.from(damaged.bytes);
middle[(damaged.offsets[2] ?? 0) + 30] = 0x21; // one byte of line 3 changed
write('damaged-mid-file.jsonl', middle);

const future = plain(3);
const newer = encodeLine(
  { v: 2, seq: 3, at: '2031-01-01T00:00:00.000Z' },
  textMessage('user', 'from the future'),
);
write('future-version.jsonl', Buffer.concat([future.bytes, newer.bytes]));

write(
  'not-a-transcript.jsonl',
  '{"level":"info","msg":"server started","port":8080}\n{"level":"warn","msg":"slow"}\n',
);

const invalid = plain(2);
const bad = encodeLine({ v: 1, seq: 2, at: '2026-01-02T00:00:02.000Z' }, {
  type: 'message',
  role: 'robot',
  content: [{ type: 'text', text: 'beep' }],
} as unknown as RecordBody);
write(
  'bad-field.jsonl',
  Buffer.concat([invalid.bytes, bad.bytes, plain(4).lines[3] ?? Buffer.alloc(0)]),
);

// A parent and its child, in the layout a host writes: X.jsonl and X.agents/<agent-id>.jsonl.
const parent = buildTranscript(
  [
    metaBody('main'),
    {
      type: 'message',
      role: 'assistant',
      content: [
        {
          type: 'tool-call',
          callId: 'call-9',
          toolName: 'spawn_agent',
          input: { agentType: 'researcher', task: 'look' },
        },
      ],
    },
    {
      type: 'tool-dispatched',
      callId: 'call-9',
      toolName: 'spawn_agent',
      inputDigest: digest,
      idempotency: 'side-effect',
    },
  ],
  { clock: steppingClock(Date.UTC(2026, 0, 3)) },
);
write('parent.jsonl', parent.bytes);
mkdirSync(join(target, 'parent.agents'), { mode: 0o700 });
const child = buildTranscript(
  [
    {
      type: 'session-meta',
      agentId: 'researcher-1',
      agentType: 'researcher',
      label: 'look',
      model: 'test:model',
      parent: { transcript: '../parent.jsonl', callId: 'call-9' },
    },
    textMessage('user', 'look'),
  ],
  { clock: steppingClock(Date.UTC(2026, 0, 3, 0, 1)) },
);
write(join('parent.agents', 'researcher-1.jsonl'), child.bytes);

console.log(readFileSync(join(target, 'normal.jsonl'), 'utf8'));
