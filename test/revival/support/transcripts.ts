import type { FileSystem } from '../../../src/transcript/file-system.ts';
import { peek } from '../../../src/transcript/peek.ts';
import type {
  ForeignRecord,
  JsonValue,
  MessageBody,
  RecordBody,
  ToolCallPart,
  ToolDispatchedBody,
  ToolSettledBody,
  TranscriptRecord,
} from '../../../src/transcript/records.ts';
import { Session, type SessionMeta } from '../../../src/transcript/session.ts';
import { abandonSession } from '../../support/abandon-session.ts';

/*
 * Builders for the transcripts revival is tested on: the records a Loop would have written up
 * to the moment its process died.
 */

export const META: SessionMeta = {
  agentId: 'researcher-1',
  agentType: 'researcher',
  label: 'Researcher',
  model: 'test:model',
};

/** A clock that starts at a fixed instant and moves one millisecond per reading. */
export function fixedClock(start = Date.parse('2026-01-01T00:00:00.000Z')): () => Date {
  let now = start;
  return () => new Date(now++);
}

export function user(text: string): MessageBody {
  return { type: 'message', role: 'user', content: [{ type: 'text', text }] };
}

export function call(callId: string, toolName = 'write_file', input: JsonValue = {}): ToolCallPart {
  return { type: 'tool-call', callId, toolName, input };
}

export function assistant(text: string, calls: ToolCallPart[] = []): MessageBody {
  return {
    type: 'message',
    role: 'assistant',
    content: [...(text === '' ? [] : [{ type: 'text' as const, text }]), ...calls],
  };
}

export function result(
  callId: string,
  toolName = 'write_file',
  output: JsonValue = 'ok',
): MessageBody {
  return {
    type: 'message',
    role: 'tool',
    content: [{ type: 'tool-result', callId, toolName, output, isError: false }],
  };
}

export function dispatch(
  callId: string,
  toolName = 'write_file',
  joins?: string[],
): ToolDispatchedBody {
  const body: ToolDispatchedBody = {
    type: 'tool-dispatched',
    callId,
    toolName,
    inputDigest: `sha256:${'0'.repeat(64)}`,
    idempotency: joins === undefined ? 'side-effect' : 'read-only',
  };
  if (joins !== undefined) body.joins = joins;
  return body;
}

export function settle(
  callId: string,
  status: ToolSettledBody['status'] = 'completed',
): ToolSettledBody {
  return { type: 'tool-settled', callId, status };
}

/**
 * Write a transcript as a host and a Loop would have before its process died: its
 * session-meta, then `bodies`, and no closing checkpoint.
 */
export async function writeTranscript(
  path: string,
  bodies: RecordBody[],
  options: { fileSystem?: FileSystem; checkpointBytes?: number; meta?: SessionMeta } = {},
): Promise<void> {
  const sessionOptions: Parameters<typeof Session.create>[2] = {
    durability: 'flush',
    clock: fixedClock(),
  };
  if (options.fileSystem !== undefined) sessionOptions.fileSystem = options.fileSystem;
  if (options.checkpointBytes !== undefined)
    sessionOptions.checkpointBytes = options.checkpointBytes;
  const session = await Session.create(path, options.meta ?? META, sessionOptions);
  for (const body of bodies) await session.append(body);
  // The run died after its last record: no closing checkpoint.
  await abandonSession(session, options.fileSystem);
}

/** The records of a transcript; fails the test when it cannot be read. */
export async function recordsOf(
  path: string,
  fileSystem?: FileSystem,
): Promise<(TranscriptRecord | ForeignRecord)[]> {
  const read = await peek(path, fileSystem === undefined ? {} : { fileSystem });
  if (!read.ok) throw new Error(`${path}: ${read.detail}`);
  return read.records;
}

/** Records as compared across runs: no `at`, no checkpoints, no repair note, no crc. */
export function comparable(records: readonly (TranscriptRecord | ForeignRecord)[]): unknown[] {
  return records
    .filter((record) => record.type !== 'checkpoint')
    .map((record) => {
      const { at: _at, tailRepair: _repair, seq: _seq, ...rest } = record as TranscriptRecord;
      return rest;
    });
}

/** The records of one type. */
export function ofType<T extends TranscriptRecord['type']>(
  records: readonly (TranscriptRecord | ForeignRecord)[],
  type: T,
): Extract<TranscriptRecord, { type: T }>[] {
  return records.filter((record) => record.type === type) as Extract<
    TranscriptRecord,
    { type: T }
  >[];
}

/** A run that died with one side-effect call, c1, dispatched and never answered. */
export function inFlightCall(): RecordBody[] {
  return [user('Write a.txt'), assistant('', [call('c1')]), dispatch('c1')];
}

/**
 * A run that died in a parallel batch: `done` completed and settled, `unpersisted` answered but
 * never settled, `inFlight` dispatched with no answer, `join` a task_wait still waiting, and
 * `later` never dispatched.
 */
export function parallelBatch(): RecordBody[] {
  return [
    user('Update the three files and wait for the child.'),
    assistant('On it.', [
      call('done'),
      call('unpersisted'),
      call('inFlight'),
      call('join', 'task_wait', { agentIds: ['child-1'] }),
      call('later', 'read_file'),
    ]),
    dispatch('done'),
    dispatch('unpersisted'),
    dispatch('inFlight'),
    dispatch('join', 'task_wait', ['child-1']),
    result('done', 'write_file', 'wrote a.txt'),
    settle('done'),
    result('unpersisted', 'write_file', 'wrote b.txt'),
  ];
}
