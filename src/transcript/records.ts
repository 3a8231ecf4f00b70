/**
 * The record types of transcript format v1: what one line of a transcript holds.
 *
 * These are plain JSON objects tagged by `type`. The on-disk shape is ours and versioned
 * (see docs/transcript-format.md); it is converted to a model library's message type only at
 * the model boundary, so a transcript written today still reads after a dependency upgrade.
 *
 * @module
 */

/**
 * The newest format version this library reads and writes. Readers refuse records with a larger
 * `v`. A record is written with the lowest version that holds it ({@link recordVersion}): 2 only
 * for a record carrying a member version 1 lacks (an idempotency key, a reconcile's answer), so
 * a reader of version 1 refuses exactly the transcripts it would misread.
 *
 * @example
 * if (records.some((record) => record.v > FORMAT_VERSION)) throw new Error('written by a newer llm-agent');
 */
export const FORMAT_VERSION = 2;

/**
 * A JSON value, as it is stored on disk: what a tool's input and output must be so that a
 * transcript replays them exactly.
 *
 * @example
 * const input: JsonValue = { path: 'notes.txt', lines: [1, 2], recursive: false };
 */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | JsonValue[]
  | { [key: string]: JsonValue };

/**
 * A JSON object.
 *
 * @example
 * const provider: JsonObject = { signature: 'c2ln' };
 */
export type JsonObject = { [key: string]: JsonValue };

/**
 * Who speaks a message.
 *
 * @example
 * const role: Role = 'assistant';
 */
export type Role = 'system' | 'user' | 'assistant' | 'tool';

/**
 * Plain text.
 *
 * @example
 * const part: TextPart = { type: 'text', text: 'Reading it.' };
 */
export interface TextPart {
  type: 'text';
  text: string;
  /** Provider-specific data to hand back unchanged (cache hints, signatures). */
  provider?: JsonObject;
}

/**
 * Model reasoning, kept so that providers that require it replayed get it back unmodified.
 *
 * @example
 * const part: ReasoningPart = {
 *   type: 'reasoning', text: 'I should read the file.', provider: { signature: 'c2ln' },
 * };
 */
export interface ReasoningPart {
  type: 'reasoning';
  text: string;
  provider?: JsonObject;
}

/**
 * A tool call requested by the assistant.
 *
 * @example
 * const part: ToolCallPart = {
 *   type: 'tool-call', callId: 'call-1', toolName: 'read_file', input: { path: 'notes.txt' },
 * };
 */
export interface ToolCallPart {
  type: 'tool-call';
  callId: string;
  toolName: string;
  input: JsonValue;
  provider?: JsonObject;
}

/**
 * The answer to one tool call. `output` is what the model reads.
 *
 * @example
 * const part: ToolResultPart = {
 *   type: 'tool-result', callId: 'call-1', toolName: 'read_file', output: { lines: 3 },
 *   isError: false,
 * };
 */
export interface ToolResultPart {
  type: 'tool-result';
  callId: string;
  toolName: string;
  output: JsonValue;
  isError: boolean;
  provider?: JsonObject;
}

/**
 * One piece of a message's content.
 *
 * @example
 * const calls = messages.flatMap((message) => message.content).filter((part: ContentPart) => part.type === 'tool-call');
 */
export type ContentPart = TextPart | ReasoningPart | ToolCallPart | ToolResultPart;

/**
 * Who wrote a turn that no person wrote: `revival` for the resume notice and the interrupted
 * results revival answers with, `background` for a child's result delivered while nobody waited,
 * `compaction` for a compaction summary in a conversation view.
 *
 * @example
 * const injected: Injected = 'background'; // a child's result that arrived while nobody waited
 */
export type Injected = 'revival' | 'background' | 'compaction';

/**
 * What a tool's reconcile established about a call left in flight: it `completed` (its output
 * is known), it `did-not-happen`, or nobody can say (`unknown`: the tool said so, threw, timed
 * out or answered something that is not an answer).
 *
 * @example
 * const answer: ReconcileVerdict = 'did-not-happen';
 */
export type ReconcileVerdict = 'completed' | 'did-not-happen' | 'unknown';

/**
 * Every {@link ReconcileVerdict}, as a reader accepts them.
 *
 * @example
 * RECONCILE_VERDICTS.includes('unknown'); // true
 */
export const RECONCILE_VERDICTS: readonly ReconcileVerdict[] = [
  'completed',
  'did-not-happen',
  'unknown',
];

/**
 * What a revival recorded about asking a tool's reconcile (format 2): on the revival's answer to
 * the call (`extras.reconcile`) and in its `run-revived` envelope.
 *
 * @example
 * const asked: ReconcileRecord = { answer: 'unknown', detail: 'timed out after 10000 ms' };
 */
export type ReconcileRecord = {
  answer: ReconcileVerdict;
  /** Why it is unknown (a throw, a timeout, an unparseable answer, the tool's own words). */
  detail?: string;
};

/**
 * Free-form data carried with a message; `injected` marks turns the system wrote, `reconcile`
 * (format 2) what a tool's reconcile answered about the call a revival's answer settles.
 *
 * @example
 * const extras: MessageExtras = { injected: 'background', childId: 'worker-call_s1' };
 */
export interface MessageExtras {
  injected?: Injected;
  reconcile?: ReconcileRecord;
  [key: string]: JsonValue | undefined;
}

/**
 * One conversation turn, as stored. A `tool` message holds only tool-result parts; an
 * `assistant` message holds text, reasoning and tool-call parts; `system` and `user` hold text.
 *
 * @example
 * const turn: Message = { role: 'user', content: [{ type: 'text', text: 'Hello' }] };
 */
export interface Message {
  role: Role;
  content: ContentPart[];
  extras?: MessageExtras;
}

/**
 * What a tool declares about repeating it. Recorded, never used to replay a call.
 *
 * @example
 * const idempotency: Idempotency = 'side-effect'; // write_file: a second run writes again
 */
export type Idempotency = 'read-only' | 'idempotent' | 'side-effect';

/**
 * Every {@link Idempotency}, as a reader accepts them.
 *
 * @example
 * if (!IDEMPOTENCIES.includes(tool.idempotency)) throw new TypeError('unknown idempotency');
 */
export const IDEMPOTENCIES: readonly Idempotency[] = ['read-only', 'idempotent', 'side-effect'];

/**
 * How a settled tool call ended: `outcome-unknown` when the process died while the tool ran
 * and nobody can say whether it acted.
 *
 * @example
 * const status: SettleStatus = 'outcome-unknown';
 */
export type SettleStatus = 'completed' | 'failed' | 'outcome-unknown';

/**
 * The parent of a child run, as its `session-meta` names it.
 *
 * @example
 * const parent: ParentLink = { transcript: '../main.jsonl', callId: 'call_s1' };
 */
export interface ParentLink {
  /** The parent transcript, relative to the child transcript's folder. */
  transcript: string;
  /** The id of the parent's `spawn_agent` call that started this child. */
  callId: string;
}

/**
 * Fields every record carries, written by the session, never by its caller.
 *
 * @example
 * const header: RecordHeader = { v: 1, seq: 6, at: '2026-01-01T09:00:07.000Z' };
 */
export interface RecordHeader {
  v: number;
  seq: number;
  at: string;
  /** Present on the first record written after a torn tail was repaired. */
  tailRepair?: TailRepair;
}

/**
 * What a torn-tail repair removed and where it kept the bytes.
 *
 * @example
 * const repair: TailRepair = {
 *   validBytes: 3439, tornBytes: 54, sidecar: 'normal.jsonl.torn-3439',
 * };
 */
export interface TailRepair {
  /** The byte length the file was truncated to. */
  validBytes: number;
  /** How many bytes were removed. */
  tornBytes: number;
  /** The sidecar file (a name in the transcript's folder) that holds the removed bytes. */
  sidecar: string;
  /**
   * The removed bytes may have been (part of) a durable record — a dispatch, as far as anyone
   * can tell: every call of the last assistant turn without a settle counts as dispatched and
   * is answered as interrupted, never run (docs/transcript-format.md §6). Every repair this
   * version makes sets it; a repair written by an earlier version lacks it.
   */
  possiblyDispatched?: true;
  /** For a salvage of damage: how many newline-terminated lines the removed bytes held. */
  wholeLines?: number;
}

/**
 * First record of a transcript written by a host: who this run is.
 *
 * @example
 * const meta: SessionMetaBody = {
 *   type: 'session-meta', agentId: 'researcher-1', agentType: 'researcher', label: 'look',
 *   model: 'openai:gpt-5', parent: { transcript: '../main.jsonl', callId: 'call-9' },
 * };
 */
export interface SessionMetaBody {
  type: 'session-meta';
  agentId: string;
  agentType: string;
  label: string;
  /** The model spec the run was started with, such as `openai:gpt-5` (informational). */
  model: string;
  parent?: ParentLink;
}

/**
 * One conversation turn.
 *
 * @example
 * await session.append({ type: 'message', role: 'user', content: [{ type: 'text', text: 'Hi' }] });
 */
export interface MessageBody extends Message {
  type: 'message';
}

/**
 * Written and made durable before a tool starts, so that a run killed while the tool runs
 * is known to have started it.
 *
 * @example
 * const dispatch: ToolDispatchedBody = {
 *   type: 'tool-dispatched', callId: 'call-1', toolName: 'read_file',
 *   inputDigest: `sha256:${'0'.repeat(64)}`, idempotency: 'read-only',
 * };
 */
export interface ToolDispatchedBody {
  type: 'tool-dispatched';
  callId: string;
  toolName: string;
  /** `sha256:` + hex of the canonical JSON of the input. */
  inputDigest: string;
  idempotency: Idempotency;
  /**
   * `false` when the tool declared no idempotency and `idempotency` is the `side-effect` a
   * reader must assume (an AI SDK `tool()` not named in the run's idempotency map). Absent when
   * the tool declared one, and in transcripts written before it existed. A v1 member: a reader
   * that ignores it reads `side-effect`, which is what it means.
   */
  idempotencyDeclared?: false;
  /**
   * Format 2: the key the tool was given with the call (stable across revivals and workers), so
   * that the outside world can tell a repeat of this call from a new one, and a reconcile can
   * ask about it. See {@link idempotencyKeyOf}.
   */
  idempotencyKey?: string;
  /** For a join (`task_wait`): the agent ids it waits for. */
  joins?: string[];
}

/**
 * Closes one dispatch.
 *
 * @example
 * const settled: ToolSettledBody = {
 *   type: 'tool-settled', callId: 'call-3', status: 'outcome-unknown', reason: 'interrupted',
 * };
 */
export interface ToolSettledBody {
  type: 'tool-settled';
  callId: string;
  status: SettleStatus;
  /** `interrupted`, `completed-unpersisted`, `orphaned`, or a tool's own reason. */
  reason?: string;
}

/**
 * Replaces records `fromSeq..toSeq` (inclusive) in the conversation view by a summary.
 *
 * @example
 * const compaction: CompactionBody = {
 *   type: 'compaction', fromSeq: 2, toSeq: 7, summary: 'notes.txt has 3 lines.',
 * };
 */
export interface CompactionBody {
  type: 'compaction';
  fromSeq: number;
  toSeq: number;
  summary: string;
}

/**
 * One per revival: what the revival cap counts.
 *
 * @example
 * const revived: RunRevivedBody = {
 *   type: 'run-revived', ordinal: 1, maxRevivals: 3, afterSeq: 13,
 *   interrupted: ['call-3'], completedUnpersisted: [], orphaned: [],
 * };
 */
export interface RunRevivedBody {
  type: 'run-revived';
  /** 1 for the first revival of this transcript, 2 for the second, … */
  ordinal: number;
  maxRevivals: number;
  /** The seq of the last record that existed when the revival decided what to repair. */
  afterSeq: number;
  /** Call ids answered as interrupted, settled as completed-unpersisted, and as orphaned. */
  interrupted: string[];
  completedUnpersisted: string[];
  orphaned: string[];
  /**
   * Format 2: every call whose tool's reconcile was asked, and what it answered. A call answered
   * `unknown` is in `interrupted` too; `completed` and `did-not-happen` calls are in no other list.
   */
  reconciled?: ({ callId: string } & ReconcileRecord)[];
}

/**
 * What a run's last model errors say about why it failed, and so whether a person is likely
 * needed before a revival can succeed:
 *
 * - `outage`: server errors (5xx), timeouts, connections refused or cut, streams broken off —
 *   likely to pass by itself;
 * - `rate-limited`: HTTP 429 — likely to pass, sooner if the provider said when;
 * - `auth`: HTTP 401 or 403 — a key missing, expired or without access: a person must act;
 * - `refused`: any other refusal of the request (400, 404, 413, 422, …: a model id that does not
 *   exist, a prompt too long, an option the provider rejects) — a person must look.
 *
 * @example
 * const cause: FailureCause = 'rate-limited';
 */
export type FailureCause = 'outage' | 'rate-limited' | 'auth' | 'refused';

/**
 * The run stopped because every model backend failed: a record of its own, never a message, so
 * the model never reads words it did not write. The run is revivable (docs/revival.md).
 *
 * @example
 * const failed: RunFailedBody = {
 *   type: 'run-failed', cause: 'outage', error: 'HTTP 503: Service Unavailable',
 *   backend: 1, model: 'openai.chat:gpt-5', attempts: 4,
 * };
 */
export interface RunFailedBody {
  type: 'run-failed';
  cause: FailureCause;
  /** The last error, one line (at most 500 characters), with its HTTP status when it had one. */
  error: string;
  /** The backend that gave that error: its place in the run's list, from 1. */
  backend: number;
  /** That backend as `provider:modelId`, as far as it is known. */
  model: string;
  /** Model calls made for the turn that failed, across every backend and round. */
  attempts: number;
  /** How long the provider asked to wait before trying again (`retry-after`), when it said. */
  retryAfterMs?: number;
}

/**
 * The run stopped at a safe point because it was asked to (`run.abort(reason)`; the CLI asks
 * on SIGINT and SIGTERM). Calls left in flight stay open for revival to answer as interrupted.
 *
 * @example
 * const stopped: RunStoppedBody = { type: 'run-stopped', reason: 'SIGTERM' };
 */
export interface RunStoppedBody {
  type: 'run-stopped';
  /** Why, as the one who stopped the run said (`SIGINT`, `SIGTERM`, a caller's reason). */
  reason: string;
}

/**
 * A summary of everything before it, so that a reader can start from the last checkpoint
 * instead of the first line. Its `state` is opaque to this layer's validation beyond being an
 * object; its meaning is defined by {@link ../transcript/tail-state.ts}.
 *
 * @example
 * const last = records.findLast((record) => record.type === 'checkpoint') as CheckpointBody | undefined;
 * const state = last === undefined ? null : tailStateFromJson(last.state);
 */
export interface CheckpointBody {
  type: 'checkpoint';
  state: JsonObject;
}

/**
 * A record of a type this version does not know: kept and ignored.
 *
 * @example
 * const note: UnknownBody = { type: 'x-future-note', text: 'written by a newer version' };
 */
export interface UnknownBody {
  type: string;
  [key: string]: JsonValue | undefined;
}

/**
 * Any known record body (what a caller appends).
 *
 * @example
 * const body: RecordBody = { type: 'tool-settled', callId: 'call-1', status: 'completed' };
 * await session.append(body);
 */
export type RecordBody =
  | SessionMetaBody
  | MessageBody
  | ToolDispatchedBody
  | ToolSettledBody
  | CompactionBody
  | RunRevivedBody
  | RunFailedBody
  | RunStoppedBody
  | CheckpointBody;

/**
 * A record as read from or written to a transcript.
 *
 * @example
 * for await (const record of readRecords('runs/a.jsonl')) console.log(record.seq, record.type);
 */
export type TranscriptRecord = RecordHeader & RecordBody;

/**
 * A record of a type this reader does not know.
 *
 * @example
 * const foreign = records.filter((record) => 'unknown' in record); // a newer writer's: kept, skipped
 */
export type ForeignRecord = RecordHeader & UnknownBody & { unknown: true };

/**
 * Narrow a record to one type.
 *
 * @example
 * const meta = records[0] as RecordOf<'session-meta'>;
 * console.log(meta.agentId);
 */
export type RecordOf<T extends RecordBody['type']> = RecordHeader &
  Extract<RecordBody, { type: T }>;

/**
 * The record types this version knows.
 *
 * @example
 * RECORD_TYPES.has('x-future-note'); // false: read as a ForeignRecord, kept and ignored
 */
export const RECORD_TYPES: ReadonlySet<string> = new Set([
  'session-meta',
  'message',
  'tool-dispatched',
  'tool-settled',
  'compaction',
  'run-revived',
  'run-failed',
  'run-stopped',
  'checkpoint',
]);

/**
 * The format version a record is written with: 2 when it carries a member format 1 lacks (a
 * dispatch's `idempotencyKey`, a message's `extras.reconcile`, an envelope's `reconciled`, a
 * checkpoint whose state holds either), else 1 — so a transcript that uses nothing new reads
 * with every reader, and a reader of format 1 refuses, naming the version and the line, the
 * first record it would misread.
 *
 * @example
 * recordVersion({ type: 'tool-settled', callId: 'call-1', status: 'completed' }); // 1
 */
export function recordVersion(body: RecordBody): number {
  switch (body.type) {
    case 'tool-dispatched':
      return body.idempotencyKey === undefined ? 1 : 2;
    case 'message':
      return body.extras?.reconcile === undefined ? 1 : 2;
    case 'run-revived':
      return body.reconciled === undefined ? 1 : 2;
    case 'checkpoint': {
      // The open dispatches a checkpoint carries hold the keys and answers of their records.
      const open = JSON.stringify(body.state.open ?? []);
      return open.includes('"idempotencyKey"') || open.includes('"resultReconciled"') ? 2 : 1;
    }
    default:
      return 1;
  }
}

/**
 * Agent ids that may become file names. Nothing from model output becomes a path unchecked.
 * {@link isAgentId} also refuses `..` inside an id.
 *
 * @example
 * AGENT_ID_PATTERN.test('worker-call_s1'); // true
 */
export const AGENT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * True when `id` is a safe agent id (and so a safe file name).
 *
 * @example
 * isAgentId('researcher-1'); // true
 * isAgentId('../etc'); // false
 */
export function isAgentId(id: string): boolean {
  return AGENT_ID_PATTERN.test(id) && id !== '.' && id !== '..' && !id.includes('..');
}
