/**
 * `llm-agent-revival/transcript`: the crash-safe transcript — its format, its one writer and its
 * readers. It imports no model library. The machinery under them (the line codec, the scanner,
 * the writer lock, the tail-state fold, the pairing rules) is not part of the API: a transcript
 * is read through `peek`, `readRecords`, `scanRecords` and `conversationView`, and written
 * through `Session`.
 *
 * @example
 * import { Session, peek } from 'llm-agent-revival/transcript';
 *
 * @module
 */
export {
  type FileIdentity,
  type FileSystem,
  nodeFileSystem,
  type OpenMode,
} from './file-system.ts';
export { type PeekResult, peek } from './peek.ts';
export { readRecords } from './read-records.ts';
// The format's types: what a transcript holds is part of the API. The bodies of the records
// only the library writes (checkpoints, compactions, revivals, failures, stops) are named
// through `RecordOf<'type'>` rather than one name each.
export {
  FORMAT_VERSION,
  type JsonValue,
  type JsonObject,
  type Role,
  type TextPart,
  type ReasoningPart,
  type ToolCallPart,
  type ToolResultPart,
  type ContentPart,
  type Message,
  type Idempotency,
  type SettleStatus,
  type ParentLink,
  type SessionMetaBody,
  type MessageBody,
  type ToolDispatchedBody,
  type ToolSettledBody,
  type RecordBody,
  type TranscriptRecord,
  type ForeignRecord,
  type RecordOf,
  RECORD_TYPES,
  AGENT_ID_PATTERN,
  isAgentId,
} from './records.ts';
export {
  type LineInfo,
  MAX_LINE_BYTES,
  type ScannedRecord,
  type ScanOptions,
  type ScanResult,
  scanRecords,
  scanTranscript,
  type UnreadableReason,
} from './scan-transcript.ts';
export {
  type Durability,
  Session,
  type SessionMeta,
  type SessionOpenOptions,
  type SessionOptions,
} from './session.ts';
export { needsPerson, type RunHalt } from './run-halt.ts';
export { TranscriptError, type TranscriptErrorCode } from './transcript-error.ts';
export type { TailState } from './tail-state.ts';
export type { LockHolder } from './writer-lock.ts';
export { conversationView, type ViewMessage } from './conversation-view.ts';
