/**
 * `llm-agent-revival/transcript`: the crash-safe transcript — its format, its one writer and its
 * readers. It imports no model library. The machinery under them (the line codec, the scanner,
 * the writer lock, the tail-state fold, the pairing rules) is not part of the API: a transcript
 * is read through `peek`, `readRecords`, `scanRecords` and `conversationView`, and written
 * through `Session`. docs/architecture.md ("The public surface") gives the reason for each name.
 *
 * @example
 * import { Session, peek } from 'llm-agent-revival/transcript';
 *
 * @module
 */
// The FileSystem seam (tests and wrappers substitute it); the types of its arguments and
// answers are read from its methods.
export { type FileSystem, nodeFileSystem } from './file-system.ts';
// The readers: a quick look, every record, a stream of records with the file's classification,
// the conversation as a model saw it.
export { type PeekResult, peek } from './peek.ts';
export { readRecords } from './read-records.ts';
export { type ScanResult, scanRecords, type UnreadableReason } from './scan-transcript.ts';
export { conversationView, type ViewMessage } from './conversation-view.ts';
// The format: what a transcript holds is part of the API. A message's parts are one union
// (`ContentPart`, narrowed by `type`); each record is named through `RecordOf<'type'>` rather
// than one name per body; `RecordBody` is what `Session.append` takes.
export {
  FORMAT_VERSION,
  type JsonValue,
  type ContentPart,
  type Message,
  type Idempotency,
  type RecordBody,
  type TranscriptRecord,
  type ForeignRecord,
  type RecordOf,
  RECORD_TYPES,
  isAgentId,
} from './records.ts';
// The one writer, and its one error.
export {
  type Durability,
  Session,
  type SessionMeta,
  type SessionOpenOptions,
  type SessionOptions,
} from './session.ts';
export { TranscriptError, type TranscriptErrorCode } from './transcript-error.ts';
// What a checkpoint holds, and how a run stopped (and whether a person must act first).
export type { TailState } from './tail-state.ts';
export { needsPerson, type RunHalt } from './run-halt.ts';
